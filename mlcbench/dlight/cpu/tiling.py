"""The register-blocked micro-kernel shared by the Matmul and Conv2D rules.

For a contraction ``C[.., i, .., j] += A[.. i ..] * B[.. j ..]`` (``j`` the output's
last, contiguous index) the schedule is the classic CPU GEMM one::

    C_local = T.alloc_buffer(C.shape, scope="local")   # shrinks to the tile when lowered
    for outer in T.parallel(..):                        # batch, i0, j0 (and the rest) fused;
                                                        # j0 in groups around i0 when B is large
        for i1, j1 in ..: C_local[..] = 0               # init, j1 vectorized
        for k ..:                                       # every reduction loop
            for i1 in T.unroll(rows):                   # rows x vector-tile accumulators
                for j1 in T.vectorized(cols):
                    C_local[..] += A[..] * B[..]
        for ax0, ax1 in ..: C[..] = epilogue(C_local[..])

Convolutions keep output rows in the parallel loop and run their channel and width
tiles serially inside it (``tile_contraction(row_tiles_inner=True)``).

``rows`` x ``cols`` is chosen from the target: ``cols`` two vector registers wide
(32 fp32 on AVX-512, 16 on AVX2), ``rows`` so the accumulators fill half the register
file, and at least 12 registers where it is small (8 x 32 on AVX-512's 32 registers,
6 x 16 on AVX2's 16; see :func:`choose_rows`).
"""
from __future__ import annotations

from ..analysis import BlockInfo, iter_vars_of, total_extent
from .common import choose_vector_tile, float_bits, inline_injective_consumers

# Multiply-adds below which a contraction stays on one thread: about 13 us of one
# Zen 1 core's work at its measured peak, 3 us of an AVX-512 Xeon core's, against a
# fork and join of about 1 us (../shared/CODEGEN_FACTS.md). At 1 << 20 ShuffleNet's grouped 1x1 convolutions (68 -> 72 channels at
# 14x14 per group, 0.96 M) ran on one thread: 11.1 -> 7.9 ms for the model on two
# Zen 1 cores (``benchmarks/models.py``), other light and digits models unchanged.
PARALLEL_MIN_MACS = 1 << 18
MAX_ROWS = 16
# Independent accumulators a matmul's register tile keeps where the register file has
# room: a multiply-add waits 4 to 5 cycles for its accumulator and two issue per cycle
# (Haswell 5 x 2, Skylake and Zen 4 x 2), so AVX2's half of 16 registers, 8 chains,
# leaves the FMA pipes idle. AVX2 code built for ``haswell`` and run on a Zen 4, 1024^3
# on 2 cores: 4 x 16 201 GFLOPS, 6 x 16 214 (86% -> 92% of the peak of that code);
# 256^3 183 -> 212, 512^3 144 -> 170, 2048^3 185 -> 198. BLIS's Haswell and Zen
# kernels use the same 6 x 16 tile.
MIN_ACCUMULATORS = 12
# Registers a tile needs besides its accumulators: B's two vectors, A's broadcast, a spare.
TILE_OPERAND_REGISTERS = 4
# Parallel iterations enough for the threads' chunks to even out over a few cores.
PARALLEL_MIN_TILES = 16
# The column tiles' panels of B (reduction extent x tile width) that every row tile
# walks before the next group starts: half of the smallest L2 met (Zen 1-3: 512 KB).
PANEL_GROUP_BYTES = 256 << 10


def output_axes(info: BlockInfo):
    """The block's iter vars in the order the output buffer indexes them, or None when
    an output index is not a plain iterator."""
    by_var = {iv.var: iv for iv in info.block.iter_vars}
    out = []
    for index in info.store.indices:
        if index not in by_var:
            return None
        out.append(by_var[index])
    return out


def _plain_in_one_operand(iv, loads) -> bool:
    """True when exactly one operand indexes with ``iv`` itself and the other not at all
    (matmul's ``j``; a convolution's output channel)."""
    plain = [ld for ld in loads if iv.var in ld.indices]
    used = [ld for ld in loads if iv.var in iter_vars_of(ld)]
    return len(plain) == 1 and len(used) == 1


def choose_axes(info: BlockInfo, loads):
    """``(row_iv, col_iv)``. The vector axis is the output's last index when one operand
    indexes it plainly (matmul's ``j``, NHWC's channels), else the last output axis
    that does (NCHW's output channels, whose operand then gets packed), else the
    output's last index. Rows prefer an axis the vector operand does not use (its
    value is broadcast across the vector)."""
    axes = output_axes(info)
    if not axes or len(axes) < 2:
        return None
    plain = [iv for iv in axes if _plain_in_one_operand(iv, loads) and _extent(iv) > 1]
    col = axes[-1] if not plain or plain[-1] is axes[-1] else plain[-1]
    vector_operand = next((ld for ld in loads if col.var in iter_vars_of(ld)), None)
    if vector_operand is None:
        return None
    used = iter_vars_of(vector_operand)
    others = [iv for iv in axes if iv is not col]
    candidates = [iv for iv in others if iv.var not in used and _extent(iv) > 1]
    if not candidates:
        candidates = [iv for iv in others if _extent(iv) > 1] or [others[-1]]
    return candidates[-1], col


def _extent(iv) -> int:
    return int(iv.dom.extent.value)


def accumulator_budget(registers: int) -> int:
    """Vector registers a matmul's register tile gives its accumulators: half the file
    (16 of AVX-512's 32), at least ``MIN_ACCUMULATORS`` where the file is small (12 of
    AVX2's 16), leaving ``TILE_OPERAND_REGISTERS`` for the operands so nothing spills."""
    return max(registers // 2, min(MIN_ACCUMULATORS, registers - TILE_OPERAND_REGISTERS))


def choose_rows(extent: int, col_vectors: int, registers: int) -> int:
    """Rows of a matmul's register tile, up to :func:`accumulator_budget` accumulators:
    of the row counts from half that budget up, the one whose tiles are fullest on
    average (``extent / tiles``), a divisor of ``extent`` where two tie. 1024 rows on
    AVX2 get 6 x 16 (171 tiles, the last one partial) rather than the divisor 4."""
    budget = max(1, min(MAX_ROWS, accumulator_budget(registers) // max(1, col_vectors)))
    if extent <= budget:
        return extent
    return max(range(max(1, budget // 2), budget + 1),
               key=lambda rows: (extent / -(-extent // rows), extent % rows == 0, rows))


def rows_within(extent: int, budget: int) -> int:
    """The largest divisor of ``extent`` from ``budget`` down to half of it, else
    ``budget`` (a partial last tile)."""
    if extent <= budget:
        return extent
    for rows in range(budget, max(1, budget // 2) - 1, -1):
        if extent % rows == 0:
            return rows
    return budget


def choose_conv_tile(extent: int, cols: int, lanes: int, registers: int,
                     pointwise: bool = False) -> tuple:
    """``(rows, cols)`` of a convolution's register tile for output rows of ``extent``
    pixels. Rows divide the row when they can: a partial last tile tests its bound on
    every multiply-add. Two vectors of channels when 3 to 5 rows (AVX2; 4 to 10 with
    AVX-512) divide it, for a ``pointwise`` (1x1) kernel also with up to all registers
    but two holding accumulators; else one vector when as many rows, up to half the
    registers, do (all but three, pointwise), else :func:`rows_within`. On AVX-512
    three rows are too few chains: SqueezeNet's stem (3 -> 64, 3x3 stride 2, rows of
    111 = 3 x 37 pixels) ran 338 us with 3 x 32 and 291 with 8 x 32 and a partial last
    tile (built alone, 2-core Zen 4), a 64 -> 64 3x3 layer at 33x33 428 with 3 x 32
    and 403 with 11 x 16. On AVX2: 55 -> 5 x 16;
    14 -> 7 x 8 (not 2 x 16) and 7 -> 7 x 8 (not 4 x 16 with a partial tile), 7 x 16
    for a 1x1 kernel; 13 -> 4 x 16 with a partial tile, 13 x 8 for a 1x1 kernel (13 x 8
    ran a 3x3 layer 1.5x slower, 7 x 16 a 3x3 one 1.3x slower than 7 x 8, and 7 x 16 a
    1x1 one at 56 or 28 pixels 1.1-1.2x slower than 4 x 16). Measured on one Zen 1
    thread: Inception's 14x14 and 7x7 layers 1.2-1.9x onnxruntime's time before,
    1.0-1.2x after."""
    col_vectors = -(-cols // lanes)
    budget = max(1, min(MAX_ROWS, (registers // 2) // col_vectors))
    if extent <= budget:
        return extent, cols
    low = max(3, budget // 2)
    rows = _largest_divisor(extent, low, budget + budget // 4)
    if rows is None and pointwise:
        # Measured, not derived: with one tap per channel, 14 of AVX2's 16 registers
        # as accumulators still ran a 1x1 layer faster (LLVM reuses the broadcast
        # register); a 3x3 layer ran 1.3x slower.
        rows = _largest_divisor(extent, low, min(MAX_ROWS, (registers - 2) // col_vectors))
    if rows:
        return rows, cols
    # One vector of accumulators per row; a pointwise kernel keeps only one weight
    # vector and one broadcast live besides them, so its rows may fill the register file.
    narrow = _largest_divisor(extent, low, min(MAX_ROWS, registers - 3 if pointwise
                                               else registers // 2))
    if narrow and (col_vectors == 1 or cols % lanes == 0):   # no partial vector made
        return narrow, min(cols, lanes)
    return rows_within(extent, budget), cols


def _largest_divisor(extent: int, low: int, high: int):
    """The largest divisor of ``extent`` in ``[low, high]``, else None."""
    return next((d for d in range(high, low - 1, -1) if extent % d == 0), None)


def choose_tiles(info: BlockInfo, loads, target, axes=None, cols=None):
    """``(row_iv, col_iv, rows, cols)`` of the register tile, or None (also for
    symbolic extents: the tile shape is chosen from known sizes). ``axes`` (row, vector)
    overrides :func:`choose_axes`, ``cols`` the vector tile."""
    if not all(hasattr(iv.dom.extent, "value") for iv in info.block.iter_vars):
        return None
    axes = axes or choose_axes(info, loads)
    if axes is None:
        return None
    row_iv, col_iv = axes
    lanes = target.vector_lanes(float_bits(info))
    cols = cols or choose_vector_tile(_extent(col_iv), lanes)
    # Vectors per row rounded up: a partial vector still occupies a whole register.
    rows = choose_rows(_extent(row_iv), -(-cols // lanes), target.vector_registers)
    return row_iv, col_iv, rows, cols


def _accumulator_vector_axis_last(sch, info: BlockInfo, col_iv) -> None:
    """Store the accumulator with the vector axis last, so each accumulator row is one
    register (NCHW convolutions vectorize output channels, not the last axis)."""
    dim = list(info.store.indices).index(col_iv.var)
    last = len(info.store.indices) - 1
    if dim == last or not hasattr(sch, "transform_layout"):
        return
    sch.transform_layout(info.rv, ("write", 0),
                         lambda *idx: (*idx[:dim], *idx[dim + 1:], idx[dim]))


def tile_contraction(sch, info: BlockInfo, tiles, row_tiles_inner: bool = False,
                     column_tiles_outer: bool = False) -> bool:
    """Apply the micro-kernel schedule to ``info`` with ``tiles`` from choose_tiles
    (iterators matched by name, so the tiles survive packing an operand); False
    when its loops do not map one-to-one onto its iterators.

    By default every tile loop is fused into one parallel loop with the column tiles
    varying fastest: consecutive tiles reuse the same rows of A from L1 and walk B's
    packed panels. Where B's panels together outgrow ``PANEL_GROUP_BYTES``, the
    column tiles go in groups whose panels fit it, the group outside the row tiles
    (``column groups > row tiles > column tiles``): every row tile then finds the
    group's panels in L2 instead of streaming all of B from L3 once per row tile.
    On AVX-512's 8 x 32 tile a 1024^3 product reads 128 bytes of B per 16
    multiply-adds, 44 GB/s per core at full speed, more than L3 gives one core.
    Convolutions (``row_tiles_inner``) whose weights outgrow the budget put the
    groups outermost, outside the output rows: ``group > rows > column tiles in
    group > row tiles``. With ``row_tiles_inner`` (convolutions) the nest is
    ``parallel(batch, output rows) > column tiles > row tiles`` instead: one output
    row's input pixels stay in L1 across the column tiles, each column tile's packed
    weights across the row tiles, and the tile indices are loop counters rather than
    divisions of one fused index (a 1x1 convolution, 56x56 64->256: 2-11% faster
    on one thread). ``column_tiles_outer`` fuses ``column tiles > row tiles`` whatever
    the panels' size: each panel stays in L2 while the rows' operand streams past it."""
    loops = sch.get_loops(info.rv)
    loop_vars = [sch.get(lp).loop_var for lp in loops]
    if list(info.realize.iter_values) != loop_vars:
        return False
    row_iv, col_iv, rows, cols = tiles
    names = [iv.var.name for iv in info.block.iter_vars]
    row_iv = info.block.iter_vars[names.index(row_iv.var.name)]
    col_iv = info.block.iter_vars[names.index(col_iv.var.name)]
    work = total_extent(sch, loops) or 0
    loop_of = {iv.var: lp for iv, lp in zip(info.block.iter_vars, loops)}
    writeback = sch.cache_write(info.rv, 0, "local")
    _accumulator_vector_axis_last(sch, info, col_iv)
    inline_injective_consumers(sch, writeback)
    i0, i1 = sch.split(loop_of[row_iv.var], [None, rows])
    j0, j1 = sch.split(loop_of[col_iv.var], [None, cols])
    data_par = [iv for iv in info.block.iter_vars if iv.iter_type.name == "DATA_PAR"]
    reduce = [loop_of[iv.var] for iv in info.block.iter_vars
              if iv.iter_type.name != "DATA_PAR"]
    others = [loop_of[iv.var] for iv in data_par
              if iv.var is not row_iv.var and iv.var is not col_iv.var]
    # A panel is reused by every row tile, in convolutions also across output rows.
    reusers = others + [i0] if row_tiles_inner else [i0]
    grouped = None if column_tiles_outer else \
        _grouped_column_tiles(sch, j0, i0, reusers, cols, reduce, float_bits(info))
    if column_tiles_outer:
        spatial = others + [j0, i0]
    elif row_tiles_inner and grouped:
        spatial = [grouped[0]] + others + grouped[2:] + [i0]
    elif row_tiles_inner:
        spatial = others + [j0, i0]
    elif grouped:
        spatial = others + grouped
    else:
        spatial = [i0 if iv.var is row_iv.var else loop_of[iv.var] for iv in data_par
                   if iv.var is not col_iv.var] + [j0]
    sch.reorder(*spatial, *reduce, i1, j1)
    parallel_loops = _parallel_prefix(sch, spatial) if row_tiles_inner else spatial
    outer = sch.fuse(*parallel_loops) if len(parallel_loops) > 1 else parallel_loops[0]
    if work >= PARALLEL_MIN_MACS and (total_extent(sch, [outer]) or 0) >= 2:
        sch.parallel(outer)
    serial = spatial[len(parallel_loops):]
    sch.unroll(i1)
    sch.vectorize(j1)
    _schedule_writeback(sch, writeback, serial[-1] if serial else outer, 1 + len(serial))
    # The init lands above the reduction loops: each tile zeroes its accumulators once.
    init = sch.decompose_reduction(info.rv, reduce[0])
    sch.vectorize(sch.get_loops(init)[-1])
    return True


def _grouped_column_tiles(sch, j0, i0, reusers, cols: int, reduce, bits: int) -> list:
    """``[j_group, i0, j_in_group]`` (``[j0, i0]`` for groups of one) when the panels of
    all column tiles outgrow ``PANEL_GROUP_BYTES`` and the loops ``reusers`` (the row
    tiles; in convolutions also the output rows) run more than once, else None."""
    panel = (total_extent(sch, reduce) or 0) * cols * bits // 8
    tiles_j, reuse = total_extent(sch, [j0]), total_extent(sch, reusers)
    if not panel or not tiles_j or not reuse or reuse < 2 \
            or tiles_j * panel <= PANEL_GROUP_BYTES:
        return None
    # A group that divides the column tiles: a partial group would test its bound per tile.
    group = max(d for d in range(1, max(1, PANEL_GROUP_BYTES // panel) + 1)
                if tiles_j % d == 0)
    if group == 1:
        return [j0, i0]
    j_group, j_in_group = sch.split(j0, [None, group])
    return [j_group, i0, j_in_group]


def _parallel_prefix(sch, spatial) -> list:
    """The outermost of ``spatial`` whose extents multiply to ``PARALLEL_MIN_TILES`` or
    more (all of them when they never do): enough iterations for the threads to share
    evenly (an output of 7 rows needs the channel tiles too)."""
    extent = 1
    for n, loop in enumerate(spatial):
        # A symbolic extent is taken to be enough iterations by itself.
        extent *= total_extent(sch, [loop]) or PARALLEL_MIN_TILES
        if extent >= PARALLEL_MIN_TILES:
            return spatial[:n + 1]
    return spatial


def _schedule_writeback(sch, writeback, tile_loop, depth: int) -> None:
    """Copy the accumulators out once per tile (under ``tile_loop``, the ``depth``-th
    loop of the nest). Unrolled, the copy reads them at constant offsets, so a
    transposed one (NCHW: channel vectors stored along width) becomes register
    shuffles instead of a spill to the stack and computed-index loads."""
    sch.reverse_compute_at(writeback, tile_loop)
    for loop in sch.get_loops(writeback)[depth:-1]:
        sch.unroll(loop)
    sch.vectorize(sch.get_loops(writeback)[-1])
