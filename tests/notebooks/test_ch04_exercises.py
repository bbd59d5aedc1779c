"""Reference solutions of notebook 4's exercises, checked by the notebook's own checks."""
import pytest

pytest.importorskip("onnxruntime")
import mlcbench as tvm  # noqa: E402
from mlcbench import relax, tir  # noqa: E402
from mlcbench.relax.frontend.onnx import from_onnx  # noqa: E402
from mlcbench.relay.testing import tiny_cnn  # noqa: E402
from mlcbench.script import ir as I, relax as R, tir as T  # noqa: E402
from helpers.exercise_cells import exercise_namespace  # noqa: E402

NB = exercise_namespace("04_end_to_end.ipynb")


@I.ir_module
class FusedFirstLayer:
    @T.prim_func
    def linear_relu0(X: T.Buffer((8, 64), "float32"), W: T.Buffer((128, 64), "float32"),
                     B: T.Buffer((128,), "float32"), Y: T.Buffer((8, 128), "float32")):
        T.func_attr({"global_symbol": "linear_relu0", "tir.noalias": True})
        Z = T.alloc_buffer((8, 128), "float32")
        for i, j, k in T.grid(8, 128, 64):
            with T.block("Z"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Z[vi, vj] = B[vj]
                Z[vi, vj] = Z[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(8, 128):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(Z[vi, vj], T.float32(0))

    @R.function
    def main(x: R.Tensor((8, 64), "float32"), w0: R.Tensor((128, 64), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        cls = FusedFirstLayer
        with R.dataflow():
            lv0 = R.call_tir(cls.linear_relu0, (x, w0, b0), R.Tensor((8, 128), dtype="float32"))
            out = R.call_dps_packed("env.linear", (lv0, w1, b1), R.Tensor((8, 10), "float32"))
            R.output(out)
        return out


def schedule_linear0(mod):
    sch = tir.Schedule(mod)
    block = sch.get_block("Z", func_name="linear0")
    i, j, k = sch.get_loops(block)
    j0, j1 = sch.split(j, factors=[None, 8])
    sch.reorder(i, j0, k, j1)
    sch.decompose_reduction(block, k)
    new = mod.copy()
    new.update_func(new.get_global_var("linear0"), sch.mod["linear0"])
    return new


def compile_onnx(model):
    vm = relax.VirtualMachine(relax.build(from_onnx(model), target="llvm"), tvm.cpu())
    return lambda data: vm["main"](tvm.nd.array(data)).numpy()


def test_exercise_1_reference_solution_passes():
    assert NB["check_exercise_1"](lambda: FusedFirstLayer) is True


def test_exercise_1_rejects_a_module_with_a_kernel_per_operator():
    with pytest.raises(AssertionError, match="expected one PrimFunc"):
        NB["check_exercise_1"](lambda: NB["ExerciseMLP"])


def test_exercise_2_reference_solution_passes():
    assert NB["check_exercise_2"](schedule_linear0) is True


def test_exercise_2_rejects_an_untouched_module():
    with pytest.raises(AssertionError, match="loops"):
        NB["check_exercise_2"](lambda mod: mod.copy())


def test_exercise_2_rejects_a_module_whose_relu_changed():
    def schedule_relu_too(mod):
        new = schedule_linear0(mod)
        sch = tir.Schedule(new)
        i, _ = sch.get_loops(sch.get_block("Y", func_name="relu0"))
        sch.split(i, factors=[None, 2])
        new.update_func(new.get_global_var("relu0"), sch.mod["relu0"])
        return new
    with pytest.raises(AssertionError):
        NB["check_exercise_2"](schedule_relu_too)


def test_exercise_3_reference_solution_passes():
    assert NB["check_exercise_3"](compile_onnx) is True


def test_exercise_3_rejects_a_model_with_other_weights():
    def other_model(model):
        return compile_onnx(tiny_cnn(batch=2, size=8, filters=6, classes=5, seed=4))
    with pytest.raises(AssertionError):
        NB["check_exercise_3"](other_model)


def test_unattempted_exercises_report_so(capsys):
    def todo(*args):
        raise NotImplementedError
    assert not any(NB[f"check_exercise_{k}"](todo) for k in (1, 2, 3))
    assert capsys.readouterr().out.count("not attempted yet") == 3
