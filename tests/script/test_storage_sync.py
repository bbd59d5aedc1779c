"""``T.tvm_storage_sync("shared")``: the GPU barrier, parsed, printed and read back."""
import pytest

from mlcbench.ir import IRError, assert_structural_equal
from mlcbench.script import from_source
from mlcbench.script import tir as T
from mlcbench.tir import Call, Evaluate, SeqStmt, StringImm


@T.prim_func
def _with_barrier(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            A[bx * 32 + tx] = T.float32(1)
            T.tvm_storage_sync("shared")
            B[bx * 32 + tx] = A[bx * 32 + (tx + 1) % 32]


def _inner_seq(func):
    stmt = func.body
    while not isinstance(stmt, SeqStmt):
        stmt = stmt.body
    return stmt.seq


def test_parses_to_an_evaluated_int32_call_with_the_scope_string():
    barrier = _inner_seq(_with_barrier)[1]
    assert isinstance(barrier, Evaluate)
    call = barrier.value
    assert isinstance(call, Call)
    assert call.op == "tir.tvm_storage_sync"
    assert call.dtype == "int32"
    assert len(call.args) == 1
    assert isinstance(call.args[0], StringImm) and call.args[0].value == "shared"


def test_prints_as_the_call_and_reads_back_equal():
    text = _with_barrier.script()
    assert '            T.tvm_storage_sync("shared")\n' in text
    assert_structural_equal(from_source(text), _with_barrier)


def test_outside_a_function_it_builds_the_same_call():
    call = T.tvm_storage_sync("shared")
    assert_structural_equal(call, _inner_seq(_with_barrier)[1].value)


@pytest.mark.parametrize("scope", ["sharde", "local", 3])
def test_an_unknown_scope_is_refused_naming_it(scope):
    with pytest.raises(IRError, match=f"found {scope!r}"):
        T.tvm_storage_sync(scope)
