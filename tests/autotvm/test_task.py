"""Tasks: space collection, flop counting, instantiation, registration errors."""
import numpy as np
import pytest

import mlcbench
from mlcbench import autotvm
from mlcbench.ir.errors import InvalidValueError, TuningError


def test_task_space_flop_and_instantiate(task):
    assert len(task.config_space) == 6 * 6 * 2
    assert task.flop == 2 * 32 ** 3
    assert task.workload == ("test/matmul", 32, 32, 32, "float32")
    s, args = task.instantiate(task.config_space.get(40))
    lib = mlcbench.build(s, args, target="llvm")
    a, b = np.ones((32, 32), "float32"), np.full((32, 32), 2.0, "float32")
    c = mlcbench.nd.empty((32, 32), "float32")
    lib(mlcbench.nd.array(a), mlcbench.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b)


def test_unknown_template_and_config_outside_template():
    with pytest.raises(TuningError, match="no template is registered under this name"):
        autotvm.task.create("test/nothing", args=(1,), target="llvm")
    with pytest.raises(TuningError, match="outside a template"):
        autotvm.get_config()


@pytest.mark.parametrize("extra, match", [
    ({"target_host": "cuda"}, "target_host must be a CPU target.*found 'cuda"),
    ({"template_key": "winograd"},
     r"template_key of 'test/matmul' must be one of \['direct'\], found 'winograd'"),
])
def test_create_refuses_what_it_cannot_honour(task, extra, match):
    with pytest.raises(InvalidValueError, match=match):
        autotvm.task.create("test/matmul", args=task.args, target="llvm", **extra)
    created = autotvm.task.create("test/matmul", args=task.args, target="llvm",
                                  target_host="llvm")
    assert created.workload == task.workload
    direct = autotvm.task.create("test/matmul", task.args, "llvm", None, "direct")
    assert direct.workload == task.workload


def test_tir_schedule_template():
    from mlcbench import te, tir

    @autotvm.template("test/tir_add")
    def add(n):
        A = te.placeholder((n,), name="A")
        B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
        sch = tir.Schedule(te.create_prim_func([A, B]))
        cfg = autotvm.get_config()
        cfg.define_split("tile", n, num_outputs=2)
        (i,) = sch.get_loops(sch.get_block("B"))
        sch.split(i, [None, cfg["tile"].size[-1]])
        return sch, [A, B]

    task = autotvm.task.create("test/tir_add", args=(16,), target="llvm")
    assert len(task.config_space) == 5 and task.flop == 16
    mod = task.instantiate_module(task.config_space.get(2))
    assert len(mlcbench.tir.Schedule(mod).get_loops("B")) == 2
