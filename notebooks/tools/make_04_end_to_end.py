"""Write notebooks/04_end_to_end.ipynb (run from the repository root)."""
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

MD, CODE = new_markdown_cell, new_code_cell
cells = [
    MD("# 4. End-to-end model execution\n\n"
       "So far we wrote and scheduled single kernels. A model is many kernels glued "
       "together: the **graph IR** (Relax) says which kernel runs on which tensors, and "
       "the **virtual machine** runs it. We take the hand-written digits classifier of "
       "`datasets/` (an MLP 64 -> 128 -> 10 trained with numpy) and run it three ways: "
       "kernels written in TVMScript, library functions from Python, and an `nn.Module` "
       "that the compiler lowers and fuses by itself."),
    CODE("import time\nimport numpy as np\nimport mlcbench as tvm\n"
         "from mlcbench import relax, datasets\n"
         "from mlcbench.script import ir as I, relax as R, tir as T"),
    MD("## The data and the numpy model\n\n360 test images of 8x8 pixels, flattened to "
       "64 features; the numpy forward is our reference."),
    CODE("_, _, x_test, y_test = datasets.load_digits(flat=True)\n"
         "params = datasets.load_mlp_params()\n"
         "expected = datasets.mlp_forward(x_test, params)\n"
         "print(x_test.shape, {k: v.shape for k, v in params.items()})\n"
         "print('numpy accuracy:', (expected.argmax(1) == y_test).mean())"),
    MD("## The model in TVMScript: `R.call_tir`\n\nEach layer is a `T.prim_func` in "
       "destination-passing style (it writes into its last argument). The Relax function "
       "`main` allocates nothing by itself: `R.call_tir` says \"make an output of this "
       "shape, and let the kernel fill it\"."),
    CODE('''@I.ir_module
class MyModule:
    @T.prim_func
    def linear0(X: T.Buffer((360, 64), "float32"), W: T.Buffer((128, 64), "float32"),
                B: T.Buffer((128,), "float32"), Z: T.Buffer((360, 128), "float32")):
        T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
        for i, j, k in T.grid(360, 128, 64):
            with T.block("Z"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Z[vi, vj] = B[vj]
                Z[vi, vj] = Z[vi, vj] + X[vi, vk] * W[vj, vk]

    @T.prim_func
    def relu0(X: T.Buffer((360, 128), "float32"), Y: T.Buffer((360, 128), "float32")):
        T.func_attr({"global_symbol": "relu0", "tir.noalias": True})
        for i, j in T.grid(360, 128):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @T.prim_func
    def linear1(X: T.Buffer((360, 128), "float32"), W: T.Buffer((10, 128), "float32"),
                B: T.Buffer((10,), "float32"), Z: T.Buffer((360, 10), "float32")):
        T.func_attr({"global_symbol": "linear1", "tir.noalias": True})
        for i, j, k in T.grid(360, 10, 128):
            with T.block("Z"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Z[vi, vj] = B[vj]
                Z[vi, vj] = Z[vi, vj] + X[vi, vk] * W[vj, vk]

    @R.function
    def main(x: R.Tensor((360, 64), "float32"), w0: R.Tensor((128, 64), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), R.Tensor((360, 128), dtype="float32"))
            lv1 = R.call_tir(cls.relu0, (lv0,), R.Tensor((360, 128), dtype="float32"))
            out = R.call_tir(cls.linear1, (lv1, w1, b1), R.Tensor((360, 10), dtype="float32"))
            R.output(out)
        return out'''),
    MD("## Build and run with the virtual machine\n\n`relax.build` compiles every kernel "
       "(with a default schedule) and the Relax function into VM code."),
    CODE('ex = relax.build(MyModule, target="llvm")\n'
         "vm = relax.VirtualMachine(ex, tvm.cpu())\n"
         'weights = [params[k] for k in ("w0", "b0", "w1", "b1")]\n'
         'logits = vm["main"](x_test, *weights).numpy()\n'
         "np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-4)\n"
         "print('accuracy:', (logits.argmax(1) == y_test).mean())"),
    MD("## Library functions: `R.call_dps_packed`\n\nA model may call code the compiler "
       "did not generate: a vendor library, or here, numpy. We register Python functions "
       "under names; they receive NDArrays and write into the last one."),
    CODE('''@tvm.register_func("env.linear", override=True)
def env_linear(x, w, b, out):
    np.from_dlpack(out)[...] = np.from_dlpack(x) @ np.from_dlpack(w).T + np.from_dlpack(b)

@tvm.register_func("env.relu", override=True)
def env_relu(x, out):
    np.maximum(np.from_dlpack(x), 0, out=np.from_dlpack(out))'''),
    CODE('''@I.ir_module
class MyModuleWithExternCall:
    @R.function
    def main(x: R.Tensor((360, 64), "float32"), w0: R.Tensor((128, 64), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w0, b0), R.Tensor((360, 128), "float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((360, 128), "float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((360, 10), "float32"))
            R.output(out)
        return out

vm_extern = relax.VirtualMachine(relax.build(MyModuleWithExternCall, "llvm"), tvm.cpu())
logits = vm_extern["main"](x_test, *weights).numpy()
print('accuracy:', (logits.argmax(1) == y_test).mean())'''),
    MD("## From an `nn.Module`: the compiler writes the kernels\n\nWriting every kernel by "
       "hand does not scale. `relax.frontend.nn` describes the model as PyTorch would; "
       "`export_tvm` turns it into Relax with high-level ops (`R.matmul`, `R.add`, ...)."),
    CODE('''from mlcbench.relax.frontend import nn

class MLP(nn.Module):
    def __init__(self):
        self.fc1 = nn.Linear(64, 128)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))

model = MLP()
model.load_state_dict({"fc1.weight": params["w0"], "fc1.bias": params["b0"],
                       "fc2.weight": params["w1"], "fc2.bias": params["b1"]})
mod, named_params = model.export_tvm(spec={"forward": {"x": nn.spec.Tensor((360, 64), "float32")}})
mod.show()'''),
    MD("## Passes: legalize, then fuse\n\n`LegalizeOps` gives every high-level op a "
       "PrimFunc; `AnnotateTIROpPattern` labels each (elementwise, injective, reduction "
       "...); `FuseOps` groups a matmul with the adds and relus after it, and `FuseTIR` "
       "merges each group into one kernel. Fewer kernels means fewer passes over memory."),
    CODE('''from mlcbench.relax.transform.legalize_ops import LegalizeOps

def kernels(mod):
    return sorted(gv.name_hint for gv, f in mod.functions.items()
                  if isinstance(f, tvm.tir.PrimFunc))

legalized = LegalizeOps()(mod)
fused = relax.get_pipeline("zero")(mod)     # LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR
print("before fusion:", kernels(legalized))
print("after fusion: ", kernels(fused))'''),
    CODE('fused["forward"].show()'),
    CODE('''from mlcbench_widgets import GraphView

view = GraphView(mod)        # the graph before | after fusion, and why each edge fused or not
print(view.kernel_counts)
print(view.text())           # in Jupyter, `view` alone draws both graphs'''),
    MD("## Build, run, check the accuracy"),
    CODE('''ex = relax.build(mod, target="llvm")        # the default pipeline fuses too
vm = relax.VirtualMachine(ex, tvm.cpu())
model_weights = [p.data for _, p in named_params]
logits = vm["forward"](x_test, *model_weights).numpy()
np.testing.assert_array_equal(logits.argmax(1), expected.argmax(1))
print('accuracy:', (logits.argmax(1) == y_test).mean())'''),
    MD("## Memory: intermediates share storage\n\n`StaticPlanBlockMemory` lets a tensor "
       "reuse the storage of one that is dead. `estimate_memory_usage` reports what the "
       "plan saves (here for the unfused module, where there are more intermediates)."),
    CODE("print(relax.analysis.estimate_memory_usage(legalized))"),
    MD("## Timing\n\nThe numbers vary from run to run and machine to machine, so the "
       "three programs take turns for several rounds after a short pause "
       "(`mlcbench.runtime.timing.compare`); each keeps its best round, and a program whose "
       "two best rounds differ by more than 20% is flagged *unsteady* (a busy machine: "
       "rerun). Ratios read \"x faster than numpy\" or \"x slower than numpy\"."),
    CODE('''from mlcbench.runtime import timing

unfused_vm = relax.VirtualMachine(relax.build(legalized, "llvm", pipeline="vm_lowering"), tvm.cpu())
inputs = [tvm.nd.array(x_test)] + [tvm.nd.array(w.numpy()) for w in model_weights]
times = timing.compare({"fused": timing.kernel(vm, "forward", *inputs),
                        "unfused": timing.kernel(unfused_vm, "forward", *inputs),
                        "numpy": timing.call(lambda: datasets.mlp_forward(x_test, params))},
                       rounds=5, min_repeat_ms=20, settle_ms=50)
for name in ("fused", "unfused"):
    print(times.describe(name, "numpy"))'''),
    MD("## What we saw\n\n* A Relax function glues kernels: `R.call_tir` for generated "
       "code, `R.call_dps_packed` for library code.\n* `relax.build` + "
       "`relax.VirtualMachine` run the whole model.\n* From an `nn.Module`, passes "
       "legalize and fuse the ops: fewer kernels, same answers."),
]
nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                        "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "notebooks/04_end_to_end.ipynb")
