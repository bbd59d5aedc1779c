"""RemoveNoOp: Evaluate(0), empty loops, constant ifs, self-copies."""
from helpers.lowering_programs import buf, loops, prim_func

import mlcbench
from mlcbench.tir import (Allocate, BufferStore, Evaluate, IfThenElse, Not, Var, const, seq)
from mlcbench.tir.stmt import SeqStmt
from mlcbench.tir.transform import RemoveNoOp


def _apply(func):
    return RemoveNoOp()(mlcbench.IRModule.from_expr(func))["main"]


def test_empty_loops_and_evaluate_zero_disappear():
    A, B = buf("A", (4,)), buf("B", (4,))
    copy = BufferStore(B, A[0], (0,))
    body = SeqStmt((loops([16], lambda i: Evaluate(0)), copy, Evaluate(0)))
    mlcbench.assert_structural_equal(_apply(prim_func([A, B], body)),
                                     prim_func([A, B], copy))


def test_constant_conditions_keep_the_taken_branch():
    A = buf("A", (4,))
    store = BufferStore(A, const(1.0), (0,))
    body = seq(IfThenElse(const(True), store), IfThenElse(const(False), store))
    mlcbench.assert_structural_equal(_apply(prim_func([A], body)), prim_func([A], store))


def test_empty_then_branch_negates_the_condition():
    A, n = buf("A", (4,)), Var("n")
    store = BufferStore(A, const(1.0), (0,))
    after = _apply(prim_func([A, n], IfThenElse(n < 2, Evaluate(0), store)))
    mlcbench.assert_structural_equal(after.body, IfThenElse(Not(n < 2), store))


def test_self_copy_and_empty_allocate_are_removed():
    A, T = buf("A", (4,)), buf("T", (4,))
    body = seq(Allocate(T, loops([4], lambda i: BufferStore(T, T[i], (i,)))),
               loops([4], lambda i: BufferStore(A, A[i] + const(1.0), (i,))))
    after = _apply(prim_func([A], body))
    assert after.body is body.seq[1]


def test_copy_between_different_elements_is_kept():
    A = buf("A", (4,))
    func = prim_func([A], loops([3], lambda i: BufferStore(A, A[i + 1], (i,))))
    assert _apply(func) is func


def test_zero_extent_loop_is_removed_and_all_empty_gives_evaluate():
    A = buf("A", (4,))
    after = _apply(prim_func([A], loops([0], lambda i: BufferStore(A, const(0.0), (i,)))))
    mlcbench.assert_structural_equal(after.body, Evaluate(0))


def test_copy_between_two_loop_variables_is_kept():
    A = buf("A", (4, 4))
    func = prim_func([A], loops([4, 4], lambda i, j: BufferStore(A, A[j, i], (i, j))))
    assert _apply(func) is func
