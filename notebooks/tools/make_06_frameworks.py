"""Write notebooks/06_frameworks.ipynb (run from the repository root)."""
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

MD, CODE = new_markdown_cell, new_code_cell


def SETUP(source):
    """A cell the exercise tests run too (tests/notebooks/test_ch06_exercises.py)."""
    return new_code_cell(source, metadata={"tags": ["exercise-setup"]})


EXERCISE_2_TARGET = '''@I.ir_module
class Exercise2Target:
    @T.prim_func
    def te_matmul(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 16), "float32"),
                  matmul: T.Buffer((4, 16), "float32")):
        T.func_attr({"global_symbol": "te_matmul", "tir.noalias": True})
        for i, j, k in T.grid(4, 16, 8):
            with T.block("matmul"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    matmul[v_i, v_j] = T.float32(0)
                matmul[v_i, v_j] = matmul[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]

    @T.prim_func
    def te_bias_add(A: T.Buffer((4, 16), "float32"), B: T.Buffer((16,), "float32"),
                    bias_add: T.Buffer((4, 16), "float32")):
        T.func_attr({"global_symbol": "te_bias_add", "tir.noalias": True})
        for i, j in T.grid(4, 16):
            with T.block("bias_add"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                bias_add[v_i, v_j] = A[v_i, v_j] + B[v_j]

    @T.prim_func
    def te_relu(A: T.Buffer((4, 16), "float32"), relu: T.Buffer((4, 16), "float32")):
        T.func_attr({"global_symbol": "te_relu", "tir.noalias": True})
        for i0, i1 in T.grid(4, 16):
            with T.block("relu"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                relu[v_i0, v_i1] = T.max(A[v_i0, v_i1], T.float32(0))

    @R.function
    def main(x: R.Tensor((4, 8), "float32"), w: R.Tensor((8, 16), "float32"),
             b: R.Tensor((16,), "float32")) -> R.Tensor((4, 16), "float32"):
        cls = Exercise2Target
        with R.dataflow():
            lv = R.call_tir(cls.te_matmul, (x, w), out_sinfo=R.Tensor((4, 16), "float32"))
            lv1 = R.call_tir(cls.te_bias_add, (lv, b), out_sinfo=R.Tensor((4, 16), "float32"))
            lv2 = R.call_tir(cls.te_relu, (lv1,), out_sinfo=R.Tensor((4, 16), "float32"))
            gv = lv2
            R.output(gv)
        return gv'''

cells = [
    MD("# 6. Integration with machine-learning frameworks\n\n"
       "So far every program we compiled was written by hand: tensor programs in "
       "TVMScript (chapters 2 and 3), and in chapter 4 a Relax function that glued them "
       "together. Nobody writes a ResNet that way. Models are written in frameworks, "
       "PyTorch above all, or exported from them to a neutral format such as ONNX, and "
       "an ML compiler earns its keep only if it can take them from there. This chapter "
       "is about that bridge: how to *construct* an `IRModule` from Python data "
       "structures instead of writing its text, and how a framework's graph becomes "
       "one.\n\n"
       "We go from the bottom up. First `relax.BlockBuilder`, the tool every importer "
       "uses to emit Relax code one binding at a time, together with `emit_te`, which "
       "turns a tensor expression into a tensor program and a call to it in one step. "
       "Then we write, in thirty lines, a translator from a `torch.fx` graph to Relax, "
       "as the MLC course does, and see that the real importers are the same idea with "
       "a longer table of operators. Finally we import a network from ONNX, check it "
       "against onnxruntime, and time both."),
    SETUP('''import numpy as np
import mlcbench as tvm
from mlcbench import relax, te, topi
from mlcbench.script import ir as I, relax as R, tir as T'''),
    CODE("import time\nimport torch\nimport torch.fx as fx\n"
         "from IPython.display import HTML, display\n"
         "from mlcbench.runtime import timing"),
    MD("## Tensor expressions, once more\n\n"
       "Chapter 2 introduced tensor expressions (TE): a compact way to say what each "
       "output element is, as a function of its indices. `te.compute((n, m), lambda i, "
       "j: ...)` describes a tensor of shape `(n, m)`; `te.reduce_axis` with `te.sum` "
       "describes a reduction. A TE says nothing about loop order or memory; "
       "`te.create_prim_func` turns it into a TensorIR `PrimFunc` with the obvious loop "
       "nest. Here are the two operators we will use throughout: a matrix multiply, and "
       "a ReLU written with `lambda *i` so that it works for any number of dimensions. "
       "The third one adds a bias vector along the last axis of a matrix."),
    SETUP('''def te_matmul(A, B):
    assert A.shape[1] == B.shape[0]
    n, m = A.shape[0], B.shape[1]
    k = te.reduce_axis((0, A.shape[1]), name="k")
    return te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")


def te_relu(A):
    return te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")


def te_bias_add(A, B):
    return te.compute(A.shape, lambda i, j: A[i, j] + B[j], name="bias_add")'''),
    CODE('''A = te.placeholder((4, 8), name="A")
B = te.placeholder((8, 16), name="B")
te.create_prim_func([A, B, te_matmul(A, B)]).show()'''),
    MD("## Building a Relax function with the BlockBuilder\n\n"
       "A Relax function is a list of bindings inside scopes: the function itself, and "
       "a dataflow block inside it. `relax.BlockBuilder` builds it the way you would "
       "write it, with Python `with` statements for the scopes:\n\n"
       "* `bb.function(\"main\", [x, w])` opens a function with the given parameters "
       "(each a `relax.Var` with its shape and dtype in a `TensorStructInfo`);\n"
       "* `bb.dataflow()` opens a dataflow block, where every binding is side-effect "
       "free and can be reordered or fused by the compiler;\n"
       "* `bb.emit_te(f, *args)` calls the TE function `f` on placeholders shaped like "
       "the Relax arguments, turns the result into a `PrimFunc`, adds it to the module, "
       "and emits `R.call_tir` to it; it returns the new Relax variable;\n"
       "* `bb.emit_output(v)` marks a variable as visible outside the dataflow block, "
       "and `bb.emit_func_output(v)` closes the function returning it.\n\n"
       "At the end, `bb.get()` returns the `IRModule`."),
    CODE('''bb = relax.BlockBuilder()
x = relax.Var("x", relax.TensorStructInfo((4, 8), "float32"))
w = relax.Var("w", relax.TensorStructInfo((8, 16), "float32"))
with bb.function("main", [x, w]):
    with bb.dataflow():
        lv0 = bb.emit_te(te_matmul, x, w)
        lv1 = bb.emit_te(te_relu, lv0)
        gv = bb.emit_output(lv1)
    bb.emit_func_output(gv)
MyModule = bb.get()
MyModule.show()'''),
    MD("The printout is the same kind of module we wrote by hand in chapter 4: two "
       "`PrimFunc`s named after the TE functions, and a `main` that calls them with "
       "`R.call_tir`, each output's shape inferred from the tensor expression. Because "
       "it is an ordinary `IRModule`, everything we know applies: we can schedule its "
       "kernels, build it, and run it with the virtual machine."),
    CODE('''vm = relax.VirtualMachine(relax.build(MyModule, target="llvm"), tvm.cpu())
x_np = np.random.rand(4, 8).astype("float32")
w_np = np.random.rand(8, 16).astype("float32")
out = vm["main"](tvm.nd.array(x_np), tvm.nd.array(w_np)).numpy()
np.testing.assert_allclose(out, np.maximum(x_np @ w_np, 0), rtol=1e-5)
print("matches numpy:", out.shape)'''),
    MD("`emit_te` is one of two ways to emit an operator. The other is `bb.emit` with a "
       "*high-level* Relax operator, such as `relax.op.matmul(x, w)`. Then the module "
       "holds `R.matmul` rather than a call to a kernel, and `LegalizeOps` supplies the "
       "kernel later. High-level operators are what the compiler's graph passes "
       "understand best (fusion rules, constant folding, pattern rewrites all look for "
       "them), so importers prefer them; `emit_te` is the tool for operators the library "
       "does not have, or when you want the kernel exactly as you wrote it."),
    MD("## From PyTorch: a translator for `torch.fx` graphs\n\n"
       "`torch.fx` traces a PyTorch module by running its `forward` with proxy "
       "objects and recording every call. The result is a graph whose nodes have an "
       "`op` kind: `placeholder` (an input), `get_attr` (a parameter), `call_function` "
       "(e.g. `torch.matmul`), `call_module` (a submodule, e.g. an `nn.Linear`) and "
       "`output`. Here is a small model and its graph."),
    CODE('''class MyModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(128, 128))

    def forward(self, x):
        x = torch.matmul(x, self.weight)
        x = torch.relu(x)
        return x

torch.manual_seed(0)
model = MyModel()
fx_module = fx.symbolic_trace(model)
print(fx_module.graph)'''),
    MD("Translating this graph is a walk over its nodes in order, keeping a map "
       "`node_map` from each fx node to the Relax expression that computes it. "
       "Placeholders become function parameters; parameters become constants "
       "(`relax.const` with the tensor's values); calls are looked up in two tables, "
       "one for functions and one for module types, whose entries emit Relax code with "
       "the BlockBuilder. This is the translator of the MLC course; note "
       "`bb.function(\"main\")` without parameters, which are then given to "
       "`emit_func_output` once the walk has found them."),
    SETUP('''def map_param(param):
    return relax.const(param.data.cpu().numpy(),
                       relax.TensorStructInfo(param.data.shape, "float32"))


def fetch_attr(fx_mod, target: str):
    attr = fx_mod
    for atom in target.split("."):
        attr = getattr(attr, atom)
    return attr


def from_fx(fx_mod, input_shapes, call_function_map, call_module_map):
    input_index = 0
    node_map = {}
    named_modules = dict(fx_mod.named_modules())
    bb = relax.BlockBuilder()
    fn_inputs = []
    fn_output = None
    with bb.function("main"):
        with bb.dataflow():
            for node in fx_mod.graph.nodes:
                if node.op == "placeholder":
                    shape = input_shapes[input_index]
                    input_index += 1
                    input_var = relax.Var("input", relax.TensorStructInfo(shape, "float32"))
                    fn_inputs.append(input_var)
                    node_map[node] = input_var
                elif node.op == "get_attr":
                    node_map[node] = map_param(fetch_attr(fx_mod, node.target))
                elif node.op == "call_function":
                    node_map[node] = call_function_map[node.target](bb, node_map, node)
                elif node.op == "call_module":
                    named_module = named_modules[node.target]
                    node_map[node] = call_module_map[type(named_module)](
                        bb, node_map, node, named_module)
                elif node.op == "output":
                    output = node_map[node.args[0]]
                    assert fn_output is None
                    fn_output = bb.emit_output(output)
        bb.emit_func_output(output, fn_inputs)
    return bb.get()'''),
    MD("The tables map `torch.matmul` and `torch.relu` to our two tensor expressions. "
       "Each entry receives the builder, the node map and the node; it looks up the "
       "node's arguments in the map and emits one binding."),
    CODE('''def map_matmul(bb, node_map, node: fx.Node):
    A = node_map[node.args[0]]
    B = node_map[node.args[1]]
    return bb.emit_te(te_matmul, A, B)


def map_relu(bb, node_map, node: fx.Node):
    return bb.emit_te(te_relu, node_map[node.args[0]])


MyModule = from_fx(fx_module, input_shapes=[(1, 128)],
                   call_function_map={torch.matmul: map_matmul, torch.relu: map_relu},
                   call_module_map={})
MyModule.show()'''),
    MD("The weight became a constant inside the module (`metadata[...]` stands for its "
       "128x128 values, too many to print). Run it and compare with PyTorch on the "
       "same input. The tolerance allows for the different order in which the two "
       "programs sum the 128 products of each output element."),
    CODE('''vm = relax.VirtualMachine(relax.build(MyModule, target="llvm"), tvm.cpu())
data = np.random.rand(1, 128).astype("float32")
tvm_out = vm["main"](tvm.nd.array(data)).numpy()
torch_out = model(torch.from_numpy(data)).detach().numpy()
tvm.testing.assert_allclose(tvm_out, torch_out, rtol=1e-4, atol=1e-4)
print("matches PyTorch, max difference", np.abs(tvm_out - torch_out).max())'''),
    MD("### Modules, and high-level operators\n\n"
       "Real models are built from `nn.Linear`, `nn.Conv2d` and the like: `call_module` "
       "nodes. Their entries get the module object too, so they can read its "
       "parameters. Here `nn.Linear` and `nn.ReLU` map to *high-level* Relax operators "
       "with `bb.emit`: `relax.op.linear(x, w, b)` computes `x @ w.T + b` as PyTorch "
       "defines it."),
    CODE('''def map_nn_linear_op(bb, node_map, node, nn_mod):
    x = node_map[node.args[0]]
    return bb.emit(relax.op.linear(x, map_param(nn_mod.weight), map_param(nn_mod.bias)))


def map_nn_relu_op(bb, node_map, node, nn_mod):
    return bb.emit(relax.op.nn.relu(node_map[node.args[0]]))


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear0 = torch.nn.Linear(784, 128)
        self.relu = torch.nn.ReLU()
        self.linear1 = torch.nn.Linear(128, 10)

    def forward(self, x):
        return self.linear1(self.relu(self.linear0(x)))

mlp = MLP().eval()
MLPHighLevel = from_fx(fx.symbolic_trace(mlp), input_shapes=[(1, 784)], call_function_map={},
                       call_module_map={torch.nn.Linear: map_nn_linear_op,
                                        torch.nn.ReLU: map_nn_relu_op})
MLPHighLevel.show()'''),
    MD("`relax.op.linear` expanded into a transpose, a matmul and an add: high-level "
       "operators are often defined in terms of a few more basic ones. The module has "
       "no kernels yet; `LegalizeOps` gives each operator one, and the fusion passes of "
       "chapter 4 merge them. That is the usual shape of an import: high-level "
       "operators first, kernels later, so that the graph passes see the structure."),
    CODE('''from mlcbench_widgets import GraphView

view = GraphView(MLPHighLevel)
print(view.kernel_counts)
display(HTML(view.render("after")))'''),
    MD("## The importer: `relax.frontend.torch.from_fx`\n\n"
       "mlcbench ships the same translator with a table that covers the common PyTorch "
       "operators and modules (see `mlcbench/relax/frontend/torch/`), and takes the "
       "input shapes and dtypes as a list. Its output is the high-level module we just "
       "built by hand, with the weights as constants."),
    CODE('''from mlcbench.relax.frontend.torch import from_fx as torch_from_fx

batch = 64
mlp_mod = torch_from_fx(fx.symbolic_trace(mlp), [((batch, 784), "float32")])
mlp_mod.show()'''),
    MD("Now build it and compare with PyTorch, in answers and in time. The timing "
       "follows the rule of this course (`mlcbench.runtime.timing.compare`): several "
       "rounds, *interleaved* (mlcbench, PyTorch, mlcbench, PyTorch ...) so a burst of "
       "load on the machine hits both, the best round of each, and a mark when the two "
       "best rounds of a side differ by more than 20%. Ratios read \"x faster than "
       "PyTorch\" or \"x slower than PyTorch\". PyTorch's `Linear` calls a tuned BLAS library, so this is a "
       "strong reference."),
    CODE('''mlp_vm = relax.VirtualMachine(relax.build(mlp_mod, target="llvm"), tvm.cpu())
images = np.random.rand(batch, 784).astype("float32")
images_nd, images_torch = tvm.nd.array(images), torch.from_numpy(images)
tvm_out = mlp_vm["main"](images_nd).numpy()
with torch.no_grad():
    torch_out = mlp(images_torch).numpy()
    np.testing.assert_allclose(tvm_out, torch_out, rtol=1e-4, atol=1e-4)
    result = timing.compare({"mlcbench": timing.kernel(mlp_vm, "main", images_nd),
                             "PyTorch": timing.call(lambda: mlp(images_torch))})
print(f"batch {batch}:", result.describe("mlcbench", "PyTorch"))'''),
    MD("## Writing the model in mlcbench: `relax.frontend.nn`\n\n"
       "A third way skips the framework altogether: `relax.frontend.nn` offers "
       "PyTorch-like building blocks whose `forward` emits Relax directly (chapter 4 "
       "used it for the digits model). Its parameters are not baked in as constants: "
       "`export_tvm` returns them separately, and they become inputs of the function, "
       "which is how large models are usually compiled (the weights stay in a file; the "
       "compiled code does not change when they do). We load PyTorch's weights into it "
       "and check that the two agree."),
    CODE('''from mlcbench.relax.frontend import nn

class NativeMLP(nn.Module):
    def __init__(self):
        self.linear0 = nn.Linear(784, 128)
        self.relu = nn.ReLU()
        self.linear1 = nn.Linear(128, 10)

    def forward(self, x):
        return self.linear1(self.relu(self.linear0(x)))

native = NativeMLP()
native.load_state_dict({k: v.detach().numpy() for k, v in mlp.state_dict().items()})
native_mod, native_params = native.export_tvm(
    spec={"forward": {"x": nn.spec.Tensor((batch, 784), "float32")}})
print([name for name, _ in native_params])
native_vm = relax.VirtualMachine(relax.build(native_mod, "llvm"), tvm.cpu())
native_out = native_vm["forward"](images_nd, *[p.data for _, p in native_params]).numpy()
np.testing.assert_allclose(native_out, torch_out, rtol=1e-4, atol=1e-4)
print("nn.Module agrees with PyTorch")'''),
    MD("## From ONNX\n\n"
       "ONNX is a file format for model graphs that most frameworks export to. An ONNX "
       "model is a list of nodes (`Conv`, `Relu`, `Concat` ...), each with named inputs "
       "and outputs, plus initializers holding the weights. "
       "`relax.frontend.onnx.from_onnx` translates node by node, exactly like our fx "
       "translator, with one converter per operator (and per range of ONNX versions, "
       "since operators change over time).\n\n"
       "The `onnx` wheel ships small versions of classic image networks for its own "
       "tests; `relay.testing.light_model_case` loads one with a test input and the "
       "output stored beside it. These \"light\" models keep the full architecture but "
       "make every weight a constant (`ConstantOfShape`), which keeps the file tiny. "
       "We import SqueezeNet and count its operators."),
    CODE('''import collections
import onnx
import onnxruntime
from mlcbench.relax.frontend.onnx import from_onnx
from mlcbench.relay.testing import light_model_case

squeezenet, inputs, stored = light_model_case("squeezenet")
print(collections.Counter(node.op_type for node in squeezenet.graph.node))
squeezenet_mod = from_onnx(squeezenet)
ops = collections.Counter(binding.value.op.name for binding in
                          squeezenet_mod["main"].body.blocks[0].bindings
                          if isinstance(binding.value, relax.Call) and isinstance(binding.value.op, tvm.ir.Op))
print(ops)'''),
    MD("The constant weights were computed during import (`ConstantOfShape` has no "
       "Relax counterpart left), and each ONNX `Conv` with a bias became three Relax "
       "operators: the convolution, a reshape of the bias to `(channels, 1, 1)`, and a "
       "broadcasting add; the two other reshapes take the scores to two "
       "dimensions for the softmax, and back. Compiling all 26 convolutions takes a while on a small machine, so we cut "
       "the network after its first *fire module* (a 1x1 \"squeeze\" convolution "
       "followed by parallel 1x1 and 3x3 \"expand\" convolutions whose outputs are "
       "concatenated), with onnx's own `Extractor`. It needs the shapes of the "
       "intermediate tensors, which ONNX shape inference adds."),
    CODE('''with_shapes = onnx.shape_inference.infer_shapes(squeezenet)
concat_outputs = [n.output[0] for n in with_shapes.graph.node if n.op_type == "Concat"]
fire2 = onnx.utils.Extractor(with_shapes).extract_model(["data_0"], [concat_outputs[0]])
print(len(fire2.graph.node), "nodes:", collections.Counter(n.op_type for n in fire2.graph.node))
fire2_mod = from_onnx(fire2)
start = time.perf_counter()
fire2_vm = relax.VirtualMachine(relax.build(fire2_mod, target="llvm"), tvm.cpu())
print(f"built in {time.perf_counter() - start:.1f} s")'''),
    MD("onnxruntime is the reference implementation of ONNX and a fast one. We run "
       "both on the same input, compare, and time them as before."),
    CODE('''data = inputs["data_0"]
session = onnxruntime.InferenceSession(fire2.SerializeToString(), providers=["CPUExecutionProvider"])
ort_out = session.run(None, {"data_0": data})[0]
data_nd = tvm.nd.array(data)
tvm_out = fire2_vm["main"](data_nd).numpy()
np.testing.assert_allclose(tvm_out, ort_out, rtol=1e-4, atol=1e-4)
print("output", tvm_out.shape, "matches onnxruntime")
result = timing.compare({"mlcbench": timing.kernel(fire2_vm, "main", data_nd),
                         "onnxruntime": timing.call(lambda: session.run(None, {"data_0": data}))})
print(result.describe("mlcbench", "onnxruntime"))'''),
    MD("These kernels use only the default schedules; onnxruntime brings hand-written "
       "convolution kernels. MetaSchedule's `tune_relax` (the tuner of chapter 5) searches schedules for every "
       "kernel of such a model, and chapter 10 compiles and tunes ONNX files from the "
       "command line.\n\n"
       "## What we saw\n\n"
       "* `relax.BlockBuilder` constructs Relax from Python: `function` and `dataflow` "
       "scopes, `emit` for high-level operators, `emit_te` for a tensor expression that "
       "becomes a `PrimFunc` plus an `R.call_tir`.\n"
       "* A framework importer walks the framework's graph and emits one binding per "
       "node, through a table from operator to emitter. Our 30-line `from_fx` is that "
       "pattern; `relax.frontend.torch.from_fx` and `relax.frontend.onnx.from_onnx` are "
       "the same with long tables.\n"
       "* Importers emit high-level operators; legalization and fusion make kernels "
       "later, so graph-level optimizations see the model's structure.\n"
       "* `relax.frontend.nn` writes models directly, with weights as inputs.\n"
       "* Always check against the framework, and time against it fairly: interleaved "
       "repeats, best of each."),
    MD("## Exercises\n\n"
       "Each exercise has a cell to fill in and a check. Until you fill it in, the check "
       "says \"not attempted yet\"; a wrong answer raises an error that says what "
       "differs. Reference solutions are in `tests/notebooks/test_ch06_exercises.py`."),
    SETUP('''import torch
import torch.fx as fx


class SmallMLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc0 = torch.nn.Linear(16, 32)
        self.act = torch.nn.ReLU()
        self.fc1 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc1(self.act(self.fc0(x)))


def check_exercise_1(map_nn_linear_te, map_nn_relu_te):
    """True when the two maps translate SmallMLP with emit_te only (no high-level op)."""
    torch.manual_seed(1)
    model = SmallMLP().eval()
    try:
        mod = from_fx(fx.symbolic_trace(model), [(3, 16)], {},
                      {torch.nn.Linear: map_nn_linear_te, torch.nn.ReLU: map_nn_relu_te})
    except NotImplementedError:
        print("Exercise 1: not attempted yet")
        return False
    calls = [b.value for b in mod["main"].body.blocks[0].bindings if isinstance(b.value, relax.Call)]
    high_level = sorted({c.op.name for c in calls if c.op.name != "relax.call_tir"})
    assert not high_level, f"expected only R.call_tir (emit_te), found {high_level}"
    x = np.random.default_rng(0).random((3, 16), dtype="float32")
    got = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())["main"](x).numpy()
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    print(f"Exercise 1: correct, {len(calls)} kernels, output matches PyTorch")
    return True'''),
    MD("### Exercise 1: `nn.Linear` with tensor expressions\n\n"
       "Write `map_nn_linear_te` and `map_nn_relu_te` for the course translator "
       "`from_fx` above, using `bb.emit_te` only (no `relax.op`). `nn.Linear` computes "
       "`x @ weight.T + bias`: `topi.nn.dense(x, w)` computes `x @ w.T`, and "
       "`te_bias_add` adds the bias; `map_param` turns the module's parameters into "
       "constants that `emit_te` accepts. The check translates a two-layer `SmallMLP`, "
       "verifies that every call is an `R.call_tir`, and compares with PyTorch."),
    CODE('''def map_nn_linear_te(bb, node_map, node, nn_mod):
    # your code here: return the variable of the last binding you emit
    raise NotImplementedError


def map_nn_relu_te(bb, node_map, node, nn_mod):
    raise NotImplementedError


exercise_1_done = check_exercise_1(map_nn_linear_te, map_nn_relu_te)'''),
    SETUP(EXERCISE_2_TARGET + '''


def check_exercise_2(build_module):
    """True when build_module() returns a module structurally equal to Exercise2Target."""
    try:
        mod = build_module()
    except NotImplementedError:
        print("Exercise 2: not attempted yet")
        return False
    tvm.ir.assert_structural_equal(mod, Exercise2Target)
    print("Exercise 2: correct, the module is Exercise2Target")
    return True'''),
    MD("### Exercise 2: a BlockBuilder program\n\n"
       "Write `build_module()`, which uses a `relax.BlockBuilder` and `emit_te` with "
       "`te_matmul`, `te_bias_add` and `te_relu` to construct exactly "
       "`Exercise2Target` above: `main(x, w, b)` returning `relu(x @ w + b)` inside a "
       "dataflow block (`Exercise2Target.show()` prints it)."),
    CODE('''def build_module():
    # your BlockBuilder code here; return bb.get()
    raise NotImplementedError


exercise_2_done = check_exercise_2(build_module)'''),
    SETUP('''class Gate(torch.nn.Module):
    """forward(x, y) = sigmoid(x + y) * x: functions, no modules."""
    def forward(self, x, y):
        return torch.mul(torch.sigmoid(torch.add(x, y)), x)


def check_exercise_3(call_function_map):
    """True when call_function_map lets from_fx translate Gate; compares with PyTorch."""
    shape = (2, 5)
    try:
        mod = from_fx(fx.symbolic_trace(Gate()), [shape, shape], call_function_map, {})
    except NotImplementedError:
        print("Exercise 3: not attempted yet")
        return False
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(shape).astype("float32") for _ in range(2))
    got = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())["main"](x, y).numpy()
    want = Gate()(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    print("Exercise 3: correct, Gate matches PyTorch")
    return True'''),
    MD("### Exercise 3: functions\n\n"
       "`Gate.forward(x, y)` is `sigmoid(x + y) * x`, written with `torch.add`, "
       "`torch.sigmoid` and `torch.mul`. Fill `exercise_3_map`, a `call_function_map` "
       "from those three torch functions to emitters, so that `from_fx` translates "
       "`Gate`. Use high-level operators this time (`relax.op.add`, `relax.op.sigmoid`, "
       "`relax.op.multiply`)."),
    CODE('''def not_done(bb, node_map, node):
    raise NotImplementedError

exercise_3_map = {torch.add: not_done, torch.sigmoid: not_done, torch.mul: not_done}

exercise_3_done = check_exercise_3(exercise_3_map)'''),
]
nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                        "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "notebooks/06_frameworks.ipynb")
