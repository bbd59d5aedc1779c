"""End to end: the trained digits MLP and CNN through the graph IR, its passes and the VM.

Three ways to write the same model, as the MLC course's chapter on end-to-end model
execution does: TVMScript calling hand-written PrimFuncs with ``R.call_tir``; library
functions registered from Python (numpy) and called with ``R.call_dps_packed``; and an
``nn.Module`` exported, legalized, fused and built. Each one classifies the whole test
split (360 images, one batch) exactly as the numpy reference of ``mlcbench.datasets``.
"""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import datasets, relax
from mlcbench.ir.instrument import RecordingInstrument
from mlcbench.relax.frontend import nn
from mlcbench.relax.transform.annotate_tir_op_pattern import AnnotateTIROpPattern
from mlcbench.relax.transform.bind_params import BindParams
from mlcbench.relax.transform.fuse_ops import FuseOps
from mlcbench.relax.transform.fuse_tir import FuseTIR
from mlcbench.relax.transform.legalize_ops import LegalizeOps
from mlcbench.script import from_source, ir as I, relax as R, tir as T

N = 360   # the test split, run as one batch

# -- the MLP in TVMScript: hand-written kernels, weights as parameters -----------------------


@I.ir_module
class HandWrittenMLP:
    @T.prim_func
    def linear0(X: T.Buffer((N, 64), "float32"), W: T.Buffer((128, 64), "float32"),
                B: T.Buffer((128,), "float32"), Z: T.Buffer((N, 128), "float32")):
        T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
        for i, j, k in T.grid(N, 128, 64):
            with T.block("Z"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Z[vi, vj] = B[vj]
                Z[vi, vj] = Z[vi, vj] + X[vi, vk] * W[vj, vk]

    @T.prim_func
    def relu0(X: T.Buffer((N, 128), "float32"), Y: T.Buffer((N, 128), "float32")):
        T.func_attr({"global_symbol": "relu0", "tir.noalias": True})
        for i, j in T.grid(N, 128):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @T.prim_func
    def linear1(X: T.Buffer((N, 128), "float32"), W: T.Buffer((10, 128), "float32"),
                B: T.Buffer((10,), "float32"), Z: T.Buffer((N, 10), "float32")):
        T.func_attr({"global_symbol": "linear1", "tir.noalias": True})
        for i, j, k in T.grid(N, 10, 128):
            with T.block("Z"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Z[vi, vj] = B[vj]
                Z[vi, vj] = Z[vi, vj] + X[vi, vk] * W[vj, vk]

    @R.function
    def main(x: R.Tensor((N, 64), "float32"), w0: R.Tensor((128, 64), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), R.Tensor((N, 128), dtype="float32"))
            lv1 = R.call_tir(cls.relu0, (lv0,), R.Tensor((N, 128), dtype="float32"))
            out = R.call_tir(cls.linear1, (lv1, w1, b1), R.Tensor((N, 10), dtype="float32"))
            R.output(out)
        return out


# -- the CNN in TVMScript: hand-written kernels, weights bound as constants below ------------

@I.ir_module
class HandWrittenCNN:
    @T.prim_func
    def conv0(X: T.Buffer((N, 1, 8, 8), "float32"), W: T.Buffer((8, 1, 3, 3), "float32"),
              B: T.Buffer((8,), "float32"), Y: T.Buffer((N, 8, 8, 8), "float32")):
        T.func_attr({"global_symbol": "conv0", "tir.noalias": True})
        Pad = T.alloc_buffer((N, 1, 10, 10), "float32")
        for n, c, h, w in T.grid(N, 1, 10, 10):
            with T.block("Pad"):
                vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
                Pad[vn, vc, vh, vw] = T.if_then_else(
                    1 <= vh and vh < 9 and 1 <= vw and vw < 9,
                    X[vn, vc, vh - 1, vw - 1], T.float32(0))
        for n, f, y, x, c, ry, rx in T.grid(N, 8, 8, 8, 1, 3, 3):
            with T.block("Y"):
                vn, vf, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, c, ry, rx])
                with T.init():
                    Y[vn, vf, vy, vx] = B[vf]
                Y[vn, vf, vy, vx] = (Y[vn, vf, vy, vx]
                                     + Pad[vn, vc, vy + vry, vx + vrx] * W[vf, vc, vry, vrx])

    @T.prim_func
    def relu0(X: T.Buffer((N, 8, 8, 8), "float32"), Y: T.Buffer((N, 8, 8, 8), "float32")):
        T.func_attr({"global_symbol": "relu0", "tir.noalias": True})
        for n, c, h, w in T.grid(N, 8, 8, 8):
            with T.block("Y"):
                vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
                Y[vn, vc, vh, vw] = T.max(X[vn, vc, vh, vw], T.float32(0))

    @T.prim_func
    def pool0(X: T.Buffer((N, 8, 8, 8), "float32"), Y: T.Buffer((N, 8, 4, 4), "float32")):
        T.func_attr({"global_symbol": "pool0", "tir.noalias": True})
        for n, c, h, w, rh, rw in T.grid(N, 8, 4, 4, 2, 2):
            with T.block("Y"):
                vn, vc, vh, vw, vrh, vrw = T.axis.remap("SSSSRR", [n, c, h, w, rh, rw])
                with T.init():
                    Y[vn, vc, vh, vw] = T.min_value("float32")
                Y[vn, vc, vh, vw] = T.max(Y[vn, vc, vh, vw], X[vn, vc, 2 * vh + vrh, 2 * vw + vrw])

    @T.prim_func
    def flatten0(X: T.Buffer((N, 8, 4, 4), "float32"), Y: T.Buffer((N, 128), "float32")):
        T.func_attr({"global_symbol": "flatten0", "tir.noalias": True})
        for n, i in T.grid(N, 128):
            with T.block("Y"):
                vn, vi = T.axis.remap("SS", [n, i])
                Y[vn, vi] = X[vn, vi // 16, vi % 16 // 4, vi % 4]

    @T.prim_func
    def linear_relu0(X: T.Buffer((N, 128), "float32"), W: T.Buffer((64, 128), "float32"),
                     B: T.Buffer((64,), "float32"), Z: T.Buffer((N, 64), "float32")):
        T.func_attr({"global_symbol": "linear_relu0", "tir.noalias": True})
        Y = T.alloc_buffer((N, 64), "float32")
        for i, j, k in T.grid(N, 64, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = B[vj]
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(N, 64):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = T.max(Y[vi, vj], T.float32(0))

    @T.prim_func
    def linear1(X: T.Buffer((N, 64), "float32"), W: T.Buffer((10, 64), "float32"),
                B: T.Buffer((10,), "float32"), Z: T.Buffer((N, 10), "float32")):
        T.func_attr({"global_symbol": "linear1", "tir.noalias": True})
        for i, j, k in T.grid(N, 10, 64):
            with T.block("Z"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Z[vi, vj] = B[vj]
                Z[vi, vj] = Z[vi, vj] + X[vi, vk] * W[vj, vk]

    @T.prim_func
    def softmax0(X: T.Buffer((N, 10), "float32"), Y: T.Buffer((N, 10), "float32")):
        T.func_attr({"global_symbol": "softmax0", "tir.noalias": True})
        top = T.alloc_buffer((N,), "float32")
        e = T.alloc_buffer((N, 10), "float32")
        total = T.alloc_buffer((N,), "float32")
        for i, k in T.grid(N, 10):
            with T.block("top"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    top[vi] = T.min_value("float32")
                top[vi] = T.max(top[vi], X[vi, vk])
        for i, j in T.grid(N, 10):
            with T.block("e"):
                vi, vj = T.axis.remap("SS", [i, j])
                e[vi, vj] = T.exp(X[vi, vj] - top[vi])
        for i, k in T.grid(N, 10):
            with T.block("total"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    total[vi] = T.float32(0)
                total[vi] = total[vi] + e[vi, vk]
        for i, j in T.grid(N, 10):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = e[vi, vj] / total[vi]

    @R.function
    def main(x: R.Tensor((N, 1, 8, 8), "float32"), conv_w: R.Tensor((8, 1, 3, 3), "float32"),
             conv_b: R.Tensor((8,), "float32"), fc1_w: R.Tensor((64, 128), "float32"),
             fc1_b: R.Tensor((64,), "float32"), fc2_w: R.Tensor((10, 64), "float32"),
             fc2_b: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.call_tir(cls.conv0, (x, conv_w, conv_b), R.Tensor((N, 8, 8, 8), "float32"))
            lv1 = R.call_tir(cls.relu0, (lv0,), R.Tensor((N, 8, 8, 8), "float32"))
            lv2 = R.call_tir(cls.pool0, (lv1,), R.Tensor((N, 8, 4, 4), "float32"))
            lv3 = R.call_tir(cls.flatten0, (lv2,), R.Tensor((N, 128), "float32"))
            lv4 = R.call_tir(cls.linear_relu0, (lv3, fc1_w, fc1_b), R.Tensor((N, 64), "float32"))
            lv5 = R.call_tir(cls.linear1, (lv4, fc2_w, fc2_b), R.Tensor((N, 10), "float32"))
            out = R.call_tir(cls.softmax0, (lv5,), R.Tensor((N, 10), "float32"))
            R.output(out)
        return out


# -- the same models as calls of library functions (registered below, in numpy) --------------

@I.ir_module
class PackedMLP:
    @R.function
    def main(x: R.Tensor((N, 64), "float32"), w0: R.Tensor((128, 64), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w0, b0), R.Tensor((N, 128), "float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((N, 128), "float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((N, 10), "float32"))
            R.output(out)
        return out


@I.ir_module
class PackedCNN:
    @R.function
    def main(x: R.Tensor((N, 1, 8, 8), "float32"), conv_w: R.Tensor((8, 1, 3, 3), "float32"),
             conv_b: R.Tensor((8,), "float32"), fc1_w: R.Tensor((64, 128), "float32"),
             fc1_b: R.Tensor((64,), "float32"), fc2_w: R.Tensor((10, 64), "float32"),
             fc2_b: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.call_dps_packed("env.conv2d", (x, conv_w, conv_b),
                                    R.Tensor((N, 8, 8, 8), "float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((N, 8, 8, 8), "float32"))
            lv2 = R.call_dps_packed("env.max_pool2d", (lv1,), R.Tensor((N, 8, 4, 4), "float32"))
            lv3 = R.call_dps_packed("env.flatten", (lv2,), R.Tensor((N, 128), "float32"))
            lv4 = R.call_dps_packed("env.linear", (lv3, fc1_w, fc1_b), R.Tensor((N, 64), "float32"))
            lv5 = R.call_dps_packed("env.relu", (lv4,), R.Tensor((N, 64), "float32"))
            lv6 = R.call_dps_packed("env.linear", (lv5, fc2_w, fc2_b), R.Tensor((N, 10), "float32"))
            out = R.call_dps_packed("env.softmax", (lv6,), R.Tensor((N, 10), "float32"))
            R.output(out)
        return out


def register_numpy_library():
    """``env.*`` in destination-passing style: each writes its result into ``out``."""
    def register(name, compute):
        def packed(*args):
            *inputs, out = args
            np.from_dlpack(out)[...] = compute(*(np.from_dlpack(a) for a in inputs))
        tvm.register_func(name, packed, override=True)

    register("env.linear", datasets.linear)
    register("env.relu", datasets.relu)
    register("env.conv2d", datasets.conv2d_same_3x3)
    register("env.max_pool2d", datasets.max_pool_2x2)
    register("env.flatten", lambda x: x.reshape(len(x), -1))
    register("env.softmax", datasets.softmax)


# -- the same models as nn.Modules -----------------------------------------------------------

class MLP(nn.Module):
    def __init__(self):
        self.fc1 = nn.Linear(64, 128)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class CNN(nn.Module):
    def __init__(self):
        self.conv = nn.Conv2D(1, 8, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(128, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = self.pool(nn.op.relu(self.conv(x)))
        x = nn.op.relu(self.fc1(x.reshape(x.shape[0], -1)))
        return nn.op.softmax(self.fc2(x))


MLP_NAMES = {"fc1.weight": "w0", "fc1.bias": "b0", "fc2.weight": "w1", "fc2.bias": "b1"}


def exported(name, batch):
    """``(mod, weights)`` of the trained model ``name`` exported for ``batch`` images."""
    if name == "mlp":
        model, shape = MLP(), (batch, 64)
        mlp = datasets.load_mlp_params()
        model.load_state_dict({key: mlp[course] for key, course in MLP_NAMES.items()})
    else:
        model, shape = CNN(), (batch, 1, 8, 8)
        model.load_state_dict(datasets.load_cnn_params())
    mod, params = model.export_tvm(spec={"forward": {"x": nn.spec.Tensor(shape, "float32")}})
    return mod, [param.data for _, param in params]


def fusion_passes():
    """LegalizeOps -> AnnotateTIROpPattern -> FuseOps -> FuseTIR."""
    return tvm.transform.Sequential([LegalizeOps(), AnnotateTIROpPattern(), FuseOps(),
                                     FuseTIR()])


# -- data and references ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def digits():
    _, _, x_test, y_test = datasets.load_digits()
    return x_test, y_test


@pytest.fixture(scope="module")
def reference(digits):
    """numpy's outputs of both trained models on the test split."""
    x, _ = digits
    return {"mlp": datasets.mlp_forward(x.reshape(N, 64), datasets.load_mlp_params()),
            "cnn": datasets.cnn_forward(x, datasets.load_cnn_params())}


def model_inputs(name, digits):
    x, _ = digits
    if name == "mlp":
        mlp = datasets.load_mlp_params()
        return [x.reshape(N, 64)] + [mlp[key] for key in ("w0", "b0", "w1", "b1")]
    cnn = datasets.load_cnn_params()
    return [x] + [cnn[key] for key in ("conv.weight", "conv.bias", "fc1.weight", "fc1.bias",
                                       "fc2.weight", "fc2.bias")]


def check_classifies_like_numpy(out, expected, labels):
    """Same outputs (to float rounding), same predicted class for every image, same accuracy."""
    out = out.numpy() if hasattr(out, "numpy") else out
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(out.argmax(1), expected.argmax(1))
    assert (out.argmax(1) == labels).mean() == (expected.argmax(1) == labels).mean()
    assert (expected.argmax(1) == labels).mean() > 0.95      # the models are trained


def run_vm(mod, *args, func="main", pipeline=None):
    vm = relax.VirtualMachine(relax.build(mod, "llvm", pipeline=pipeline), tvm.cpu())
    return vm[func](*args)


# -- (a) call_tir of hand-written PrimFuncs ----------------------------------------------------

def test_hand_written_mlp_with_weights_as_parameters(digits, reference):
    out = run_vm(HandWrittenMLP, *model_inputs("mlp", digits))
    check_classifies_like_numpy(out, reference["mlp"], digits[1])


def test_hand_written_cnn_with_weights_bound_as_constants(digits, reference):
    x, *weights = model_inputs("cnn", digits)
    names = [p.name_hint for p in HandWrittenCNN["main"].params[1:]]
    bound = BindParams("main", dict(zip(names, weights)))(HandWrittenCNN)
    assert [p.name_hint for p in bound["main"].params] == ["x"]
    check_classifies_like_numpy(run_vm(bound, x), reference["cnn"], digits[1])


def test_images_one_by_one_classify_as_the_batch(digits, reference):
    # The course runs one image at a time: same module, batch of 1, every test image.
    mod, weights = exported("mlp", 1)
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    x, labels = digits
    predicted = [vm["forward"](x[i].reshape(1, 64), *weights).numpy().argmax()
                 for i in range(N)]
    np.testing.assert_array_equal(predicted, reference["mlp"].argmax(1))


# -- (b) call_dps_packed of functions registered from numpy ------------------------------------

@pytest.mark.parametrize("name, mod", [("mlp", PackedMLP), ("cnn", PackedCNN)])
def test_library_functions_registered_from_numpy(name, mod, digits, reference):
    register_numpy_library()
    check_classifies_like_numpy(run_vm(mod, *model_inputs(name, digits)), reference[name],
                                digits[1])


# -- (c) nn.Module -> export_tvm -> LegalizeOps -> FuseOps -> FuseTIR -> relax.build ----------

@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_exported_module_fused_and_built(name, fuse, digits, reference):
    # Unfused, the bias adds and relus write their outputs over their inputs in place.
    mod, weights = exported(name, N)
    fused = fusion_passes()(mod) if fuse else LegalizeOps()(mod)
    out = run_vm(fused, digits[0].reshape(N, -1) if name == "mlp" else digits[0], *weights,
                 func="forward", pipeline="vm_lowering")
    check_classifies_like_numpy(out, reference[name], digits[1])


def test_exported_library_loads_and_runs(digits, reference, tmp_path):
    mod, weights = exported("mlp", N)
    path = tmp_path / "mlp.so"
    relax.build(mod, "llvm").export_library(str(path))
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(path)), tvm.cpu())
    check_classifies_like_numpy(vm["forward"](digits[0].reshape(N, 64), *weights),
                                reference["mlp"], digits[1])


def kernel_launches(mod, func="forward"):
    """PrimFunc calls one run of ``func`` makes (through fused Relax functions too)."""
    count = []

    def visit(expr):
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op) \
                and expr.op.name == "relax.call_tir":
            count.append(1)
        elif isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.GlobalVar) \
                and isinstance(mod[expr.op], relax.Function):
            count.append(kernel_launches(mod, expr.op.name_hint))

    relax.analysis.post_order_visit(mod[func], visit)
    return sum(count)


def main_calls(mod, func="forward"):
    return sum(isinstance(b.value, relax.Call) for block in mod[func].body.blocks
               for b in block.bindings)


@pytest.mark.parametrize("name, unfused", [("mlp", 7), ("cnn", 14)])
def test_fusion_groups_the_calls_of_main(name, unfused):
    mod, _ = exported(name, 64)
    legalized = LegalizeOps()(mod)
    assert main_calls(legalized) == kernel_launches(legalized) == unfused
    assert main_calls(fusion_passes()(mod)) < unfused


@pytest.mark.parametrize("name, unfused", [("mlp", 7), ("cnn", 14)])
def test_fusion_cuts_the_kernels_launched(name, unfused):
    mod, _ = exported(name, 64)
    fused = fusion_passes()(mod)
    assert kernel_launches(fused) < unfused
    prim_funcs = [f for f in fused.functions.values() if isinstance(f, tvm.tir.PrimFunc)]
    assert len(prim_funcs) < unfused


# -- memory planning --------------------------------------------------------------------------

def peak_live_bytes(func):
    """The most intermediate bytes alive at once, from the dataflow block's liveness:
    no plan can use less storage than this unless a kernel writes over its input."""
    bindings = [b for block in func.body.blocks for b in block.bindings]
    sizes, last_use = {}, {}
    for index, binding in enumerate(bindings):
        for var in relax.analysis.free_vars(binding.value):
            last_use[var] = index
        shape = binding.var.struct_info.static_shape()
        if binding.var is not func.body.body and shape is not None:
            sizes[binding.var] = int(np.prod(shape)) * 4
    born = {b.var: i for i, b in enumerate(bindings)}
    return max(sum(size for var, size in sizes.items() if born[var] <= i <= last_use[var])
               for i in range(len(bindings)))


def test_memory_plan_of_the_cnn_at_batch_64():
    mod, _ = exported("cnn", 64)
    legalized = LegalizeOps()(mod)
    usage = relax.analysis.estimate_memory_usage(legalized)["forward"]
    # 13 intermediates, 3 of them (conv, bias add, relu) 128 KiB each.
    assert usage.num_intermediates == 13 and usage.intermediate_bytes == 548384
    lower_bound = peak_live_bytes(legalized["forward"])
    # conv output, bias add output and the reshaped bias are alive together
    assert lower_bound == 2 * 64 * 8 * 8 * 8 * 4 + 8 * 4
    # The bias add and relu write over the conv output in place, so the plan goes below
    # the bound of tensors that are alive together: one 128 KiB storage for all three.
    assert usage.storage_bytes < lower_bound
    assert usage.storage_bytes < 0.5 * usage.intermediate_bytes
    ex = relax.build(legalized, "llvm", pipeline="vm_lowering")
    assert ex.planned_storage_bytes("forward") == usage.storage_bytes


# -- instruments see every pass -----------------------------------------------------------------

def test_recording_instrument_sees_every_pass_of_the_default_pipeline():
    mod, _ = exported("cnn", 4)
    recorder = RecordingInstrument()
    pipeline = relax.get_pipeline("default")
    with tvm.transform.PassContext(instruments=[recorder]):
        lowered = pipeline(mod)
    assert [record.name for record in recorder.records] == [p.info.name for p in pipeline.passes]
    assert recorder.records[0].before is mod and recorder.records[-1].after is lowered
    for record, following in zip(recorder.records, recorder.records[1:]):
        assert following.before is record.after
    for record in recorder.records:
        # the exported CNN takes its weights as parameters: nothing is constant to fold;
        # its convolutions are too small to be worth converting to NHWC
        folding = ("FoldConstant", "FoldBatchnormToConv2D", "ConvertLayoutForTarget",
                   "PrepackWeights")
        assert record.changed == (record.name not in folding), record.name
        for ir in (record.before, record.after):
            tvm.ir.assert_structural_equal(from_source(ir.script()), ir)


def test_relax_build_shows_its_kernel_passes_to_instruments_too():
    mod, _ = exported("mlp", 1)
    recorder = RecordingInstrument()
    with tvm.transform.PassContext(instruments=[recorder]):
        relax.build(mod, "llvm")
    names = [record.name for record in recorder.records]
    relax_passes = [p.info.name for p in relax.get_pipeline("default").passes]
    assert names[:len(relax_passes)] == relax_passes
    assert "dlight.ApplyDefaultSchedule" in names[len(relax_passes):]

