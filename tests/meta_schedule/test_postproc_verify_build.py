"""VerifyBuild: a candidate that does not lower (or compile) is rejected."""
from mlcbench import meta_schedule as ms
from mlcbench.tir import Schedule
from helpers import space_testing as sp


def test_a_scheduled_matmul_lowers_and_compiles():
    mod, _ = sp.matmul(16)
    sch = Schedule(mod)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    assert sp.initialized(ms.postproc.VerifyBuild()).apply(sch)
    check = sp.initialized(ms.postproc.VerifyBuild(compile=True))
    assert check.apply(sch) and check.last_error is None


def test_a_thread_bound_loop_is_rejected_on_the_cpu():
    mod, _ = sp.matmul(16)
    sch = Schedule(mod)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "threadIdx.x")
    check = ms.postproc.VerifyBuild()
    assert not check.apply(sch)
    assert "CodegenError" in check.last_error
