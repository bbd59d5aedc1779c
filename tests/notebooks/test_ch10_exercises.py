"""Reference solutions of notebook 10's exercises, checked by the notebook's own checks."""
import pytest

pytest.importorskip("onnxruntime")
import mlcbench as tvm  # noqa: E402
from mlcbench import relax  # noqa: E402
from mlcbench.contrib import graph_executor  # noqa: E402
from mlcbench.relax.frontend.onnx import from_onnx  # noqa: E402
from mlcbench.runtime import load_package  # noqa: E402
from mlcbench.script import tir as T  # noqa: E402
from helpers.exercise_cells import exercise_namespace  # noqa: E402

NB = exercise_namespace("10_deployment.ipynb")


def export_model(onnx_model, path):
    relax.build(from_onnx(onnx_model), target="llvm").export_library(path)


def run_package(path, inputs):
    package = load_package(path)
    module = graph_executor.create(package.graph_json, package.lib, tvm.cpu())
    module.set_input(**package.params)
    module.set_input(**inputs)
    module.run()
    return module.get_output(0).numpy()


@T.prim_func
def vector_add(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"),
               C: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "vector_add", "tir.noalias": True})
    for i in range(1024):
        with T.block("C"):
            vi = T.axis.spatial(1024, i)
            C[vi] = A[vi] + B[vi]


def export_kernel(path):
    tvm.build(vector_add, target="llvm").export_library(path)


@T.prim_func
def vector_subtract(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"),
                    C: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "vector_add", "tir.noalias": True})
    for i in range(1024):
        with T.block("C"):
            vi = T.axis.spatial(1024, i)
            C[vi] = A[vi] - B[vi]


def test_exercise_1_reference_solution_passes():
    assert NB["check_exercise_1"](export_model) is True


def test_exercise_1_rejects_a_library_of_another_model():
    def export_other(onnx_model, path):
        export_model(NB["tiny_mlp"](seed=4), path)
    with pytest.raises(AssertionError):
        NB["check_exercise_1"](export_other)


def test_exercise_2_reference_solution_passes():
    assert NB["check_exercise_2"](run_package) is True


def test_exercise_2_rejects_a_run_without_the_weights():
    def zero_weights(path, inputs):
        package = load_package(path)
        module = graph_executor.create(package.graph_json, package.lib, tvm.cpu())
        module.set_input(**{k: v.numpy() * 0 for k, v in package.params.items()})
        module.set_input(**inputs)
        module.run()
        return module.get_output(0).numpy()
    with pytest.raises(AssertionError):
        NB["check_exercise_2"](zero_weights)


def test_exercise_3_reference_solution_passes():
    assert NB["check_exercise_3"](export_kernel) is True


def test_exercise_3_rejects_a_kernel_that_subtracts():
    with pytest.raises(AssertionError, match="fresh process failed"):
        NB["check_exercise_3"](lambda path: tvm.build(vector_subtract, "llvm").export_library(path))


def test_unattempted_exercises_report_so(capsys):
    def todo(*args):
        raise NotImplementedError
    assert not any(NB[f"check_exercise_{k}"](todo) for k in (1, 2, 3))
    assert capsys.readouterr().out.count("not attempted yet") == 3
