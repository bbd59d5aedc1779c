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
