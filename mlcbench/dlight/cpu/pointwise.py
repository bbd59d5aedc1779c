"""Pointwise convolutions in NCHW: output pixels in the vector lanes, weights broadcast.

A 1x1 convolution of stride 1 without padding is the product ``W[F, C] @ X[C, H * W]``
of each image, and NCHW keeps both ``X``'s rows and the output's rows of ``H * W``
pixels contiguous. When the vector lanes divide ``H * W``, the pixels of a row become
the vector axis and output channels the broadcast rows. Each task takes a tile of
pixels, copies them for every input channel into a panel, and runs all channel tiles
over it; for ResNet-50's 56x56 64->256 layer with its bias, residual add and relu, on
AVX-512::

    acc = T.alloc_buffer((1, 256, 3136), scope="local")  # pixels fused: y * 56 + x
    for p0 in T.parallel(98):                            # tiles of 32 pixels
        for rc, p in T.grid(64, T.vectorized(32)):       # this task's panel
            x_global[0, p0, rc, p] = x[0, rc, (p0 * 32 + p) // 56, (p0 * 32 + p) % 56]
        for f0 in range(32):                             # channel tiles
            acc[8, 32] = 0                               # 8 channels x 2 pixel vectors
            for rc in range(64):
                for f in T.unroll(8):
                    for p in T.vectorized(32):           # one contiguous load
                        acc[f, p] += x_global[0, p0, rc, p] * w[f0 * 8 + f, rc, 0, 0]
            out[...] = T.max(acc[f, p] + bias[f] + residual[...], 0)   # row by row

With too few pixel tiles for the threads, channel and pixel tiles share the parallel
loop and the input is read where it lies (one vector of pixels per tile row).

The pixel iterators become one with ``transform_block_layout`` (the accumulator with the
same map through ``transform_layout``), so every index of the tile is plain.

The register tile (see ``tiling``) instead vectorizes output channels, which needs the
weights packed into panels and a transposing write-back of every tile to NCHW; here the
weights are read where they lie and the write-back is plain vector stores. Measured on a
2-core Zen 4 (16 lanes), with the input read in place (before the panels), each
ResNet-50 layer against its register tile with the weights packed once (as a model runs
it), in us: 28x28 128->512 with the residual add 636 -> 452, 512->128 576 -> 454, 56x56
64->256 with the residual add 625 -> 463, 256->64 499 -> 456, 256->128 1024 -> 927. The
whole model (onnx wheel, batch 1) went from 41.3 to 39.4 ms (1.07x -> 1.03x
onnxruntime's time in the same run), ShuffleNet from 3.30 to 3.08 ms, DenseNet-121 from
33.9 to 33.2. Rows of pixels that the lanes do not divide (14x14 and 7x7) keep the
register tile: partial vectors ran slower.

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
from .tiling import PARALLEL_MIN_MACS, PARALLEL_MIN_TILES, _extent, _largest_divisor

# Output channels per tile. On the Zen 4 below, with the input read in place, 8 ran the
# layers 2-15% faster than 16 (56x56 64->256 with the residual add: 542 -> 463 us), and
# two pixel vectors per channel (8 x 32, where the lanes divide the row twice) were no
# faster than one.
CHANNEL_ROWS = 8
# Vectors of pixels per tile row when the input is packed into panels, where the lanes
# divide the image's pixels that many times (else one).
PANEL_VECTORS = 2
# Vector lanes from which the pixels go in the lanes. Built for AVX2 (8 lanes, 16
# registers) and run on the same host, every tile tried (8 x 8, 4 x 16, 6 x 16) ran
# slower than the register tile: 56x56 256->128 1.22 -> 1.60-2.12 ms.
MIN_LANES = 16


def pixel_lanes(func, target):
    """The schedule above for a pointwise NCHW convolution whose pixels per image the
    target's vector lanes divide, else None: with the input packed into panels in the
    tasks where there are enough pixel tiles for the threads (:func:`_packed_panels`),
    else the input read in place."""
    sch = Schedule(func)
    inline_injective_producers(sch)
    found = _pointwise_nchw(sch)
    if found is None:
        return None
    info, axes, source = found
    *lead_ivs, f_iv, y_iv, x_iv = axes
    lanes = target.vector_lanes(float_bits(info))
    pixels = _extent(y_iv) * _extent(x_iv)
    rows = _channel_rows(_extent(f_iv))
    if lanes < MIN_LANES or pixels % lanes or rows is None:
        return None
    cols = PANEL_VECTORS * lanes if pixels % (PANEL_VECTORS * lanes) == 0 else lanes
    tasks = pixels // cols
    for iv in lead_ivs:
        tasks *= _extent(iv)
    if tasks >= PARALLEL_MIN_TILES:
        return _packed_panels(sch, info, axes, source, rows, cols)
    return _in_place(sch, info, axes, rows, lanes)


def _fuse_pixels(sch, info, y_iv, x_iv, reduce_too: bool):
    """Fuse the output's pixel axes (``y * width + x``) in the block, the accumulator
    and the write-back, and with ``reduce_too`` the unit window iterators into the input
    channel's; returns ``(block, writeback, loops by iterator name)``."""
    names = [iv.var.name for iv in info.block.iter_vars]
    at, width = names.index(y_iv.var.name), _extent(x_iv)
    first_reduce = next(n for n, iv in enumerate(info.block.iter_vars)
                        if iv.iter_type.name != "DATA_PAR")

    def fused(*idx):
        if not reduce_too:
            return (*idx[:at], idx[at] * width + idx[at + 1], *idx[at + 2:])
        # The window iterators have extent 1: the input channel alone remains.
        channel = idx[first_reduce]
        for unit in idx[first_reduce + 1:]:
            channel = channel + unit
        return (*idx[:at], idx[at] * width + idx[at + 1], *idx[at + 2:first_reduce], channel)

    pixels = _pixels_fused(width)
    block = info.rv
    writeback = sch.cache_write(block, 0, "local")
    sch.transform_layout(block, ("write", 0), pixels)
    inline_injective_consumers(sch, writeback)
    sch.transform_block_layout(block, fused)
    sch.transform_block_layout(writeback, pixels)
    kept = [nm for nm in names if nm != x_iv.var.name]
    if reduce_too:
        kept = kept[:first_reduce - 1] + ["reduce"]
    return block, writeback, dict(zip(kept, sch.get_loops(block)))


def _pixels_fused(width: int):
    """The index map that fuses the last two axes, rows of ``width`` pixels, into one."""
    return lambda *idx: (*idx[:-2], idx[-2] * width + idx[-1])


def _in_place(sch, info, axes, rows: int, lanes: int):
    """Channel tiles, then pixel tiles, in one parallel loop; the input read where it
    lies (few pixel tiles: each task would copy its panel for one channel tile)."""
    *lead_ivs, f_iv, y_iv, x_iv = axes
    work = total_extent(sch, sch.get_loops(info.rv)) or 0
    block, writeback, loop_of = _fuse_pixels(sch, info, y_iv, x_iv, reduce_too=False)
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
    _tile_and_write_back(sch, block, writeback, reduce[0], f1, p1, outer, 1)
    return sch


def _packed_panels(sch, info, axes, source, rows: int, cols: int):
    """Pixel tiles (with the batch and groups) in the parallel loop, channel tiles inside
    each; every task first copies its ``cols`` pixels of all input channels into a
    panel, which its channel tiles then read as contiguous vectors from L1::

        for p0 in T.parallel(98):                           # 56x56 = 98 x 32 pixels
            for rc, p in T.grid(64, T.vectorized(32)):
                x_global[0, p0, rc, p] = x[0, rc, (p0 * 32 + p) // 56, (p0 * 32 + p) % 56]
            for f0 in range(32):                            # 256 channels = 32 x 8
                acc[8, 32] = 0                              # 8 channels x 2 pixel vectors
                for rc in range(64):
                    for f in T.unroll(8):
                        for p in T.vectorized(32):
                            acc[f, p] += x_global[0, p0, rc, p] * w[f0 * 8 + f, rc, 0, 0]
                out[..] = acc[..]

    Read in place, a pixel vector's input channels lie ``height x width`` floats apart:
    a new cache line, from another page, for every row of multiply-adds, and at 56x56 all
    in a quarter of the L1 cache's sets. On a 2-core Cascade Lake Xeon (full-width
    AVX-512), weight an argument, in place (8 channels x 16 pixels, channel tiles outer)
    -> panels, best ms of 16 interleaved rounds and the median of the rounds' speed-ups,
    onnxruntime in the same rounds: 56x56 64->64 0.314 -> 0.236 (1.79x; onnxruntime
    0.274), 64->256 1.46 -> 0.77 (1.78x; 0.78), 256->64 1.76 -> 0.68 (2.68x; 0.96); 28x28
    128->512 1.21 -> 0.63 (1.99x; 0.47), 512->128 1.74 -> 1.03 (1.96x; 0.83). Not
    measured on a Zen 4 since."""
    *lead_ivs, f_iv, y_iv, x_iv = axes
    work = total_extent(sch, sch.get_loops(info.rv)) or 0
    read_index = [r.buffer for r in info.block.reads].index(source)
    width = _extent(x_iv)
    block, writeback, loop_of = _fuse_pixels(sch, info, y_iv, x_iv, reduce_too=True)
    copy = sch.cache_read(block, read_index, "global")
    # Pixels fused in the copy too, so the consumer reads it with plain indices and
    # compute_at copies exactly one tile's pixels.
    sch.transform_layout(copy, ("write", 0), _pixels_fused(width))
    sch.transform_block_layout(copy, _pixels_fused(width))
    lead = [loop_of[iv.var.name] for iv in lead_ivs]
    f, p, reduce = (loop_of[name] for name in (f_iv.var.name, y_iv.var.name, "reduce"))
    f0, f1 = sch.split(f, [None, rows])
    p0, p1 = sch.split(p, [None, cols])
    sch.reorder(*lead, p0, f0, reduce, f1, p1)
    outer = sch.fuse(*lead, p0) if lead else p0
    if work >= PARALLEL_MIN_MACS:
        sch.parallel(outer)
    sch.compute_at(copy, outer)
    sch.transform_layout(copy, ("write", 0),
                         lambda *i: (*i[:-2], i[-1] // cols, i[-2], i[-1] % cols))
    sch.vectorize(sch.get_loops(copy)[-1])
    _tile_and_write_back(sch, block, writeback, reduce, f1, p1, f0, 2)
    return sch


def _tile_and_write_back(sch, block, writeback, reduce, f1, p1, tile_loop, depth: int):
    """Unroll the tile's channels, vectorize its pixels, write the accumulators back
    once per tile (under ``tile_loop``, the ``depth``-th loop) and zero them above the
    reduction."""
    sch.unroll(f1)
    sch.vectorize(p1)
    sch.reverse_compute_at(writeback, tile_loop)
    copy = sch.get_loops(writeback)
    for loop in copy[depth:-1]:
        sch.unroll(loop)
    sch.vectorize(copy[-1])
    init = sch.decompose_reduction(block, reduce)
    sch.vectorize(sch.get_loops(init)[-1])


def _pointwise_nchw(sch):
    """``(info, (*outer, f, y, x), input buffer)`` for the one reduction block when it
    is a 1x1 convolution of stride 1 in NCHW reading the whole input rows (no padding,
    no crop), else None; ``outer`` is the batch and any axis before the channel (a
    group)."""
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
    return info, tuple(axes), source


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
