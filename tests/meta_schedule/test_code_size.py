import pytest

from mlcbench import tir
from mlcbench.ir import InvalidValueError
from mlcbench.meta_schedule.builder import BuilderInput, LocalBuilder, remove_artifact
from mlcbench.meta_schedule.code_size import (oversized_reason, statement_limit,
                                              unrolled_statements)
from helpers.tuning_testing import failing_build, matmul_module

TARGET = "llvm --num-cores=2"


def unrolled_matmul(n: int, unroll_i: int, lanes: int):
    """C = A @ B with its i loop split by ``unroll_i`` (unrolled) and j by ``lanes``
    (vectorized): the body is written out unroll_i * lanes times, plus the init."""
    sch = tir.Schedule(matmul_module(n))
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    io, ii = sch.split(i, [None, unroll_i])
    jo, ji = sch.split(j, [None, lanes])
    sch.reorder(io, jo, k, ii, ji)
    sch.unroll(ii)
    sch.vectorize(ji)
    return sch.mod


def test_unrolled_and_vectorized_loops_multiply_and_serial_loops_do_not():
    assert unrolled_statements(matmul_module(16)) == 2          # init and update, once each
    assert unrolled_statements(unrolled_matmul(16, 4, 8)) == 2 * 4 * 8


def test_auto_unroll_counts_the_loops_it_will_write_out():
    sch = tir.Schedule(matmul_module(16))
    i, _, _ = sch.get_loops(sch.get_block("C"))
    sch.annotate(i, "pragma_auto_unroll_max_step", 16)
    # only the innermost k loop (16 steps) fits; each copy counts the block's init and
    # update (an upper bound: lowering keeps the init in the first copy only)
    assert unrolled_statements(sch.mod) == 2 * 16
    sch.annotate(i, "pragma_auto_unroll_max_step", 8)
    assert unrolled_statements(sch.mod) == 2


def test_a_too_large_candidate_is_refused_with_its_reason_and_not_compiled():
    # failing_build would say "this build always fails" if the candidate reached it.
    builder = LocalBuilder(max_workers=1, timeout_sec=20, f_build=failing_build,
                           max_unrolled_statements=32)
    small, large = matmul_module(16), unrolled_matmul(16, 4, 8)
    assert oversized_reason(small, 32) is None
    refused, failed = builder.build([BuilderInput(large, TARGET), BuilderInput(small, TARGET)])
    assert refused.artifact_path is None
    assert refused.error_msg.startswith("build refused: ")
    assert "64 statements, over the limit of 32" in refused.error_msg
    assert "this build always fails" in failed.error_msg         # the small one was built
    builder.f_build = LocalBuilder().f_build
    (built,) = builder.build([BuilderInput(small, TARGET)])
    assert built.error_msg is None
    remove_artifact(built.artifact_path)
    builder.shutdown()


def test_the_limit_follows_the_vector_register_file_and_bad_limits_are_refused():
    assert statement_limit("llvm -mcpu=znver3") == 4 * 16 * 8
    assert statement_limit("llvm -mcpu=znver4") == 4 * 32 * 16
    with pytest.raises(InvalidValueError, match="positive int, 'target' or None, found 0"):
        LocalBuilder(max_unrolled_statements=0)
