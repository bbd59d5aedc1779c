"""extract_from_program: the AutoTVM tasks of Relax models, named and counted as in TVM."""
import pytest

from mlcbench import autotvm
from mlcbench.driver.models import export_digits_model
from mlcbench.ir.errors import InvalidValueError, TuningError
from mlcbench.relax import transform
from mlcbench.relax.frontend import nn


def dense_args(n, k, m):
    """A dense over a weight passed as an argument: the matmul reads it as [m, k] where
    it lies (FuseTransposeMatmul), TVM's dense layout."""
    return (("TENSOR", (n, k), "float32"), ("TENSOR", (m, k), "float32"), None, "float32")


def dense_args_kn(n, k, m):
    """A dense whose weight was transposed by a kernel of its own: it reads [k, m]."""
    return (("TENSOR", (n, k), "float32"), ("TENSOR", (k, m), "float32"), None, "float32",
            "KN")


CONV_ARGS = (("TENSOR", (32, 1, 8, 8), "float32"), ("TENSOR", (8, 1, 3, 3), "float32"),
             (1, 1), (1, 1, 1, 1), (1, 1), "float32")


def workloads(tasks):
    return [(t.name, t.args, t.count) for t in tasks]


def test_mlp_gives_both_dense_templates_per_layer():
    mod, _ = export_digits_model("mlp", batch=32)
    tasks = autotvm.task.extract_from_program(mod, params=None, target="llvm")
    assert sorted(workloads(tasks)) == sorted(
        (name, dense_args(*shape), 1) for shape in [(32, 64, 128), (32, 128, 10)]
        for name in ("dense_pack.x86", "dense.x86"))
    assert all(str(t.target).startswith("llvm") for t in tasks)


def test_cnn_gives_the_convolution_with_its_attributes():
    mod, _ = export_digits_model("cnn", batch=32)
    tasks = autotvm.task.extract_from_program(mod["forward"], target="llvm")
    assert ("conv2d_nchw.x86", CONV_ARGS, 1) in workloads(tasks)
    assert {t.name for t in tasks} == {"conv2d_nchw.x86", "dense_pack.x86", "dense.x86"}
    assert len(tasks) == 5


def test_ops_selects_tasks():
    mod, _ = export_digits_model("cnn", batch=32)
    tasks = autotvm.task.extract_from_program(mod, target="llvm", ops=["relax.nn.conv2d"])
    assert workloads(tasks) == [("conv2d_nchw.x86", CONV_ARGS, 1)]
    with pytest.raises(TuningError, match="no template covers op 'nn.softmax'"):
        autotvm.task.extract_from_program(mod, target="llvm", ops=["nn.softmax"])


def test_legalized_module_gives_the_tasks_of_its_own_kernels():
    # legalized first, the weight transposes are kernels of their own: the denses read
    # the transposed copies, [k, m]
    mod, _ = export_digits_model("mlp", batch=32)
    legalized = transform.LegalizeOps()(mod)
    assert sorted(workloads(autotvm.task.extract_from_program(legalized, target="llvm"))) == \
        sorted((name, dense_args_kn(*shape), 1) for shape in [(32, 64, 128), (32, 128, 10)]
               for name in ("dense_pack.x86", "dense.x86"))


class TwoSameLayers(nn.Module):
    def __init__(self):
        self.fc1 = nn.Linear(16, 16)
        self.fc2 = nn.Linear(16, 16)

    def forward(self, x):
        return self.fc2(nn.op.relu(self.fc1(x)))


def test_equal_layers_share_a_task_and_are_counted():
    mod, _ = TwoSameLayers().export_tvm(
        spec={"forward": {"x": nn.spec.Tensor((4, 16), "float32")}})
    tasks = autotvm.task.extract_from_program(mod, target="llvm", ops=["nn.dense"])
    assert workloads(tasks) == [("dense_pack.x86", dense_args(4, 16, 16), 2),
                                ("dense.x86", dense_args(4, 16, 16), 2)]


def test_rejects_what_is_not_a_relax_program():
    with pytest.raises(TuningError, match="extract_from_program: expected an IRModule or a Function, found str"):
        autotvm.task.extract_from_program("main", target="llvm")


def test_target_host_must_be_a_cpu_target():
    with pytest.raises(InvalidValueError, match="extract_from_program: target_host must be "
                                                "a CPU target.*found 'cuda"):
        autotvm.task.extract_from_program(None, target="llvm", target_host="cuda")
