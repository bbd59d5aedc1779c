"""Winograd convolution F(m x m, 3 x 3) in NCHW, as TVM's ``conv2d_winograd_nchw``.

The output is cut into ``m x m`` tiles, each read from an ``alpha x alpha`` input patch
(``alpha = m + 2``); per tile the 3x3 convolution becomes ``alpha^2`` products instead
of ``9 m^2``::

    kernel_pack[eps, nu, co, ci] = (G g G^T)[eps, nu]              weight transform
    data_pack[eps, nu, ci, p]    = (B^T d_p B)[eps, nu]             input transform
    bgemm[eps, nu, co, p]        = sum_ci kernel_pack * data_pack   alpha^2 batched products
    inverse[co, p, vh, vw]       = (A^T bgemm A)[vh, vw]            output transform
    conv2d_winograd[n, co, h, w] = inverse[co, tile of (n, h, w), h % m, w % m]

The weight transform is its own function (:func:`conv2d_winograd_weight_transform`), so
a constant weight can be transformed once and the convolution called on the result
(:func:`conv2d_winograd_without_weight_transform`). Each 2-D transform is two stages,
columns then rows (``kernel_pack_rows``, ``data_pack_rows``, ``inverse_rows`` first),
each the sum of the non-zero entries of one matrix column, chosen by ``if_then_else`` on
the position: once a schedule unrolls the position loop the choices fold away and only
the non-zero terms are left.
"""
from __future__ import annotations

from typing import NamedTuple

from ...ir.errors import InvalidValueError
from ...te import reduce_axis, sum as te_sum
from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import const
from ...tir.op import if_then_else
from ..utils import const_int
from .conv2d import _pair, get_pad_tuple
from .pad import pad
from .winograd_util import TILE_SIZES, winograd_matrices_exact

__all__ = ["conv2d_winograd_nchw", "conv2d_winograd_weight_transform",
           "conv2d_winograd_without_weight_transform", "winograd_tile_count"]


def _select(position: tuple, table: dict, default):
    """``table[position]`` for a position of loop variables, as nested if_then_else."""
    expr = default
    for key, value in reversed(list(table.items())):
        cond = None
        for var, k in zip(position, key):
            term = var == k
            cond = term if cond is None else cond & term
        expr = if_then_else(cond, value, expr)
    return expr


def _linear(matrix, position, load, dtype: str):
    """``sum_a matrix[a][position] * load(a)`` over the non-zero entries, chosen by
    ``position`` (a loop variable) with one if_then_else per value it takes."""
    table = {}
    for i in range(len(matrix[0])):
        expr = None
        for a, row in enumerate(matrix):
            if row[i] == 0:
                continue
            term = load(a) if row[i] == 1 else load(a) * const(float(row[i]), dtype)
            expr = term if expr is None else expr + term
        table[(i,)] = expr if expr is not None else const(0.0, dtype)
    return _select((position,), table, const(0.0, dtype))


def _check_kernel(kernel: Tensor, where: str) -> tuple:
    if kernel.ndim != 4:
        raise InvalidValueError(f"{where}: expected an OIHW kernel, found rank {kernel.ndim}")
    out_c, in_c, kh, kw = (const_int(d) for d in kernel.shape)
    if (kh, kw) != (3, 3):
        raise InvalidValueError(f"{where}: Winograd needs a 3x3 kernel, found {kh}x{kw}")
    return out_c, in_c


def _check_tile(tile_size) -> int:
    if tile_size not in TILE_SIZES:
        raise InvalidValueError(f"winograd: tile size must be one of {TILE_SIZES}, found "
                                f"{tile_size!r}")
    return tile_size


def conv2d_winograd_weight_transform(kernel: Tensor, tile_size: int) -> Tensor:
    """``G g G^T`` of each 3x3 filter: (alpha, alpha, out_c, in_c), as in TVM."""
    out_c, in_c = _check_kernel(kernel, "conv2d_winograd_weight_transform")
    _, _, g = winograd_matrices_exact(_check_tile(tile_size))
    alpha = len(g)
    g_t = [list(col) for col in zip(*g)]         # rows: taps, columns: positions
    dtype = kernel.dtype
    # Rows first, then columns: two small sums instead of one over all 9 taps.
    rows = compute((alpha, 3, out_c, in_c), lambda eps, b, co, ci: _linear(
        g_t, eps, lambda a: kernel[co, ci, a, b], dtype), name="kernel_pack_rows",
        tag="winograd_weight_transform")
    return compute((alpha, alpha, out_c, in_c), lambda eps, nu, co, ci: _linear(
        g_t, nu, lambda b: rows[eps, b, co, ci], dtype), name="kernel_pack",
        tag="winograd_weight_transform")


def winograd_tile_count(out_h: int, out_w: int, tile_size: int) -> tuple:
    """``(tiles per column, tiles per row)`` covering an ``out_h x out_w`` output."""
    return (-(-out_h // tile_size), -(-out_w // tile_size))


def _check_window(data: Tensor, strides, dilation, where: str) -> None:
    if data.ndim != 4:
        raise InvalidValueError(f"{where}: expected NCHW data, found rank {data.ndim}")
    if _pair(strides, "stride") != (1, 1):
        raise InvalidValueError(f"{where}: Winograd needs stride 1, found {strides!r}")
    if _pair(dilation, "dilation") != (1, 1):
        raise InvalidValueError(f"{where}: Winograd needs dilation 1, found {dilation!r}")


class _Tiling(NamedTuple):
    """How the output is cut into ``m x m`` tiles: ``count`` tiles, ``rounded`` up to
    the tile multiple, ``per_image`` of them per image, ``wide`` per tile row."""
    m: int
    count: int
    rounded: int
    per_image: int
    wide: int


def _tiling(data: Tensor, padding, tile_size: int, tile_multiple, where: str):
    """The padded input the tiles read and their :class:`_Tiling`."""
    batch, _, in_h, in_w = (const_int(d) for d in data.shape)
    top, left, bottom, right = get_pad_tuple(padding, (3, 3))
    out_h, out_w = in_h + top + bottom - 2, in_w + left + right - 2
    if out_h <= 0 or out_w <= 0:
        raise InvalidValueError(f"{where}: the 3x3 window does not fit the padded input "
                                f"{in_h + top + bottom}x{in_w + left + right}")
    if isinstance(tile_multiple, bool) or not isinstance(tile_multiple, int) or \
            tile_multiple < 1:
        raise InvalidValueError(f"{where}: tile_multiple must be a positive int, found "
                                f"{tile_multiple!r}")
    m = tile_size
    tiles_h, tiles_w = winograd_tile_count(out_h, out_w, m)
    # Extra rows and columns after the data so the last tiles read zeros, not past it.
    data_pad = pad(data, (0, 0, top, left), (0, 0, tiles_h * m + 2 - in_h - top,
                                            tiles_w * m + 2 - in_w - left), name="data_pad")
    count = batch * tiles_h * tiles_w
    rounded = -(-count // tile_multiple) * tile_multiple
    return data_pad, (out_h, out_w), _Tiling(m, count, rounded, tiles_h * tiles_w, tiles_w)


def _input_transform(data_pad: Tensor, b_mat, tiling: _Tiling) -> Tensor:
    """``B^T d B`` of every tile's patch: (alpha, alpha, in_c, rounded tile count)."""
    alpha, in_c, dtype, t = len(b_mat), data_pad.shape[1], data_pad.dtype, tiling

    def frows(eps, b, ci, p):
        n, y, x = p // t.per_image, p % t.per_image // t.wide, p % t.wide
        value = _linear(b_mat, eps, lambda a: data_pad[n, ci, y * t.m + a, x * t.m + b],
                        dtype)
        return value if t.rounded == t.count else if_then_else(p < t.count, value,
                                                               const(0.0, dtype))

    # The patch's columns first, then its rows.
    data_rows = compute((alpha, alpha, in_c, t.rounded), frows, name="data_pack_rows",
                        tag="winograd_input_transform")
    return compute((alpha, alpha, in_c, t.rounded), lambda eps, nu, ci, p: _linear(
        b_mat, nu, lambda b: data_rows[eps, b, ci, p], dtype), name="data_pack",
        tag="winograd_input_transform")


def _output_transform(bgemm: Tensor, a_mat, tiling: _Tiling, batch, out_hw) -> Tensor:
    """``A^T Y A`` of every tile, laid out back as the NCHW output."""
    alpha, out_c, dtype, t = len(a_mat), bgemm.shape[2], bgemm.dtype, tiling
    inverse_rows = compute((t.m, alpha, out_c, t.count), lambda vh, b, co, p: _linear(
        a_mat, vh, lambda a: bgemm[a, b, co, p], dtype), name="inverse_rows",
        tag="winograd_output_transform")
    inverse = compute((out_c, t.count, t.m, t.m), lambda co, p, vh, vw: _linear(
        a_mat, vw, lambda b: inverse_rows[vh, b, co, p], dtype), name="inverse",
        tag="winograd_output_transform")
    return compute((batch, out_c) + tuple(out_hw), lambda n, co, h, w: inverse[
        co, n * t.per_image + h // t.m * t.wide + w // t.m, h % t.m, w % t.m],
        name="conv2d_winograd", tag="conv2d_winograd_nchw")


def conv2d_winograd_without_weight_transform(data: Tensor, kernel_pack: Tensor, strides,
                                             padding, dilation, out_dtype=None,
                                             tile_size: int = 4,
                                             tile_multiple: int = 1) -> Tensor:
    """The convolution of NCHW ``data`` with a weight already transformed by
    :func:`conv2d_winograd_weight_transform` with the same ``tile_size``.

    ``tile_multiple`` rounds the batched product's tile count up to a multiple of it
    (the extra tiles are zeros), so a schedule can split it into whole vectors: a
    vector loop with a bound test in every iteration does not vectorize."""
    where = "conv2d_winograd_without_weight_transform"
    _check_window(data, strides, dilation, where)
    out_dtype = out_dtype or data.dtype
    a_mat, b_mat, _ = winograd_matrices_exact(_check_tile(tile_size))
    alpha, in_c = len(b_mat), const_int(data.shape[1])
    if tuple(const_int(d) for d in kernel_pack.shape[:2]) != (alpha, alpha) or \
            const_int(kernel_pack.shape[3]) != in_c:
        raise InvalidValueError(f"{where}: expected a weight of shape ({alpha}, {alpha}, "
                                f"out_c, {in_c}) for tile size {tile_size}, found "
                                f"{tuple(kernel_pack.shape)}")
    data_pad, out_hw, tiling = _tiling(data, padding, tile_size, tile_multiple, where)
    data_pack = _input_transform(data_pad, b_mat, tiling)
    rc = reduce_axis((0, in_c), name="rc")
    bgemm = compute((alpha, alpha, kernel_pack.shape[2], tiling.rounded),
                    lambda eps, nu, co, p: te_sum(
                        kernel_pack[eps, nu, co, rc].astype(out_dtype)
                        * data_pack[eps, nu, rc, p].astype(out_dtype), axis=rc),
                    name="bgemm", tag="winograd_batched_product")
    return _output_transform(bgemm, a_mat, tiling, data.shape[0], out_hw)


def conv2d_winograd_nchw(data: Tensor, kernel: Tensor, strides, padding, dilation,
                         out_dtype=None, tile_size: int = 4, tile_multiple: int = 1) -> Tensor:
    """NCHW convolution with an OIHW 3x3 ``kernel``, stride 1, dilation 1, any padding,
    by Winograd F(tile_size x tile_size, 3x3) (tile size 2, 4 or 6); ``tile_multiple``
    as in :func:`conv2d_winograd_without_weight_transform`."""
    _check_window(data, strides, dilation, "conv2d_winograd_nchw")
    _check_kernel(kernel, "conv2d_winograd_nchw")
    kernel_pack = conv2d_winograd_weight_transform(kernel, tile_size)
    return conv2d_winograd_without_weight_transform(data, kernel_pack, strides, padding,
                                                    dilation, out_dtype, tile_size,
                                                    tile_multiple)
