"""UnrollLoop: explicit unroll, symbolic-extent hint, auto_max_step."""
from helpers.lowering_programs import buf, loops, prim_func

import mlcbench
from mlcbench.ir.transform import PassContext
from mlcbench.tir import BufferStore, For, ForKind, SeqStmt, Var, const, seq
from mlcbench.tir.transform import UnrollLoop


def _apply(func, pass_=None):
    return (pass_ or UnrollLoop())(mlcbench.IRModule.from_expr(func))["main"]


def _scale(kind="unroll", extent=3):
    A, B = buf("A", (8,)), buf("B", (8,))
    return A, B, prim_func([A, B], loops([extent], lambda k: BufferStore(
        B, A[k] * const(2.0), (k,)), kinds=[kind]))


def test_constant_extent_is_written_out():
    A, B, func = _scale()
    expected = seq(*(BufferStore(B, A[k] * const(2.0), (k,)) for k in range(3)))
    mlcbench.assert_structural_equal(_apply(func), prim_func([A, B], expected))


def test_copies_get_fresh_inner_loop_variables():
    A = buf("A", (2, 4))
    func = prim_func([A], loops([2, 4], lambda i, j: BufferStore(A, const(1.0), (i, j)),
                                kinds=["unroll", "serial"]))
    after = _apply(func)
    first, second = after.body.seq
    assert isinstance(first, For) and first.loop_var is not second.loop_var
    assert first.body.indices[0].value == 0 and second.body.indices[0].value == 1
    assert first.body.indices[1] is first.loop_var


def test_symbolic_extent_keeps_a_serial_loop_with_a_hint():
    A, n = buf("A", (8,)), Var("n")
    func = prim_func([A, n], For(Var("k"), 0, n, ForKind.UNROLLED,
                                 BufferStore(A, const(0.0), (0,))))
    loop = _apply(func).body
    assert loop.kind == ForKind.SERIAL and loop.annotations == {"pragma_unroll": 1}


def test_serial_loops_stay_without_auto_max_step():
    _, _, func = _scale(kind="serial")
    assert _apply(func) is func


def test_auto_max_step_unrolls_small_serial_loops():
    _, _, func = _scale(kind="serial", extent=4)
    assert isinstance(_apply(func, UnrollLoop(auto_max_step=4)).body, SeqStmt)
    assert _apply(func, UnrollLoop(auto_max_step=3)) is func
    with PassContext(config={"tir.UnrollLoop": {"auto_max_step": 8}}):
        assert len(_apply(func).body.seq) == 4


def test_loop_annotation_sets_the_auto_limit():
    A, B, func = _scale(kind="serial", extent=4)
    annotated = func.with_body(func.body.replace(
        annotations={"pragma_auto_unroll_max_step": 16}))
    assert len(_apply(annotated).body.seq) == 4


def test_each_copy_keeps_only_the_branch_its_iteration_takes():
    """A body that picks its expression by the loop variable (a Winograd transform's
    positions): each copy holds its own branch, the others are never copied, also
    before the copies are simplified."""
    from mlcbench.tir import Call, IntImm, Select
    from mlcbench.tir.functor import post_order_visit
    from mlcbench.tir.op import if_then_else
    from mlcbench.tir.transform.unroll_loop import unroll
    A, B = buf("A", (8,)), buf("B", (8,))
    func = prim_func([A, B], loops([3], lambda k: BufferStore(
        B, if_then_else(k == 0, A[5], Select(k == 1, A[6] * const(2.0), A[7])), (k,)),
        kinds=["unroll"]))
    copies = unroll(func.body, simplify=False)
    choices = []
    post_order_visit(copies, lambda n: choices.append(n) if isinstance(n, Select) or (
        isinstance(n, Call) and n.op == "tir.if_then_else") else None)
    assert choices == []
    expected = seq(BufferStore(B, A[5], (IntImm("int32", 0),)),
                   BufferStore(B, A[6] * const(2.0), (IntImm("int32", 1),)),
                   BufferStore(B, A[7], (IntImm("int32", 2),)))
    mlcbench.assert_structural_equal(_apply(func), prim_func([A, B], expected))


def test_a_choice_the_loop_variable_does_not_decide_is_copied_whole():
    from mlcbench.tir import Call
    from mlcbench.tir.functor import post_order_visit
    from mlcbench.tir.op import if_then_else
    A, B = buf("A", (8,)), buf("B", (8,))
    n = Var("n", "int32")
    func = prim_func([A, B], loops([2], lambda k: BufferStore(
        B, if_then_else(n > 0, A[k], A[k + 2]), (k,)), kinds=["unroll"]))
    kept = []
    post_order_visit(_apply(func).body, lambda node: kept.append(node) if isinstance(
        node, Call) and node.op == "tir.if_then_else" else None)
    assert len(kept) == 2
