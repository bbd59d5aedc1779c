"""ConvertBlocksToOpaque, LowerOpaqueBlock and VerifyCPUCompatible."""
import pytest
from helpers.lowering_programs import block, buf, loops, prim_func, root

import mlcbench
from mlcbench.ir.errors import CodegenError
from mlcbench.tir import (Allocate, BufferRegion, BufferStore, For, ForKind, IfThenElse,
                          IterType, IterVar, MatchBufferRegion, Range, Var, const, seq)
from mlcbench.tir.transform import (ConvertBlocksToOpaque, LowerOpaqueBlock,
                                    VerifyCPUCompatible)


def _apply(pass_, func):
    return pass_(mlcbench.IRModule.from_expr(func))["main"]


def _add_one(A, B, n=16, factor=4, predicate=True):
    """B[v] = A[v] + 1 with v bound to i * factor + j."""
    return loops([n // factor, factor], lambda i, j: block(
        "B", [("S", n)], [i * factor + j],
        lambda v: BufferStore(B, A[v] + const(1.0), (v,)),
        predicate=predicate if predicate is True else predicate(i, j)))


def test_convert_blocks_to_opaque_substitutes_bindings():
    A, B = buf("A", (16,)), buf("B", (16,))
    after = _apply(ConvertBlocksToOpaque(), prim_func([A, B], root(_add_one(A, B))))
    expected = loops([4, 4], lambda i, j: block(
        "B", [], [], lambda: BufferStore(B, A[i * 4 + j] + const(1.0), (i * 4 + j,))))
    mlcbench.assert_structural_equal(after, prim_func([A, B], root(expected)))


def test_lower_opaque_block_drops_blocks():
    A, B = buf("A", (16,)), buf("B", (16,))
    after = _apply(LowerOpaqueBlock(), prim_func([A, B], root(_add_one(A, B))))
    expected = loops([4, 4], lambda i, j: BufferStore(B, A[i * 4 + j] + const(1.0),
                                                      (i * 4 + j,)))
    mlcbench.assert_structural_equal(after, prim_func([A, B], expected))


def test_predicate_becomes_if():
    A, B = buf("A", (10,)), buf("B", (10,))
    func = prim_func([A, B], root(_add_one(A, B, n=10, predicate=lambda i, j: i * 4 + j < 10)))
    expected = loops([2, 4], lambda i, j: IfThenElse(
        i * 4 + j < 10, BufferStore(B, A[i * 4 + j] + const(1.0), (i * 4 + j,))))
    mlcbench.assert_structural_equal(_apply(LowerOpaqueBlock(), func),
                                     prim_func([A, B], expected))


def test_alloc_buffers_become_allocate_where_the_block_was():
    A, B, T = buf("A", (4,)), buf("B", (4,)), buf("T", (4,), scope="local")
    inner = seq(loops([4], lambda i: BufferStore(T, A[i] * const(2.0), (i,))),
                loops([4], lambda i: BufferStore(B, T[i], (i,))))
    func = prim_func([A, B], root(block("outer", [], [], lambda: inner, alloc=[T])))
    expected = Allocate(T, inner)
    mlcbench.assert_structural_equal(_apply(LowerOpaqueBlock(), func),
                                     prim_func([A, B], expected))


def test_root_alloc_wraps_whole_body():
    A, B, T = buf("A", (4,)), buf("B", (4,)), buf("T", (4,))
    body = [loops([4], lambda i: BufferStore(T, A[i], (i,))),
            loops([4], lambda i: BufferStore(B, T[i], (i,)))]
    after = _apply(LowerOpaqueBlock(), prim_func([A, B], root(body, alloc=[T])))
    mlcbench.assert_structural_equal(after, prim_func([A, B], Allocate(T, seq(body))))


def _tile_copy(source_region, sub_shape):
    """Each block copies a tile of A, matched as `sub`, into B (both 8 x 4)."""
    A, B = buf("A", (8, 4)), buf("B", (8, 4))
    sub = buf("sub", sub_shape)

    def body(i):
        region = BufferRegion(A, source_region(i))
        copy = loops([4], lambda k: BufferStore(
            B, sub[(k,) if len(sub_shape) == 1 else (0, k)], (i, k)), names="k")
        return block("tile", [], [], lambda: copy, match=[MatchBufferRegion(sub, region)])
    return A, B, prim_func([A, B], root(loops([8], body)))


def test_match_buffer_accesses_read_the_source():
    full = lambda i: (Range(i, 1), Range(0, 4))       # noqa: E731
    for shape in [(4,), (1, 4)]:
        A, B, func = _tile_copy(full, shape)
        expected = loops([8], lambda i: loops([4], lambda k: BufferStore(
            B, A[i, k], (i, k)), names="k"))
        after = _apply(LowerOpaqueBlock(), func)
        mlcbench.assert_structural_equal(after, prim_func([A, B], expected))


def test_match_buffer_reshape_is_refused():
    _, _, func = _tile_copy(lambda i: (Range(0, 2), Range(0, 2)), (4,))
    with pytest.raises(CodegenError, match="match_buffer sub"):
        _apply(LowerOpaqueBlock(), func)


def test_nothing_to_lower_returns_same_function():
    A, B = buf("A", (4,)), buf("B", (4,))
    func = prim_func([A, B], loops([4], lambda i: BufferStore(B, A[i], (i,))))
    assert _apply(LowerOpaqueBlock(), func) is func
    assert _apply(ConvertBlocksToOpaque(), func) is func


def test_thread_binding_is_refused_on_cpu():
    A, B = buf("A", (4,)), buf("B", (4,))
    tx = Var("tx")
    loop = For(tx, 0, 4, ForKind.THREAD_BINDING, BufferStore(B, A[tx], (tx,)),
               IterVar(Range(0, 4), tx, IterType.THREAD_INDEX, "threadIdx.x"))
    func = prim_func([A, B], loop)
    with pytest.raises(CodegenError, match="threadIdx.x.*use parallel"):
        _apply(VerifyCPUCompatible(), func)
    serial = prim_func([A, B], loop.replace(kind=ForKind.PARALLEL, thread_binding=None))
    assert _apply(VerifyCPUCompatible(), serial) is serial
