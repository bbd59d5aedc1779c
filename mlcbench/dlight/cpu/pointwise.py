"""Pointwise convolutions in NCHW: output pixels in the vector lanes, weights broadcast.

A 1x1 convolution of stride 1 without padding is the product ``W[F, C] @ X[C, H * W]``
of each image, and NCHW keeps both ``X``'s rows and the output's rows of ``H * W``
pixels contiguous. When the vector lanes divide ``H * W``, the pixels of a row become
the vector axis and output channels the broadcast rows; for ResNet-50's 28x28 128->512
layer with its bias, residual add and relu, on AVX-512::

    acc = T.alloc_buffer((1, 512, 784), scope="local")   # pixels fused: y * 28 + x
    for tile in T.parallel(64 * 49):                     # channel tiles, then pixel tiles
        acc[8, 16] = 0                                   # 8 channels x 16 pixels
        for rc in range(128):
            for f in T.unroll(8):
                for p in T.vectorized(16):               # x[0, rc, p // 28, p % 28]: one load
                    acc[f, p] += x[0, rc, p // 28, p % 28] * w[f, rc, 0, 0]   # w broadcast
        out[...] = T.max(acc[f, p] + bias[f] + residual[...], 0)   # stored row by row

The pixel iterators become one with ``transform_block_layout`` (the accumulator with the
same map through ``transform_layout``), so every index of the tile is plain.

The register tile (see ``tiling``) instead vectorizes output channels, which needs the
weights packed into panels and a transposing write-back of every tile to NCHW; here the
weights are read where they lie and the write-back is plain vector stores. Measured on a
2-core Zen 4 (16 lanes), each ResNet-50 layer against its register tile with the weights
packed once (as a model runs it), in us: 28x28 128->512 with the residual add 636 -> 452,
512->128 576 -> 454, 56x56 64->256 with the residual add 625 -> 463, 256->64 499 -> 456,
256->128 1024 -> 927. The whole model (onnx wheel, batch 1) went from 41.3 to 39.4 ms
(1.07x -> 1.03x onnxruntime's time in the same run), ShuffleNet from 3.30 to 3.08 ms,
DenseNet-121 from 33.9 to 33.2. Rows of pixels that the lanes do not divide (14x14 and
7x7) keep the register tile: partial vectors ran slower.

Axes before the output channel other than the batch (the group of
``topi.nn.group_conv2d_nchw_by_group``, whose input channel is ``g * C + rc``) join the
batch in the parallel loop; ShuffleNet's 28x28 layer of 4 groups of 34 channels (40 with
the padding) took 42-46 us per call in the model this way against 97-103 with the
register tile.
"""
from __future__ import annotations

from ...arith import Analyzer
from ...tir.expr import const
from ...tir.functor import substitute
from ...tir.schedule import Schedule
from ...tir.schedule.ir_utils import const_int
from ..analysis import block_infos, iter_vars_of, multiply_accumulate, total_extent
from .common import float_bits, inline_injective_consumers, inline_injective_producers
from .tiling import PARALLEL_MIN_MACS, _extent, _largest_divisor

# Output channels per tile, one accumulator register each. On the Zen 4 below, 8 ran the
# layers 2-15% faster than 16 (56x56 64->256 with the residual add: 542 -> 463 us), and
# two pixel vectors per channel (8 x 32, where the lanes divide the row twice) were no
# faster than one.
CHANNEL_ROWS = 8
# Vector lanes from which the pixels go in the lanes. Built for AVX2 (8 lanes, 16
# registers) and run on the same host, every tile tried (8 x 8, 4 x 16, 6 x 16) ran
# slower than the register tile: 56x56 256->128 1.22 -> 1.60-2.12 ms.
MIN_LANES = 16


def pixel_lanes(func, target):
    """The schedule above for a pointwise NCHW convolution whose pixels per image the
    target's vector lanes divide, else None."""
    sch = Schedule(func)
    inline_injective_producers(sch)
    found = _pointwise_nchw(sch)
    if found is None:
        return None
    info, (*lead_ivs, f_iv, y_iv, x_iv) = found
    lanes = target.vector_lanes(float_bits(info))
    height, width = _extent(y_iv), _extent(x_iv)
    rows = _channel_rows(_extent(f_iv))
    if lanes < MIN_LANES or (height * width) % lanes or rows is None:
        return None
    names = [iv.var.name for iv in info.block.iter_vars]
    at = names.index(y_iv.var.name)

    def fused(*idx):
        return (*idx[:at], idx[at] * width + idx[at + 1], *idx[at + 2:])

    def pixels(*idx):
        return (*idx[:-2], idx[-2] * width + idx[-1])

    block = info.rv
    work = total_extent(sch, sch.get_loops(block)) or 0
    writeback = sch.cache_write(block, 0, "local")
    sch.transform_layout(block, ("write", 0), pixels)
    inline_injective_consumers(sch, writeback)
    sch.transform_block_layout(block, fused)
    sch.transform_block_layout(writeback, pixels)
    # One loop per iterator, in the block's order with ``x`` merged into ``y``.
    loop_of = dict(zip([nm for nm in names if nm != x_iv.var.name], sch.get_loops(block)))
    lead = [loop_of[iv.var.name] for iv in lead_ivs]
    f, p = (loop_of[iv.var.name] for iv in (f_iv, y_iv))
    reduce = [loop_of[iv.var.name] for iv in info.block.iter_vars
              if iv.iter_type.name != "DATA_PAR"]
    f0, f1 = sch.split(f, [None, rows])
    p0, p1 = sch.split(p, [None, lanes])
    sch.reorder(*lead, f0, p0, *reduce, f1, p1)
    outer = sch.fuse(*lead, f0, p0)
    if work >= PARALLEL_MIN_MACS:
        sch.parallel(outer)
    sch.unroll(f1)
    sch.vectorize(p1)
    sch.reverse_compute_at(writeback, outer)
    copy = sch.get_loops(writeback)
    for loop in copy[1:-1]:
        sch.unroll(loop)
    sch.vectorize(copy[-1])
    init = sch.decompose_reduction(block, reduce[0])
    sch.vectorize(sch.get_loops(init)[-1])
    return sch


def _pointwise_nchw(sch):
    """``(info, (*outer, f, y, x))`` for the one reduction block when it is a 1x1
    convolution of stride 1 in NCHW reading the whole input rows (no padding, no crop),
    else None; ``outer`` is the batch and any axis before the channel (a group)."""
    reductions = [i for i in block_infos(sch) if not i.is_injective]
    if len(reductions) != 1:
        return None
    info = reductions[0]
    loads = multiply_accumulate(info)
    # Tiles are chosen from known sizes (a symbolic batch cannot be fused into the tiles).
    if loads is None or not all(hasattr(iv.dom.extent, "value")
                                for iv in info.block.iter_vars):
        return None
    by_var = {iv.var: iv for iv in info.block.iter_vars}
    axes = [by_var.get(i) for i in info.store.indices]
    if len(axes) < 4 or None in axes or len(set(map(id, axes))) != len(axes) \
            or any(iv.iter_type.name != "DATA_PAR" for iv in axes):
        return None
    names = [iv.var.name for iv in info.block.iter_vars]
    y, x = axes[-2], axes[-1]
    if names.index(x.var.name) != names.index(y.var.name) + 1:
        return None
    reduce = [iv for iv in info.block.iter_vars if iv.iter_type.name != "DATA_PAR"]
    window = [iv for iv in reduce if _extent(iv) == 1]
    if len(reduce) - len(window) != 1:
        return None
    zero = {iv.var for iv in window}
    pixels = [ld for ld in loads if _plain_pixels(ld, y, x, zero)]
    others = [ld for ld in loads if ld not in pixels]
    if len(pixels) != 1 or len(others) != 1:
        return None
    source = pixels[0].buffer
    if [const_int(s) for s in source.shape[-2:]] != [_extent(y), _extent(x)]:
        return None
    if iter_vars_of(others[0]) & {y.var, x.var}:
        return None
    return info, tuple(axes)


def _plain_pixels(load, y, x, zero: set) -> bool:
    """True when the load's last two indices are ``y`` and ``x`` once the unit window
    iterators are taken as 0 (``yy + ry`` with ``ry`` in ``[0, 1)``)."""
    if len(load.indices) < 2:
        return False
    analyzer = Analyzer()
    subst = {v: const(0, v.dtype) for v in zero}
    last = [analyzer.simplify(substitute(i, subst)) for i in load.indices[-2:]]
    return last[0] is y.var and last[1] is x.var


def _channel_rows(channels: int):
    """The largest divisor of ``channels`` up to ``CHANNEL_ROWS``, at least 4, else None."""
    return _largest_divisor(channels, 4, CHANNEL_ROWS)
