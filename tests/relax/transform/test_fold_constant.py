"""FoldConstant: calls on constants are computed by compiled kernels, checked against
numpy; everything else is left alone."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
import importlib
from mlcbench import relax
from mlcbench.relax import op
from mlcbench.script import ir as I, relax as R, tir as T


@I.ir_module
class HighLevel:
    @R.function
    def main(x: R.Tensor((2, 2), "float32")):
        with R.dataflow():
            lv0 = R.add(R.const([[1.0, 2.0], [3.0, 4.0]], "float32"),
                        R.const([10.0, 20.0], "float32"))
            lv1 = R.permute_dims(lv0)
            gv = R.multiply(x, lv1)
            R.output(gv)
        return gv


@I.ir_module
class HighLevelFolded:
    @R.function
    def main(x: R.Tensor((2, 2), "float32")):
        with R.dataflow():
            gv = R.multiply(x, R.const([[11.0, 13.0], [22.0, 24.0]], "float32"))
            R.output(gv)
        return gv


def test_high_level_ops_on_constants_are_folded():
    tvm.ir.assert_structural_equal(relax.transform.FoldConstant()(HighLevel), HighLevelFolded)


@I.ir_module
class CallTIR:
    @T.prim_func
    def scale(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[vi] * T.float32(3) + T.float32(1)

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv0 = R.call_tir(cls.scale, (R.const([0.0, 1.0, 2.0, 3.0], "float32"),),
                             R.Tensor((4,), "float32"))
            lv1 = R.call_tir(cls.scale, (x,), R.Tensor((4,), "float32"))
            parts = R.split(lv0, 2)
            gv = R.add(lv1, lv0)
            R.output(gv, parts)
        return (gv, parts[1])


@I.ir_module
class CallTIRFolded:
    @T.prim_func
    def scale(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[vi] * T.float32(3) + T.float32(1)

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv1 = R.call_tir(cls.scale, (x,), R.Tensor((4,), "float32"))
            gv = R.add(lv1, R.const([1.0, 4.0, 7.0, 10.0], "float32"))
            R.output(gv)
        return (gv, R.const([7.0, 10.0], "float32"))


def test_call_tir_and_tuple_results_are_folded():
    tvm.ir.assert_structural_equal(relax.transform.FoldConstant()(CallTIR), CallTIRFolded)


@I.ir_module
class NotFoldable:
    @R.function
    def main(x: R.Tensor(("n", 2), "float32")):
        with R.dataflow():
            lv0 = R.add(x, R.const([1.0, 2.0], "float32"))
            lv1 = R.call_dps_packed("env.scale", (R.const([1.0, 2.0], "float32"),),
                                    R.Tensor((2,), "float32"))
            gv = R.add(lv0, lv1)
            R.output(gv)
        return gv


def test_calls_that_cannot_be_evaluated_are_left_alone():
    assert relax.transform.FoldConstant()(NotFoldable) is NotFoldable
    folded = relax.transform.FoldConstant()(HighLevel)
    assert relax.transform.FoldConstant()(folded) is folded


def test_equal_kernels_are_compiled_once_per_run(monkeypatch):
    builds = []

    def counting_build(*args, **kwargs):
        builds.append(args)
        return original(*args, **kwargs)

    build_module = importlib.import_module("mlcbench.tir.build")
    original = build_module.build
    monkeypatch.setattr(build_module, "build", counting_build)
    a, b, c = (np.full((3, 5), v, "float32") for v in (1.0, 2.0, 3.0))
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((3, 5), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            s1 = bb.emit(op.add(relax.const(a), relax.const(b)))     # add (3, 5): built
            s2 = bb.emit(op.add(s1, relax.const(c)))                 # same kernel: reused
            s3 = bb.emit(op.multiply(s2, relax.const(c)))            # multiply: built
            gv = bb.emit_output(op.add(x, s3))
        bb.emit_func_output(gv)
    after = relax.transform.FoldConstant()(bb.get())
    assert len(builds) == 2
    folded = after["main"].body.blocks[0].bindings[0].value.args[1]
    np.testing.assert_allclose(folded.data.numpy(), (a + b + c) * c)


def test_bound_weights_of_a_linear_layer_fold_to_numpy_values():
    rng = np.random.default_rng(3)
    w, b = rng.standard_normal((6, 4)).astype("float32"), rng.standard_normal(6).astype(
        "float32")

    @I.ir_module
    class Linear:
        @R.function
        def main(x: R.Tensor((1, 4), "float32"), w: R.Tensor((6, 4), "float32"),
                 b: R.Tensor((6,), "float32")):
            with R.dataflow():
                wt = R.permute_dims(w)
                scaled = R.multiply(wt, R.const(0.5, "float32"))
                bias = R.nn.relu(b)
                lv = R.matmul(x, scaled)
                gv = R.add(lv, bias)
                R.output(gv)
            return gv

    bound = relax.transform.BindParams("main", {"w": w, "b": b})(Linear)
    after = relax.transform.FoldConstant()(bound)["main"]
    matmul, add = after.body.blocks[0].bindings
    np.testing.assert_allclose(matmul.value.args[1].data.numpy(), w.T * 0.5, rtol=1e-6)
    np.testing.assert_allclose(add.value.args[1].data.numpy(), np.maximum(b, 0))


shapes = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)


@settings(max_examples=12, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16))
def test_random_constant_shapes_match_numpy(shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, size=shape).astype("float32")
    b = rng.uniform(0.5, 2, size=shape[1:]).astype("float32")
    bb = relax.BlockBuilder()
    with bb.function("main", []):
        lv = bb.emit(op.divide(op.exp(relax.const(a)), relax.const(b)))
        gv = bb.emit(op.sum(op.subtract(lv, relax.const(b)), axis=None, keepdims=False))
        bb.emit_func_output(relax.Tuple([lv, gv]))
    result = relax.transform.FoldConstant()(bb.get())["main"].body
    assert not result.blocks
    quotient, total = (c.data.numpy() for c in result.body.fields)
    np.testing.assert_allclose(quotient, np.exp(a) / b, rtol=1e-5)
    np.testing.assert_allclose(total, (np.exp(a) / b - b).sum(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_other_dtypes(dtype):
    a = np.arange(6, dtype=dtype).reshape(2, 3)
    x = relax.Var("x", relax.TensorStructInfo((3, 2), dtype))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        gv = bb.emit(op.add(x, op.reshape(relax.const(a), (3, 2))))
        bb.emit_func_output(gv)
    after = relax.transform.FoldConstant()(bb.get())["main"]
    constant = after.body.blocks[0].bindings[-1].value.args[1]
    np.testing.assert_array_equal(constant.data.numpy(), a.reshape(3, 2))
    assert str(constant.data.dtype) == dtype


def test_folding_compiles_for_this_host_whatever_the_build_target(monkeypatch):
    """The kernels run here, at build time: under ``with Target("llvm -mcpu=znver4")`` (or
    any target this host cannot run) they are still compiled for the host."""
    from mlcbench.target import Target
    from mlcbench.target.target import host_cpu_name
    targets = []
    build_module = importlib.import_module("mlcbench.tir.build")
    original = build_module.build

    def recording_build(mod, target=None, *args, **kwargs):
        targets.append(Target(target) if target is not None else Target.current())
        return original(mod, target, *args, **kwargs)
    monkeypatch.setattr(build_module, "build", recording_build)
    with Target("llvm -mcpu=znver4"):
        folded = relax.transform.FoldConstant()(HighLevel)
    tvm.ir.assert_structural_equal(folded, HighLevelFolded)
    assert targets and all(t.mcpu == host_cpu_name() for t in targets)


def test_a_model_with_weights_builds_for_another_cpu_without_running_its_code():
    """relax.build for -mcpu=znver4 folds and pre-packs weights on this host; built in a
    child process, since code for a CPU the host lacks would end the process."""
    import subprocess
    import sys
    code = ("import numpy as np, mlcbench as tvm\n"
            "from mlcbench import relax\n"
            "from mlcbench.relax.frontend import nn\n"
            "class MLP(nn.Module):\n"
            "    def __init__(self):\n"
            "        self.fc1, self.fc2 = nn.Linear(64, 128), nn.Linear(128, 10)\n"
            "    def forward(self, x):\n"
            "        return self.fc2(self.fc1(x))\n"
            "mod, params = MLP().export_tvm(spec={'forward': {'x': nn.spec.Tensor((1, 64), "
            "'float32')}})\n"
            "rng = np.random.default_rng(0)\n"
            "mod = relax.transform.BindParams('forward', {n: rng.random(p.shape, 'float32') "
            "for n, p in params})(mod)\n"
            "relax.build(mod, target='llvm -mcpu=znver4')\n")
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
