"""Matrix-vector products (dense with one or a few rows): no packing, vector partial sums.

For ``C[i, j] += A[i, k] * W[j, k]`` with few rows ``i`` every weight element is used
once per row, so packing ``W`` into panels (the Matmul rule's first step) costs as much
as the product. Both operands are contiguous along ``k`` instead, so the reduction is
factored into ``lanes`` vector partial sums (``rfactor``) and ``J_UNROLL`` outputs are
computed together (independent accumulators hide the add latency, ``A`` is loaded
once for them)::

    for j0 in range(N // 4):                      # parallel when large
        for i, j1, k1 in T.grid(M, 4, T.vectorized(16)): C_rf[i, j0 * 4 + j1, k1] = 0
        for k0 in range(K // 16):
            for i, j1 in T.grid(T.unroll(M), T.unroll(4)):
                for k1 in T.vectorized(16):
                    C_rf[i, j0 * 4 + j1, k1] += A[i, k0 * 16 + k1] * W[j0 * 4 + j1, k0 * 16 + k1]
        for i, j1, k1 in T.grid(M, 4, 16): C[i, j0 * 4 + j1] += C_rf[i, j0 * 4 + j1, k1]

``C_rf`` is a local buffer: lowered under ``j0`` it shrinks to ``M x 4`` vector
registers, and each weight vector loaded serves all ``M`` rows.

More rows than half the registers hold (up to ``GEMV_TILED_MAX_ROWS``, for a weight that
is not a constant, on targets of 8 lanes or more) go in tiles of rows inside ``j0``
(:func:`row_tile`: 8 rows x 2 outputs with AVX-512's 32 registers, 2 x 4 with AVX2's
16); the rows of the weight a tile reads stay in L1 for the next tile::

    for j0 in T.parallel(N // 2):
        for i0 in range(M // 8):                  # 8 rows x 2 outputs: 16 accumulators
            C_rf[8, 2, 16] = 0
            for k0 in range(K // 16): ...         # as above, rows i0 * 8 + i1
            C[i0 * 8 + i1, j0 * 2 + j1] = sum(C_rf[i1, j1, :])
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ..analysis import BlockInfo, block_infos, iter_vars_of, total_extent
from .common import float_bits
from .tiling import PARALLEL_MIN_MACS, _largest_divisor

# Products with at most this many rows (the extent of the axes the weight does not
# use) take this path: packing the weight would cost about as much as the product.
GEMV_MAX_ROWS = 4
# Outputs computed together, each with its own vector accumulator.
J_UNROLL = 4
# Products with up to this many rows take this path, in tiles of rows (``row_tile``),
# when their weight is not a constant: packing it every call costs more than reading it
# unpacked once per tile of rows. ``nn.dense`` with the weight an argument on a 2-core
# Zen 4, ms, the register tile with the weight packed per call -> tiles of 4 rows here
# (onnxruntime's Gemm in the same run): 5x1024x1024 0.253 -> 0.084 (0.146), 8x1024x1024
# 0.282 -> 0.113 (0.180), 16x1024x1024 0.358 -> 0.212 (0.262), 32x1024x1024 0.504 ->
# 0.429 (0.434), 8x4096x4096 5.31 -> 2.58 (4.26), 32x3072x768 1.01 -> 0.80 (0.98),
# 16x768x3072 0.556 -> 0.589 (0.485); at 64 rows the tile won (0.79 against 0.87).
# A constant weight keeps the register tile: packed once at build time (PrepackWeights),
# 8x1024x1024 ran 0.08 ms against 0.12 here. Built for AVX2 (``haswell``, run on the
# same Zen 4; tiles of 2 rows), register tile -> tiles of rows, ms (numpy): 5x1024x1024
# 0.642 -> 0.106 (0.426), 8x1024x1024 0.656 -> 0.103 (0.411), 12x1024x1024 0.698 ->
# 0.144, 16x1024x1024 0.366 (its rows packed, ``matmul.swap_packed_operand``) -> 0.198,
# 24x1024x1024 0.813 -> 0.271, 31x1024x1024 0.923 -> 0.610, 8x4096x4096 7.49 -> 3.19
# (7.60), 24x768x3072 0.654 -> 0.620; so the path is taken from ``GEMV_TILED_MIN_LANES``
# (8) vector lanes. 32 rows fill whole vector tiles and pack their rows instead
# (``matmul.SWAP_MIN_ROWS``).
GEMV_TILED_MAX_ROWS = 32
GEMV_TILED_MIN_LANES = 8
# Outputs per tile when the rows come in tiles, so that a tile holds twice the rows of
# ``J_UNROLL`` outputs and each row of the weight is read by half the tiles. On a 2-core
# Cascade Lake Xeon (AVX-512), weight an argument, 4 x 4 tiles of rows -> 8 x 2, best ms
# of 16 interleaved rounds and the median of the rounds' speed-ups (onnxruntime's Gemm in
# the same rounds): 8x1024x1024 0.431 -> 0.264 (1.56x; 0.319), 16x4096x4096 8.91 -> 7.48
# (1.16x; 7.94), 12x1024x1024 0.633 -> 0.467 (1.27x), 24x768x3072 3.66 -> 2.49 (1.39x).
# Built for AVX2 (``haswell``, same host: 2 x 4 -> 4 x 2) they ran slower, 0.87-0.95x
# (8x1024x1024, 16x1024x1024, 24x768x3072), so only a 32-register file takes them.
ROW_TILE_OUTPUTS = 2
ROW_TILE_MIN_REGISTERS = 32
# The PrimFunc attribute listing the parameters every call passes a constant
# (PrepackWeights sets it on the kernels it schedules): their packing runs once.
CONSTANT_PARAMS = "mlcbench.constant_params"


def gemv_axes(info: BlockInfo, loads, max_rows: int = GEMV_MAX_ROWS):
    """``(reduce_iv, unroll_iv)`` when ``info`` is a matrix-vector product that both
    operands read contiguously along its one reduce iterator and that has at most
    ``max_rows`` rows; ``unroll_iv`` is the output axis only the weight uses.
    None otherwise (symbolic extents included)."""
    ivs = info.block.iter_vars
    if not all(hasattr(iv.dom.extent, "value") for iv in ivs):
        return None
    reduce_ivs = [iv for iv in ivs if iv.iter_type.name != "DATA_PAR"]
    if len(reduce_ivs) != 1 or not all(ld.indices and ld.indices[-1] is reduce_ivs[0].var
                                       for ld in loads):
        return None
    spatial = [iv for iv in ivs if iv.iter_type.name == "DATA_PAR"]
    weight_vars = [iter_vars_of(ld) for ld in loads]
    # The weight is the operand with more elements along axes of its own (the other has few rows).
    weight = max(range(2), key=lambda n: _extent_of(spatial, weight_vars[n] - weight_vars[1 - n]))
    only_weight = [iv for iv in spatial if iv.var in weight_vars[weight]
                   and iv.var not in weight_vars[1 - weight]]
    rows = _extent_of(spatial, {iv.var for iv in spatial} - weight_vars[weight])
    if not only_weight or rows > max_rows:
        return None
    return reduce_ivs[0], only_weight[-1]


def weight_load(loads, axes):
    """The load of the weight: the operand that reads the output axis of ``axes``
    (what :func:`gemv_axes` returned) that only it uses."""
    return next(ld for ld in loads if axes[1].var in iter_vars_of(ld))


def _extent_of(ivs, variables) -> int:
    out = 1
    for iv in ivs:
        if iv.var in variables:
            out *= int(iv.dom.extent.value)
    return out


def _lane_tile(extent: int, lanes: int):
    """Partial sums per output: ``lanes`` or half of it, whichever divides ``extent``
    with at least two vectors per output; None when neither does."""
    return next((t for t in (lanes, lanes // 2) if t > 1 and extent % t == 0
                 and extent >= 2 * t), None)


def schedule_gemv(sch, info: BlockInfo, loads, target, max_rows: int = GEMV_MAX_ROWS) -> bool:
    """Apply the matrix-vector schedule above to ``info`` (rows in tiles of
    :func:`row_tile` when there are more); False (``sch`` untouched) when it is not a
    matrix-vector product of at most ``max_rows`` rows or its extents do not tile."""
    axes = gemv_axes(info, loads, max_rows)
    loops = sch.get_loops(info.rv)
    if axes is None or list(info.realize.iter_values) != [sch.get(lp).loop_var for lp in loops]:
        return False
    reduce_iv, unroll_iv = axes
    tile = _lane_tile(int(reduce_iv.dom.extent.value), target.vector_lanes(float_bits(info)))
    if tile is None:
        return False
    ivs = list(info.block.iter_vars)
    loop_of = {iv.var: lp for iv, lp in zip(ivs, loops)}
    spatial = [iv for iv in ivs if iv.iter_type.name == "DATA_PAR"]
    macs = total_extent(sch, loops) or 0
    _, lane_loop = sch.split(loop_of[reduce_iv.var], [None, tile])
    # The split above stays applied if rfactor refuses: Matmul runs this on a copy of its schedule.
    try:
        rf_block = sch.rfactor(lane_loop, len(spatial))
    except ScheduleError:
        return False
    sch.set_scope(rf_block, 0, "local")
    weight_vars = iter_vars_of(weight_load(loads, axes))
    names = [(iv.var.name, iv.var not in weight_vars) for iv in spatial]
    rows = _extent_of(spatial, {iv.var for iv in spatial} - weight_vars)
    tile_rows, outputs = row_tile(rows, target)
    _tile_partials(sch, rf_block, names, unroll_iv.var.name, parallel=macs >= PARALLEL_MIN_MACS,
                   row_tile=tile_rows, outputs=outputs)
    return True


def row_tile(rows: int, target) -> tuple:
    """``(rows, outputs)`` computed together, their accumulators in half the vector
    registers: all rows with ``J_UNROLL`` outputs where they fit (4 rows with AVX-512's
    32 registers, 2 with AVX2's 16); else the largest divisor of ``rows`` that fits with
    ``ROW_TILE_OUTPUTS`` outputs on targets of ``ROW_TILE_MIN_REGISTERS`` registers (8
    rows with AVX-512) and ``J_UNROLL`` on others (2 rows with AVX2), with ``J_UNROLL``
    outputs wherever that divisor is small enough for them."""
    accumulators = max(1, target.vector_registers // 2)
    if rows <= max(1, accumulators // J_UNROLL):
        return rows, J_UNROLL
    outputs = ROW_TILE_OUTPUTS if target.vector_registers >= ROW_TILE_MIN_REGISTERS \
        else J_UNROLL
    tile = _largest_divisor(rows, 1, max(1, accumulators // outputs))
    return tile, J_UNROLL if tile * J_UNROLL <= accumulators else outputs


def _tile_partials(sch, rf_block, spatial, unroll_name, parallel: bool, row_tile: int,
                   outputs: int) -> None:
    """Order the partial-sum block's loops as ``outputs.., k0, rows, j1, k1``: the
    weight's own axes outside (``j0``), then the reduction, then the few rows and
    ``outputs`` outputs unrolled (each weight vector is loaded once for all rows),
    the vector lanes ``k1`` last; the final sum goes under the outer loops."""
    rf_loops = sch.get_loops(rf_block)
    by_name = {}
    for iv, value in zip(sch.get(rf_block).iter_vars, _iter_values(sch, rf_block)):
        by_name[iv.var.name] = next(lp for lp in rf_loops if sch.get(lp).loop_var is value)
    lane_loop, reduce_loop = rf_loops[-1], rf_loops[-2]
    outer = [by_name[name] for name, is_row in spatial if not is_row]
    rows = [by_name[name] for name, is_row in spatial if is_row]
    unroll_loop = by_name[unroll_name]
    extent = total_extent(sch, [unroll_loop]) or 1
    inner = []
    # No tail loop for the unrolled outputs: otherwise the axis stays whole.
    if extent % outputs == 0 and extent > outputs:
        j0, j1 = sch.split(unroll_loop, [None, outputs])
        outer = [j0 if lp is unroll_loop else lp for lp in outer]
        inner = [j1]
    row_tiles = []
    if rows and (total_extent(sch, rows) or 0) > row_tile:
        # More rows than registers: tiles of rows, each over the whole reduction, inside
        # the outputs' loop, so the weight's rows stay in L1 from one tile to the next.
        row = sch.fuse(*rows) if len(rows) > 1 else rows[0]
        tile_loop, row = sch.split(row, [None, row_tile])
        row_tiles, rows = [tile_loop], [row]
    sch.reorder(*outer, *row_tiles, reduce_loop, *rows, *inner, lane_loop)
    fused = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    if parallel and (total_extent(sch, [fused]) or 0) >= 2:
        sch.parallel(fused)
    for loop in rows + inner:
        sch.unroll(loop)
    sch.vectorize(lane_loop)
    init = sch.decompose_reduction(rf_block, reduce_loop)
    sch.vectorize(sch.get_loops(init)[-1])
    writeback = sch.get_consumers(rf_block)[0]
    # Sum the lanes per output tile while the partial sums are still in registers.
    sch.reverse_compute_at(writeback, row_tiles[0] if row_tiles else fused)


def _iter_values(sch, block_rv):
    """The loop variables bound to ``block_rv``'s iterators (in iterator order)."""
    name = sch.get(block_rv).name_hint
    info = next(i for i in block_infos(sch) if i.name == name)
    return list(info.realize.iter_values)
