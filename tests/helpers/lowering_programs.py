"""Small TensorIR programs built with the node constructors, and builders to write them.

Builders: ``buf`` (a buffer), ``loops`` (a loop nest around ``body(*vars)``), ``block``
(a BlockRealize with iteration variables ``("S"|"R", extent or (min, extent))``),
``root`` (the root block), ``prim_func`` (params from buffers and scalar Vars).
"""
from __future__ import annotations

from mlcbench import tir
from mlcbench.tir import (Block, BlockRealize, BufferStore, For, ForKind, IterType, IterVar,
                          PrimFunc, Range, Var, const, seq)

_ITER_TYPES = {"S": IterType.DATA_PAR, "R": IterType.COMM_REDUCE}


def buf(name, shape, dtype="float32", scope="global", **kwargs):
    return tir.decl_buffer(shape, dtype, name, scope=scope, **kwargs)


def loops(extents, body, kinds=None, names="ijkl"):
    """``for v0 in extents[0]: for v1 in ...: body(v0, v1, ...)``."""
    loop_vars = [Var(names[k]) for k in range(len(extents))]
    stmt = body(*loop_vars)
    kinds = kinds or ["serial"] * len(extents)
    for var, extent, kind in reversed(list(zip(loop_vars, extents, kinds))):
        stmt = For(var, 0, extent, ForKind(kind), stmt)
    return stmt


def block(name, axes, bindings, body, init=None, predicate=True, alloc=(), match=()):
    iter_vars = []
    for k, (kind, dom) in enumerate(axes):
        low, extent = dom if isinstance(dom, tuple) else (0, dom)
        iter_vars.append(IterVar(Range(const(low), const(extent)), Var(f"v{k}"),
                                 _ITER_TYPES[kind]))
    block_vars = [iv.var for iv in iter_vars]
    init_stmt = init(*block_vars) if init is not None else None
    node = Block(tuple(iter_vars), (), (), name, body(*block_vars), init_stmt, tuple(alloc),
                 tuple(match))
    return BlockRealize(tuple(bindings), predicate, node)


def root(body, alloc=()):
    return BlockRealize((), True, Block((), (), (), "root", seq(body), None, tuple(alloc)))


def prim_func(params, body, name="main"):
    """``params``: Buffers (become handle params) or scalar Vars."""
    handles, buffer_map = [], {}
    for p in params:
        if isinstance(p, tir.Buffer):
            handle = Var(p.name, "handle")
            buffer_map[handle] = p
            handles.append(handle)
        else:
            handles.append(p)
    return PrimFunc(tuple(handles), body, buffer_map, {"global_symbol": name,
                                                      "tir.noalias": True})


# -- programs ------------------------------------------------------------------------

def mm_relu(n=16):
    """``C = relu(A @ B)`` with an intermediate ``Y`` allocated in the root block."""
    A, B, C = buf("A", (n, n)), buf("B", (n, n)), buf("C", (n, n))
    Y = buf("Y", (n, n))
    matmul = loops([n, n, n], lambda i, j, k: block(
        "Y", [("S", n), ("S", n), ("R", n)], [i, j, k],
        lambda vi, vj, vk: BufferStore(Y, Y[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj)),
        init=lambda vi, vj, vk: BufferStore(Y, const(0.0), (vi, vj))))
    relu = loops([n, n], lambda i, j: block(
        "C", [("S", n), ("S", n)], [i, j],
        lambda vi, vj: BufferStore(C, tir.max(Y[vi, vj], const(0.0)), (vi, vj))))
    return prim_func([A, B, C], root([matmul, relu], alloc=[Y]), "mm_relu")


def softmax(rows=4, cols=16):
    """Row-wise softmax; the exp loop is vectorized, the normalization unrolled by 4."""
    A, B = buf("A", (rows, cols)), buf("B", (rows, cols))
    row_max, row_sum, E = buf("row_max", (rows,)), buf("row_sum", (rows,)), buf("E", (rows, cols))
    max_stage = loops([rows, cols], lambda i, k: block(
        "max", [("S", rows), ("R", cols)], [i, k],
        lambda vi, vk: BufferStore(row_max, tir.max(row_max[vi], A[vi, vk]), (vi,)),
        init=lambda vi, vk: BufferStore(row_max, tir.min_value("float32"), (vi,))))
    exp_stage = loops([rows, cols], lambda i, j: block(
        "exp", [("S", rows), ("S", cols)], [i, j],
        lambda vi, vj: BufferStore(E, tir.exp(A[vi, vj] - row_max[vi]), (vi, vj))),
        kinds=["serial", "vectorized"])
    sum_stage = loops([rows, cols], lambda i, k: block(
        "sum", [("S", rows), ("R", cols)], [i, k],
        lambda vi, vk: BufferStore(row_sum, row_sum[vi] + E[vi, vk], (vi,)),
        init=lambda vi, vk: BufferStore(row_sum, const(0.0), (vi,))))
    norm_stage = loops([rows, cols // 4, 4], lambda i, j0, j1: block(
        "norm", [("S", rows), ("S", cols)], [i, j0 * 4 + j1],
        lambda vi, vj: BufferStore(B, E[vi, vj] / row_sum[vi], (vi, vj))),
        kinds=["serial", "serial", "unroll"])
    body = root([max_stage, exp_stage, sum_stage, norm_stage], alloc=[row_max, row_sum, E])
    return prim_func([A, B], body, "softmax")


def vector_add(n=32, lanes=8):
    A, B, C = buf("A", (n,)), buf("B", (n,)), buf("C", (n,))
    body = loops([n // lanes, lanes], lambda i0, i1: block(
        "C", [("S", n)], [i0 * lanes + i1],
        lambda vi: BufferStore(C, A[vi] + B[vi], (vi,))), kinds=["serial", "vectorized"])
    return prim_func([A, B, C], root(body), "vector_add")


def unrolled_scale(n=12, factor=3):
    """``B[i] = A[i] * 2 + 1`` with the inner loop of a split unrolled."""
    A, B = buf("A", (n,)), buf("B", (n,))
    body = loops([n // factor, factor], lambda i0, i1: block(
        "B", [("S", n)], [i0 * factor + i1],
        lambda vi: BufferStore(B, A[vi] * const(2.0) + const(1.0), (vi,))),
        kinds=["serial", "unroll"])
    return prim_func([A, B], root(body), "unrolled_scale")


def split_reduction(n=10, factor=4):
    """``S[0] = sum(A)`` over a reduction loop split by a factor that does not divide it."""
    A, S = buf("A", (n,)), buf("S", (1,))
    outer = -(-n // factor)
    body = loops([outer, factor], lambda k0, k1: block(
        "sum", [("R", n)], [k0 * factor + k1],
        lambda vk: BufferStore(S, S[0] + A[vk], (0,)),
        init=lambda vk: BufferStore(S, const(0.0), (0,)),
        predicate=k0 * factor + k1 < n))
    return prim_func([A, S], root(body), "split_reduction")
