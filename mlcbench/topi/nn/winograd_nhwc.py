"""Winograd convolution F(m x m, 3 x 3) in NHWC, as three kernels with a matmul between.

Channels are the last axis of the input, of the output and of every intermediate, so
each stage reads and writes whole vectors of channels::

    data_pack[e, p, ci]   = (B^T d_p B)[e // alpha, e % alpha]    input transform
    bgemm[e, p, co]       = sum_ci data_pack[e, p, ci] * U[e, ci, co]
    out[n, h, w, co]      = (A^T bgemm[:, p, co] A)[h % m, w % m]  output transform

``p`` numbers the ``m x m`` output tiles (image, tile row, tile column) and ``e`` the
``alpha x alpha`` positions of a transformed tile (``alpha = m + 2``). The product is a
plain batched matmul (``topi.nn.batch_matmul``, ``transpose_b=False``), so the matmul
schedule and its prepacked weights serve it; ``U = G g G^T`` is the transformed weight
(:func:`winograd_nhwc_weight` for a constant, in float64 and rounded once;
:func:`conv2d_winograd_nhwc_weight_transform` as a TE stage).

Each 2-D transform is two 1-D passes per tile (``winograd_patch_rows`` then
``winograd_data_pack``; ``winograd_inverse_rows`` then ``winograd_inverse_tile``), each
position's value chosen by its position variable among sums of the non-zero matrix
entries: a schedule that unrolls the position loop keeps only those terms. The input
transform first gathers each tile's patch (``winograd_patch``), the output transform
ends with a gather of each tile's ``m x m`` outputs into the image (``winograd_inverse``),
so the passes read their operands at constant offsets.
"""
from __future__ import annotations

import numpy as np

from ...ir.errors import InvalidValueError
from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import const
from ..utils import const_int
from .conv2d import get_pad_tuple
from .dense import batch_matmul
from .pad import pad
from .winograd import _check_tile, _check_window, _select, winograd_tile_count
from .winograd_util import winograd_matrices_exact, winograd_transform_matrices

__all__ = ["conv2d_winograd_nhwc", "conv2d_winograd_nhwc_weight_transform",
           "winograd_nhwc_data_pack", "winograd_nhwc_inverse", "winograd_nhwc_weight"]

DATA_PACK, PATCH, PATCH_ROWS = "winograd_data_pack", "winograd_patch", "winograd_patch_rows"
INVERSE, INVERSE_TILE, INVERSE_ROWS = ("winograd_inverse", "winograd_inverse_tile",
                                       "winograd_inverse_rows")


def _terms(matrix, i: int, j: int) -> list:
    """``[(coefficient, a, b)]``: the non-zero ``matrix[a][i] * matrix[b][j]``."""
    return [(row_a[i] * row_b[j], a, b) for a, row_a in enumerate(matrix)
            for b, row_b in enumerate(matrix) if row_a[i] * row_b[j] != 0]


def _column(matrix, i: int) -> list:
    """``[(coefficient, a, 0)]``: the non-zero ``matrix[a][i]``."""
    return [(row[i], a, 0) for a, row in enumerate(matrix) if row[i] != 0]


def _sum(terms: list, load, dtype: str):
    expr = None
    for coefficient, a, b in terms:
        term = load(a, b) if coefficient == 1 else load(a, b) * const(float(coefficient), dtype)
        expr = term if expr is None else expr + term
    return expr if expr is not None else const(0.0, dtype)


def _by_position(matrix, position, load, dtype: str):
    """``sum_a matrix[a][position] * load(a)`` over the non-zero entries, chosen by the
    loop variable ``position``."""
    table = {(i,): _sum(_column(matrix, i), lambda a, _: load(a), dtype)
             for i in range(len(matrix[0]))}
    return _select((position,), table, const(0.0, dtype))


def _check_data(data: Tensor, where: str) -> tuple:
    if data.ndim != 4:
        raise InvalidValueError(f"{where}: expected NHWC data, found rank {data.ndim}")
    return tuple(const_int(d) for d in data.shape)


def _out_size(in_h: int, in_w: int, padding, where: str) -> tuple:
    top, left, bottom, right = get_pad_tuple(padding, (3, 3))
    out_h, out_w = in_h + top + bottom - 2, in_w + left + right - 2
    if out_h <= 0 or out_w <= 0:
        raise InvalidValueError(f"{where}: the 3x3 window does not fit the padded input "
                                f"{in_h + top + bottom}x{in_w + left + right}")
    return (top, left), (out_h, out_w)


def winograd_nhwc_data_pack(data: Tensor, padding, tile_size: int = 4) -> Tensor:
    """``B^T d B`` of every tile's ``alpha x alpha`` input patch: (alpha^2, tiles,
    in_c), for NHWC ``data`` and the convolution's ``padding``."""
    where = "winograd_nhwc_data_pack"
    batch, in_h, in_w, in_c = _check_data(data, where)
    m = _check_tile(tile_size)
    (top, left), (out_h, out_w) = _out_size(in_h, in_w, padding, where)
    tiles_h, tiles_w = winograd_tile_count(out_h, out_w, m)
    # Rows and columns after the data so that the last tiles read zeros, not past it.
    data_pad = pad(data, (0, top, left, 0), (0, tiles_h * m + 2 - in_h - top,
                                             tiles_w * m + 2 - in_w - left, 0),
                   name="data_pad")
    _, b_mat, _ = winograd_matrices_exact(m)
    alpha, per_image = m + 2, tiles_h * tiles_w
    # Each tile's patch gathered first: the transform then reads it at constant offsets,
    # and a schedule computes it next to the transform, one vector of channels at a time.
    patch = compute((batch * per_image, alpha, alpha, in_c), lambda p, a, b, ci: data_pad[
        p // per_image, p % per_image // tiles_w * m + a, p % tiles_w * m + b, ci],
        name=PATCH, tag="winograd_input_transform")

    # B^T d B in two 1-D passes: the patch's columns, then its rows.
    rows = compute((batch * per_image, alpha, alpha, in_c), lambda p, eps, b, ci: _by_position(
        b_mat, eps, lambda a: patch[p, a, b, ci], data.dtype), name=PATCH_ROWS,
        tag="winograd_input_transform")
    return compute((alpha * alpha, batch * per_image, in_c), lambda e, p, ci: _by_position(
        b_mat, e % alpha, lambda b: rows[p, e // alpha, b, ci], data.dtype), name=DATA_PACK,
        tag="winograd_input_transform")


def winograd_nhwc_inverse(bgemm: Tensor, out_shape, tile_size: int = 4) -> Tensor:
    """``A^T Y A`` of every tile of ``bgemm`` (alpha^2, tiles, out_c), laid out as the
    NHWC output of ``out_shape`` (batch, height, width, out_c)."""
    where = "winograd_nhwc_inverse"
    m = _check_tile(tile_size)
    alpha = m + 2
    batch, out_h, out_w, out_c = (int(d) for d in out_shape)
    tiles_h, tiles_w = winograd_tile_count(out_h, out_w, m)
    expected = (alpha * alpha, batch * tiles_h * tiles_w, out_c)
    found = tuple(const_int(d) for d in bgemm.shape)
    if found != expected:
        raise InvalidValueError(f"{where}: expected a product of shape {expected} for an "
                                f"output of {tuple(out_shape)} with tile size {m}, found "
                                f"{found}")
    a_mat, _, _ = winograd_matrices_exact(m)
    # A^T Y A of each tile in two 1-D passes (the product's columns, then its rows), its
    # m x m outputs read back into the image by a gather.
    rows = compute((batch * tiles_h * tiles_w, m, alpha, out_c), lambda p, i, b, co:
                   _by_position(a_mat, i, lambda a: bgemm[a * alpha + b, p, co], bgemm.dtype),
                   name=INVERSE_ROWS, tag="winograd_output_transform")
    tile = compute((batch * tiles_h * tiles_w, m, m, out_c), lambda p, i, j, co: _by_position(
        a_mat, j, lambda b: rows[p, i, b, co], bgemm.dtype), name=INVERSE_TILE,
        tag="winograd_output_transform")
    return compute((batch, out_h, out_w, out_c), lambda n, h, w, co: tile[
        n * tiles_h * tiles_w + h // m * tiles_w + w // m, h % m, w % m, co],
        name=INVERSE, tag="winograd_output_transform")


def winograd_nhwc_weight(weight: np.ndarray, tile_size: int = 4) -> np.ndarray:
    """``G g G^T`` of an HWIO 3x3 weight as a constant (alpha^2, in_c, out_c), computed
    in float64 and rounded once to the weight's dtype."""
    if weight.ndim != 4 or weight.shape[:2] != (3, 3):
        raise InvalidValueError(f"winograd_nhwc_weight: expected an HWIO weight of shape "
                                f"(3, 3, in_c, out_c), found {weight.shape}")
    _, _, g = winograd_transform_matrices(_check_tile(tile_size), dtype="float64")
    u = np.einsum("ea,abio,nb->enio", g, weight.astype("float64"), g)
    return u.reshape(-1, *weight.shape[2:]).astype(weight.dtype)


def conv2d_winograd_nhwc_weight_transform(kernel: Tensor, tile_size: int = 4) -> Tensor:
    """``G g G^T`` of an HWIO ``kernel`` as a TE stage: (alpha^2, in_c, out_c)."""
    where = "conv2d_winograd_nhwc_weight_transform"
    shape = tuple(const_int(d) for d in kernel.shape)
    if len(shape) != 4 or shape[:2] != (3, 3):
        raise InvalidValueError(f"{where}: expected an HWIO weight of shape (3, 3, in_c, "
                                f"out_c), found {shape}")
    _, _, g = winograd_matrices_exact(_check_tile(tile_size))
    alpha = len(g)
    g_t = [list(col) for col in zip(*g)]          # rows: taps, columns: positions

    def fcompute(e, ci, co):
        table = {(k,): _sum(_terms(g_t, k // alpha, k % alpha),
                            lambda a, b: kernel[a, b, ci, co], kernel.dtype)
                 for k in range(alpha * alpha)}
        return _select((e,), table, const(0.0, kernel.dtype))

    return compute((alpha * alpha, shape[2], shape[3]), fcompute, name="kernel_pack",
                   tag="winograd_weight_transform")


def conv2d_winograd_nhwc(data: Tensor, kernel: Tensor, strides, padding, dilation,
                         out_dtype=None, tile_size: int = 4) -> Tensor:
    """NHWC convolution with an HWIO 3x3 ``kernel``, stride 1, dilation 1, any padding,
    by Winograd F(tile_size x tile_size, 3x3) (tile size 2, 4 or 6), in one TE graph:
    weight transform, input transform, batched product, output transform."""
    where = "conv2d_winograd_nhwc"
    batch, in_h, in_w, in_c = _check_data(data, where)
    _check_window(data, strides, dilation, where)
    if tuple(const_int(d) for d in kernel.shape[:3]) != (3, 3, in_c):
        raise InvalidValueError(f"{where}: expected an HWIO weight of shape (3, 3, {in_c}, "
                                f"out_c), found {tuple(kernel.shape)}")
    _, (out_h, out_w) = _out_size(in_h, in_w, padding, where)
    packed = winograd_nhwc_data_pack(data, padding, tile_size)
    weight = conv2d_winograd_nhwc_weight_transform(kernel, tile_size)
    product = batch_matmul(packed, weight, out_dtype=out_dtype, transpose_b=False)
    return winograd_nhwc_inverse(product, (batch, out_h, out_w, const_int(kernel.shape[3])),
                                 tile_size)
