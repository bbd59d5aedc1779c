"""Pack the operand the vector loop walks into panels as wide as the vector tile.

``B[k, j]`` (or a dense weight ``W[j, k]``, or a convolution weight ``W[f, c, ry, rx]``)
is copied into ``B_global[j // 32, k, j % 32]`` before the kernel, so every step of
the reduction loops reads one contiguous vector::

    for j0 in T.parallel(32):
        for k, j1 in T.grid(1024, T.vectorized(32)):
            B_global[j0, k, j1] = B[k, j0 * 32 + j1]
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ...tir.schedule import Schedule
from ..analysis import block_infos, iter_vars_of
from .layout import pack_vector_axis
from .tiling import PARALLEL_MIN_MACS, tile_contraction

# Contiguous source elements read per vector when the source is transposed.
TRANSPOSE_RUN = 8
# A transposed source whose panel of rows spans at most this many bytes (panel width x row
# length) is gathered along the vector axis instead: attention's k^T (12 x 128 x 64, a
# 32-row panel spans 8 KB) packed so ran q @ k^T in 135 us instead of 143 on a Zen 4,
# a 768 x 768 dense weight (96 KB) 768 instead of 810 us with the packing per call; a
# 768 x 3072 weight (384 KB: a page per row, past the TLB) ran 4.8 ms instead of 3.5.
GATHER_SPAN_BYTES = 128 << 10
# A source contiguous along the vector axis whose rows are shorter than
# PACK_MIN_ROW_BYTES, and which spans at most IN_PLACE_MAX_BYTES (rows x row length), is
# read in place: each step of the reduction reads the next row a few hundred bytes on,
# as the hardware prefetcher likes. On a Zen 4, batch matmuls packed per call -> in
# place, of the FMA peak: 12x128x128 @ 128x64 (attention's attn @ v) 83 -> 96%,
# 12x128x128 @ 128x256 87 -> 97%, 4x128x256 @ 256x512 87 -> 98%. With 4 KB rows
# 1024^3 ran 93 -> 86%, and a constant weight (packed once, at build time, by
# PrepackWeights) spanning megabytes read in place lost to its panels: 128x3072 @
# 3072x768 (9.4 MB) 94 -> 77%, 128x2048 @ 2048x768 (6.3 MB) 97 -> 94%; up to 1 MB
# (128x512 @ 512x512) the two ran the same.
PACK_MIN_ROW_BYTES = 4096
IN_PLACE_MAX_BYTES = 1 << 20
# A weight B[k, j] (contiguous along the vector axis) is packed in the tasks when at most
# this many row tiles read each panel; more amortize the pass at the head, whose groups
# of panels stay in L2 across all row tiles. On a 2-core Zen 4, head -> tasks, ms: 128 x
# 1024 x 1024 1.50-1.80 -> 1.33, 512 x 1024 x 1024 5.39 -> 4.99, 1024^3 9.7-10.3 -> 9.8.
TASK_MAX_ROW_TILES = 64


def vector_operand(col_iv, loads):
    """``(index, dim)``: which operand the vector axis walks, and at which of its
    dimensions; None when no operand uses it as a plain index."""
    for n, load in enumerate(loads):
        if col_iv.var in load.indices:
            return n, list(load.indices).index(col_iv.var)
    return None


def panel_index_map(dim: int, width: int):
    """The index map of panels ``width`` wide along dimension ``dim``:
    ``(.., x_dim, ..) -> (x_dim // width, .., x_dim % width)``."""
    def index_map(*x):
        return (x[dim] // width, *[v for d, v in enumerate(x) if d != dim], x[dim] % width)
    return index_map


def pack_vector_operand(sch, info, loads, tiles, min_row_tiles: int,
                        short_rows_in_place: bool = False):
    """Copy the vector operand into panels ``cols`` wide (see ``layout``) when its
    vector axis is not contiguous, or when enough rows reuse each panel (and, with
    ``short_rows_in_place``, its rows are ``PACK_MIN_ROW_BYTES`` long or more)."""
    row_iv, col_iv, rows, cols = tiles
    found = vector_operand(col_iv, loads)
    if found is None:
        return sch
    n, dim = found
    contiguous = dim == len(loads[n].indices) - 1
    # A contiguous operand is read well in place; a copy pays off only over enough row
    # tiles, and only for long rows.
    if contiguous and int(row_iv.dom.extent.value) < min_row_tiles * rows:
        return sch
    if contiguous and short_rows_in_place and _read_in_place(loads[n].buffer, dim):
        return sch
    read_index = [r.buffer for r in info.block.reads].index(loads[n].buffer)
    copy = sch.cache_read(info.rv, read_index, "global")
    name = sch.get(copy).name_hint
    extent = int(sch.get(copy).writes[0].buffer.shape[dim].value)
    if extent % cols == 0:
        # a primitive, so the schedule's trace replays from the unscheduled function
        sch.transform_layout(copy, ("write", 0), panel_index_map(dim, cols))
    else:       # the last panel is partly empty: transform_layout cannot pad
        sch = Schedule(pack_vector_axis(sch.mod["main"], name, dim, cols))
    macs = 1
    for iv in info.block.iter_vars:
        macs *= int(iv.dom.extent.value)
    schedule_packing(sch, name, dim, cols, parallel=macs >= PARALLEL_MIN_MACS)
    return sch


def pack_in_tasks(sch, info, loads, tiles, find_block, min_row_tiles: int):
    """A copy of ``sch`` whose vector operand is packed inside the parallel loop, one
    panel where that panel's row tiles are computed, or None where the operand is not
    packed so. A batched, transposed operand (attention's k in q @ k^T) whose rows are
    shorter than ``PACK_MIN_ROW_BYTES`` and whose panel spans at most
    ``GATHER_SPAN_BYTES`` gathers each panel row along the vector axis::

        for b_j_0_fused in T.parallel(48):                 # batch x column tiles
            for k, j in T.grid(64, T.vectorized(32)):      # one 8 KB panel, gathered
                k_global[j_0, b, k, j] = k[b, j_0 * 32 + j, k]
            for i_0 in range(16):                          # every row tile reads it from L1
                ...

    A transposed weight ``W[j, k]`` (no batch axis indexes it), however long its rows,
    and a batched operand with longer rows, are copied in blocks of ``TRANSPOSE_RUN`` x
    ``TRANSPOSE_RUN``, each read a row at a time and stored a column at a time
    (``_transpose_in_registers``)::

        for j_0_0 in T.parallel(16):                       # groups of column tiles
            for j_0_1 in range(2):
                for k_0, j_0 in T.grid(128, 4):
                    for r, c in T.grid(T.unroll(8), T.vectorized(8)):     # 8 rows of w
                        w_local[.., r, c] = w[.., j_0 * 8 + r, k_0 * 8 + c]
                    for c, r in T.grid(T.unroll(8), T.vectorized(8)):     # 8 panel rows
                        w_global[.., k_0 * 8 + c, j_0 * 8 + r] = w_local[.., r, c]
                for i_0 in range(16):                      # every row tile reads it
                    ...

    A weight ``B[k, j]`` that the head of the kernel would pack (``pack_vector_operand``
    with ``min_row_tiles``) is copied a vector of a panel row at a time, where at most
    ``TASK_MAX_ROW_TILES`` row tiles read each panel.

    Each panel is filled by the task that reads it and stays in its cache, where a pass
    over the whole weight at the head of the kernel wrote it to memory and read it back.
    A constant weight loses nothing: PrepackWeights hoists the copy out of the tasks and
    runs it once at build time (``relax.transform.split_weight_packing``).
    ``find_block(sch)`` finds the product's ``(info, loads)`` again. There must be
    enough column tiles for the tasks: where the row tiles join the parallel loop, a
    panel per task would be copied once per row tile.

    On a 2-core Zen 4, weight argument, ms (the packing at the head -> in the tasks;
    onnxruntime's Gemm or MatMul in the same run):

    ======================  ===========  ===========
    x @ w^T, m x k x n      ours         onnxruntime
    ======================  ===========  ===========
    32 x 1024 x 1024        1.19 -> 0.51        0.43
    128 x 768 x 768         1.06 -> 0.70        0.72
    128 x 1024 x 1024       2.17 -> 1.41        1.46
    128 x 768 x 3072        3.69 -> 3.15        2.89
    128 x 3072 x 768        3.27 -> 3.12        3.20
    128 x 4096 x 1024       6.31 -> 5.82        5.94
    64 x 4096 x 4096        34.6 -> 13.9        13.6
    128 x 8192 x 1024       24.5 -> 12.2        12.2
    1024 x 1024 x 1024      10.4 -> 9.84        11.0
    x @ w, m x k x n
    128 x 1024 x 1024       1.50 -> 1.33        1.51
    128 x 768 x 3072        3.80 -> 3.09        3.17
    128 x 3072 x 768        4.21 -> 3.25        3.59
    64 x 4096 x 4096        40.7 -> 16.2        15.2
    512 x 1024 x 1024       5.39 -> 4.99        5.91
    ======================  ===========  ===========

    and batch_matmul with a transposed operand, batch x m x n x k, the packing at the
    head or gathered in the tasks -> blocks in the tasks: 8 x 64 x 128 x 2048 2.35 ->
    1.79 ms, 4 x 128 x 512 x 1024 (4 KB rows, gathered) 4.24 -> 2.97, numpy 2.96 and
    4.10. Rows of 2 KB still gather faster (8 x 128 x 256 x 512: 1.70 against 1.94).

    Panels past L2 (1 MB at k = 8192) still gain: each is read from L3 by its own
    task. q @ k^T (12 x 128 x 128 x 64) ran 130 us instead of 135. Gathering a weight's
    panel rows along the vector axis reads 32 rows whose equal, page-sized strides fall
    into one set of the L1 cache: 128 x 1024 x 1024 took 2.07 ms."""
    row_iv, col_iv, rows, cols = tiles
    found = vector_operand(col_iv, loads)
    if found is None:
        return None
    n, dim = found
    load = loads[n]
    # (``find_block`` has already checked that the product has one reduce iterator.)
    others = {iv.var for iv in info.block.iter_vars if iv.iter_type.name == "DATA_PAR"} \
        - {row_iv.var, col_iv.var}
    (k,) = [iv.var for iv in info.block.iter_vars if iv.iter_type.name != "DATA_PAR"]
    shape = [int(d.value) if hasattr(d, "value") else 0 for d in load.buffer.shape]
    if not all(shape) or shape[dim] % cols:
        return None
    batched = bool(others & iter_vars_of(load))
    if dim == len(load.indices) - 1:        # B[k, j]: where the head would pack it
        row_tiles = -(-int(row_iv.dom.extent.value) // rows)
        if batched or not min_row_tiles <= row_tiles <= TASK_MAX_ROW_TILES \
                or _read_in_place(load.buffer, dim):
            return None
    row = shape[-1] * load.buffer.dtype.bits // 8
    # A batched operand's short rows (attention's k) are gathered along the vector axis.
    transposed = dim != len(load.indices) - 1
    gather = batched and row < PACK_MIN_ROW_BYTES and cols * row <= GATHER_SPAN_BYTES
    try:
        return _pack_in_tasks(sch.copy(), info, load, (dim, list(load.indices).index(k)),
                              tiles, find_block, blocks=transposed and not gather)
    except ScheduleError:       # a nest the steps do not fit: the panels at the head
        return None


def _pack_in_tasks(trial, info, load, dims, tiles, find_block, blocks: bool):
    """:func:`pack_in_tasks`'s steps; ``dims``: the operand's dimensions of ``j`` and
    ``k``; ``blocks``: copy a transposed operand in blocks transposed in registers, else
    a vector of a panel row at a time."""
    dim, k_dim = dims
    copy = trial.cache_read(info.rv, [r.buffer for r in info.block.reads].index(load.buffer),
                            "global")
    copy_name = trial.get(copy).name_hint
    info, _ = find_block(trial)
    if not tile_contraction(trial, info, tiles, row_tiles_inner=True):
        return None
    update = _info_named(trial, f"{info.name}_update")
    reduce_vars = {iv.var for iv in update.block.iter_vars if iv.iter_type.name != "DATA_PAR"}
    loops = trial.get_loops(update.rv)
    k_at = next((i for i, lp in enumerate(loops)
                 if trial.get(lp).loop_var in _bound_loop_vars(update, reduce_vars)), None)
    if k_at is None or k_at < 2:
        return None
    # Above the row tiles (loops[k_at - 1]): the panel, or the batch's panels, they read.
    trial.compute_at(copy, loops[k_at - 2])
    trial.transform_layout(copy, ("write", 0), panel_index_map(dim, tiles[3]))
    filler = _info_named(trial, copy_name)
    # The copy's iterators follow the operand's dimensions.
    j_var, k_var = (filler.block.iter_vars[d].var for d in (dim, k_dim))
    inner = trial.get_loops(filler.rv)[k_at - 1:]
    j, k = (next((lp for lp in inner if trial.get(lp).loop_var
                  in _bound_loop_vars(filler, {var})), None) for var in (j_var, k_var))
    if j is None:
        return None
    if k is None:           # a reduction of one has no loop of its own
        trial.vectorize(j)
    elif blocks:
        k0, k1 = trial.split(k, [None, TRANSPOSE_RUN])
        j0, j1 = trial.split(j, [None, TRANSPOSE_RUN])
        trial.reorder(k0, j0, k1, j1)
        _transpose_in_registers(trial, filler.rv, j0)
        trial.unroll(k1)
        trial.vectorize(j1)
    else:
        trial.reorder(k, j)
        trial.vectorize(j)
    return trial


def _transpose_in_registers(sch, copy, block_loop) -> None:
    """Read each block of the copy as rows of ``TRANSPOSE_RUN`` contiguous elements into
    a local block, which the copy then stores column by column: LLVM keeps the block in
    registers and turns the columns into shuffles, where reading the source column by
    column loaded it one element at a time. 128 x 1024 x 1024 with the weight an
    argument, 2-core Zen 4: 1.56 -> 1.46 ms; 128 x 768 x 768 0.77 -> 0.70."""
    block = sch.cache_read(copy, 0, "local")
    sch.compute_at(block, block_loop)
    *_, rows, row = sch.get_loops(block)
    sch.unroll(rows)
    sch.vectorize(row)


def _info_named(sch, name: str):
    return next(i for i in block_infos(sch) if i.name == name)


def _bound_loop_vars(info, block_vars: set) -> set:
    """The loop variables the block binds to any of ``block_vars``."""
    found = set()
    for iv, value in zip(info.block.iter_vars, info.realize.iter_values):
        if iv.var in block_vars:
            found |= iter_vars_of(value)
    return found


def _read_in_place(buffer, dim: int) -> bool:
    """Rows (along ``dim``, the last axis) shorter than PACK_MIN_ROW_BYTES, and the rows
    of one matrix (the two last axes) spanning at most IN_PLACE_MAX_BYTES."""
    row = int(buffer.shape[dim]) * buffer.dtype.bits // 8
    rows = int(buffer.shape[dim - 1]) if dim >= 1 else 1
    return row < PACK_MIN_ROW_BYTES and rows * row <= IN_PLACE_MAX_BYTES


def schedule_packing(sch, block_name, vector_dim, width, parallel, func_name=None):
    """Fill the panels. A source already contiguous along the vector axis is copied a
    vector at a time; a transposed one (``W[j, k]``) reads ``TRANSPOSE_RUN`` contiguous
    elements along its last axis per vector and scatters them into the panel, which
    measured faster than gathering along the vector axis for long rows::

        for j0_k0 in T.parallel(..):  for j1 in range(32):  for k1 in T.vectorized(8):
            W_global[j0, k, j1] = W[j0 * 32 + j1, k]

    Where the panel's rows span at most ``GATHER_SPAN_BYTES``, a panel row is gathered
    instead (``for k1 in range(8): for j1 in T.vectorized(32)``).
    """
    loops = sch.get_loops(sch.get_block(block_name, func_name=func_name))
    vector_loop, last = loops[vector_dim], loops[-1]
    j0, j1 = sch.split(vector_loop, [None, width])
    if vector_loop is last:
        others = loops[:-1]
        if others:
            sch.reorder(*others[:-1], j0, others[-1], j1)
        outer_parts, vector = [*others[:-1], j0], j1
    else:
        others = [lp for lp in loops if lp not in (vector_loop, last)]
        row = sch.get(last).extent
        source = sch.get(sch.get_block(block_name, func_name=func_name)).reads[0].buffer
        span = width * int(row.value) * source.dtype.bits // 8 if hasattr(row, "value") \
            else None
        k0, k1 = sch.split(last, [None, TRANSPOSE_RUN])
        # Short rows: gather a panel row along the vector axis (one contiguous store);
        # long ones: read the source along its contiguous last axis, scatter into the panel.
        gather = span is not None and span <= GATHER_SPAN_BYTES
        inner = (k1, j1) if gather else (j1, k1)
        sch.reorder(*others, j0, k0, *inner)
        outer_parts, vector = [*others, j0, k0], inner[-1]
    sch.vectorize(vector)
    outer = sch.fuse(*outer_parts) if len(outer_parts) > 1 else outer_parts[0]
    if parallel:
        sch.parallel(outer)
