"""Matrix products: ``dense`` (weight in (out, in) layout), ``matmul``, ``batch_matmul``.

``dense(x, w)`` is block ``T_matmul_NT``: ``out[i, j] = sum_k x[i, k] * w[j, k]``; the
suffix names which operands are transposed (N: as stored, T: transposed).
"""
from __future__ import annotations

from ...ir.errors import IRError
from ...te import reduce_axis, sum as te_sum
from ...te.operation import compute, compute_with_axis_names
from ...te.tensor import Tensor
from ..broadcast import broadcast_shape
from ..utils import const_int


def _check_inner(a_extent, b_extent, where: str) -> None:
    if not bool(a_extent == b_extent):
        raise IRError(f"{where}: reduction extents differ ({a_extent} against {b_extent})")


def _pick(a: Tensor, transpose: bool, row, k):
    return a[k, row] if transpose else a[row, k]


def matmul(tensor_a: Tensor, tensor_b: Tensor, bias: Tensor | None = None, out_dtype=None,
           transpose_a: bool = False, transpose_b: bool = False) -> Tensor:
    """``op(a) @ op(b)`` (+ ``bias``), ``op`` transposing when asked.

    Rank-2 operands give TVM's ``T_matmul_NN``/``NT``/``TN``/``TT`` block; higher ranks
    multiply the last two axes and broadcast the leading (batch) axes like numpy.
    """
    if tensor_a.ndim > 2 or tensor_b.ndim > 2:
        return batch_matmul(tensor_a, tensor_b, out_dtype=out_dtype, transpose_a=transpose_a,
                            transpose_b=transpose_b)
    out_dtype = out_dtype or tensor_a.dtype
    rows = tensor_a.shape[1] if transpose_a else tensor_a.shape[0]
    in_dim = tensor_a.shape[0] if transpose_a else tensor_a.shape[1]
    cols = tensor_b.shape[0] if transpose_b else tensor_b.shape[1]
    _check_inner(in_dim, tensor_b.shape[1] if transpose_b else tensor_b.shape[0], "matmul")
    k = reduce_axis((0, in_dim), name="k")
    suffix = ("T" if transpose_a else "N") + ("T" if transpose_b else "N")
    mat = compute((rows, cols), lambda i, j: te_sum(
        _pick(tensor_a, transpose_a, i, k).astype(out_dtype)
        # _pick indexes (row, k); an untransposed b holds its column index j second.
        * _pick(tensor_b, not transpose_b, j, k).astype(out_dtype), axis=k),
        name=f"T_matmul_{suffix}", tag="dense" if suffix == "NT" else "matmul")
    if bias is not None:
        mat = compute((rows, cols), lambda i, j: mat[i, j] + bias[j].astype(out_dtype),
                      tag="broadcast")
    return mat


def dense(data: Tensor, weight: Tensor, bias: Tensor | None = None, out_dtype=None) -> Tensor:
    """``data @ weight.T (+ bias)`` with ``weight`` of shape (out_features, in_features)."""
    return matmul(data, weight, bias, out_dtype, transpose_a=False, transpose_b=True)


def batch_matmul(tensor_a: Tensor, tensor_b: Tensor, oshape=None, out_dtype=None,
                 transpose_a: bool = False, transpose_b: bool = True) -> Tensor:
    """Batched ``op(a) @ op(b)`` over leading axes (numpy broadcasting of batch axes).

    TVM's default is ``transpose_b=True`` (both operands (batch, rows, k)); block
    ``T_batch_matmul_NT``.
    """
    if tensor_a.ndim < 2 or tensor_b.ndim < 2:
        raise IRError("batch_matmul: operands need at least 2 dimensions, found "
                      f"{tensor_a.ndim} and {tensor_b.ndim}")
    out_dtype = out_dtype or tensor_a.dtype
    a_batch, b_batch = tensor_a.shape[:-2], tensor_b.shape[:-2]
    batch = broadcast_shape(a_batch, b_batch, "batch_matmul")
    a_rows, a_k = tensor_a.shape[-2:][::-1] if transpose_a else tensor_a.shape[-2:]
    b_k, b_cols = tensor_b.shape[-2:][::-1] if transpose_b else tensor_b.shape[-2:]
    _check_inner(a_k, b_k, "batch_matmul")
    k = reduce_axis((0, a_k), name="k")
    suffix = ("T" if transpose_a else "N") + ("T" if transpose_b else "N")

    def operand(t, idx, row, transpose):
        lead = _batch_index(t, batch, idx)
        return t[lead + ((k, row) if transpose else (row, k))]

    def fcompute(*idx):
        i, j = idx[-2], idx[-1]
        return te_sum(operand(tensor_a, idx[:-2], i, transpose_a).astype(out_dtype)
                      * operand(tensor_b, idx[:-2], j, not transpose_b).astype(out_dtype),
                      axis=k)

    shape = tuple(batch) + (a_rows, b_cols)
    names = (["b"] if len(batch) == 1 else [f"b{d}" for d in range(len(batch))]) + ["i", "j"]
    return compute_with_axis_names(shape, fcompute, names, f"T_batch_matmul_{suffix}",
                                   "batch_matmul")


def _batch_index(t: Tensor, batch, idx) -> tuple:
    """Indices of ``t``'s batch axes for output batch ``idx``; stretched axes read 0."""
    nb = t.ndim - 2
    lead = []
    for d in range(nb):
        out_d = len(batch) - nb + d
        # A broadcast extent-1 axis reads index 0 whatever the output batch index is.
        stretched = const_int(t.shape[d]) == 1 and const_int(batch[out_d]) != 1
        lead.append(0 if stretched else idx[out_d])
    return tuple(lead)
