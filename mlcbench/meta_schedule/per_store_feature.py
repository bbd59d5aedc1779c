"""One feature row per buffer store of lowered TIR, in the spirit of Ansor's features.

A row describes the work of one ``BufferStore`` under its loop nest, every count
multiplied out by the loop extents and then put through ``slog(x) = log2(|x| + 1)``
(one-hot entries stay 0/1). The groups, in order (names in :func:`feature_names`):

1. arithmetic: float/int add-sub, mul, mad (``a * b + c``), div-mod, comparisons, math
   calls (``T.exp``...), other calls, boolean ops, selects -- in the stored value, and
   integer work in the index expressions;
2. loop kinds, for each of vectorize / unroll / parallel: how many loops, the product
   and innermost of their extents, and where the innermost one sits (one-hot: none,
   inner/middle/outer spatial, inner/middle/outer reduction, mixed);
3. buffer accesses, for the ``buffers_per_store`` buffers that touch the most cache
   lines: read/write/readwrite, bytes, unique bytes, lines, unique lines, reuse kind,
   distance and count, the stride of the innermost loop that moves the index, the
   stride of the innermost loop, and the stride of the *vector loop* (below)
   (see :mod:`~mlcbench.meta_schedule.access_pattern`);
4. arithmetic intensity: flops per touched byte sampled along the loop nest from the
   innermost loop outwards;
5. allocation of the stored buffer: bytes, elements times the loops around the
   allocation, those loops' product, the loops inside it, local (non-global) scope;
6. the loop nest: total iterations, number of loops, ``pragma_auto_unroll_max_step``,
   the innermost and the outermost loop extents, cache lines fetched for a 32 KiB and a
   1 MiB cache (the footprint that fits is refetched by the loops outside it), and the
   vector loop -- the innermost ``T.vectorized`` loop, else the innermost loop LLVM may
   vectorize (not unrolled, 8 or more iterations): its extent, whether it is explicit,
   whether it is a reduction loop, and the iterations of the loops inside it;
7. the register tile: the iterations of the innermost loops that become straight-line
   code (``T.unroll``, ``T.vectorized``, and serial loops within the
   ``pragma_auto_unroll_max_step`` in force), the output elements one step of the
   innermost reduction loop updates, and whether all of those are in the straight-line
   part (then the accumulators can stay in registers).

The input is TIR lowered up to (not including) unrolling and vectorization: buffers are
flat, loops still say ``T.vectorized``/``T.unroll``/``T.parallel``. Loops of one
iteration are left out, and so are stores of a constant (the init of a reduction), as
in TVM; a store under ``if k == 0:`` counts the loop ``k`` once.
"""
from __future__ import annotations

import math

import numpy as np

from ..tir import expr as E
from ..tir.function import PrimFunc
from ..tir.functor import StmtExprVisitor
from ..tir.stmt import ForKind
from .access_pattern import (Access, Loop, cache_misses, contiguous_elements, find_reuse,
                             index_variables, loop_strides, region_numel)

ARITH_NAMES = ("float_mad", "float_addsub", "float_mul", "float_divmod", "float_cmp",
               "float_math_func", "float_other_func", "int_mad", "int_addsub", "int_mul",
               "int_divmod", "int_cmp", "int_math_func", "int_other_func", "bool_op",
               "select_op")
POSITIONS = ("none", "inner_spatial", "middle_spatial", "outer_spatial", "inner_reduce",
             "middle_reduce", "outer_reduce", "mixed")
LOOP_KINDS = (("vec", ForKind.VECTORIZED), ("unroll", ForKind.UNROLLED),
              ("parallel", ForKind.PARALLEL))
ACCESS_NAMES = ("acc_read", "acc_write", "acc_readwrite", "bytes", "unique_bytes", "lines",
                "unique_lines", "reuse_loop", "reuse_serial", "reuse_none", "reuse_dis_iter",
                "reuse_dis_bytes", "reuse_ct", "bytes_d_reuse_ct", "unique_bytes_d_reuse_ct",
                "lines_d_reuse_ct", "unique_lines_d_reuse_ct", "stride", "innermost_stride",
                "vector_stride")
ALLOC_NAMES = ("alloc_size", "alloc_prod", "alloc_outer_prod", "alloc_inner_prod",
               "alloc_local")
NEST_NAMES = ("outer_prod", "num_loops", "auto_unroll_max_step", "innermost_extent",
              "outermost_extent", "l1_miss_lines", "l2_miss_lines", "vector_extent",
              "vector_explicit", "vector_reduce", "vector_body", "unrolled_steps",
              "register_tile", "register_tile_unrolled")
_ONE_HOT = {"acc_read", "acc_write", "acc_readwrite", "reuse_loop", "reuse_serial",
            "reuse_none", "alloc_local", "register_tile_unrolled"}


def feature_names(buffers_per_store: int = 5, curve_samples: int = 10) -> tuple:
    """The name of every column of a row, e.g. ``"vec_len"``, ``"B0.stride"``."""
    names = list(ARITH_NAMES)
    for prefix, _ in LOOP_KINDS:
        names += [f"{prefix}_num", f"{prefix}_prod", f"{prefix}_len"]
        names += [f"{prefix}_pos_{p}" for p in POSITIONS]
    for b in range(buffers_per_store):
        names += [f"B{b}.{n}" for n in ACCESS_NAMES]
    names += [f"arith_intensity_{s}" for s in range(curve_samples)]
    return tuple(names + list(ALLOC_NAMES) + list(NEST_NAMES))


def log_mask(names) -> np.ndarray:
    """True for the columns that go through ``slog`` (all but the one-hot ones)."""
    short = [n.rsplit(".", 1)[-1] for n in names]
    return np.array([n not in _ONE_HOT and "_pos_" not in n for n in short])


# -- group 1: arithmetic ---------------------------------------------------------------
_FLOAT_SLOT = {E.Add: 1, E.Sub: 1, E.Mul: 2, E.Div: 3, E.Mod: 3, E.FloorDiv: 3,
               E.FloorMod: 3, E.Min: 4, E.Max: 4, E.EQ: 4, E.NE: 4, E.LT: 4, E.LE: 4,
               E.GT: 4, E.GE: 4}
_BOOL_OPS = (E.And, E.Or, E.Not)


def count_ops(expr, counts: list) -> None:
    """Add one to ``counts[slot]`` per operation in ``expr`` (slots as ARITH_NAMES)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        slot = _FLOAT_SLOT.get(kind)
        if slot is not None:
            is_int = not node.a.dtype.is_float
            if kind is E.Add and not is_int and E.Mul in (type(node.a), type(node.b)):
                product, addend = (node.a, node.b) if type(node.a) is E.Mul else (node.b, node.a)
                counts[0] += 1                      # a * b + c: one multiply-add
                stack += (product.a, product.b, addend)
                continue
            counts[slot + 7 * is_int] += 1
            stack += (node.a, node.b)
        elif kind in _BOOL_OPS:
            counts[14] += 1
            stack += (node.a, node.b) if kind is not E.Not else (node.a,)
        elif kind is E.Select:
            counts[15] += 1
            stack += (node.condition, node.true_value, node.false_value)
        elif kind is E.Call:
            counts[_call_slot(node)] += 1
            stack += [a for a in node.args if isinstance(a, E.PrimExpr)]
        elif kind is E.BufferLoad:
            stack += node.indices
        elif kind in (E.Cast, E.Broadcast):
            stack.append(node.value)
        elif kind is E.Let:
            stack += (node.value, node.body)


def _call_slot(call) -> int:
    base = 0 if call.dtype.is_float else 7
    if call.op == "tir.fma":
        return base
    if call.op == "tir.if_then_else":
        return 15
    if call.op == "tir.call_extern" or not call.op.startswith("tir."):
        return base + 6
    return base + 5


# -- group 2: loop kinds ----------------------------------------------------------------
def loop_kind_features(loops: list, kind: str, spatial: set) -> list:
    """num, prod, len and the one-hot position of the loops of one kind."""
    chosen = [loop for loop in loops if loop.kind == kind]
    position = [0.0] * len(POSITIONS)
    if not chosen:
        position[0] = 1.0
        return [0.0, 0.0, 0.0] + position
    is_spatial = {loop.var in spatial for loop in chosen}
    if len(is_spatial) > 1:
        position[7] = 1.0
    else:
        same = [loop for loop in loops if (loop.var in spatial) in is_spatial]
        where = same.index(chosen[-1])
        offset = 1 if True in is_spatial else 4
        position[offset + (0 if where == len(same) - 1 else 2 if where == 0 else 1)] = 1.0
    prod = math.prod(loop.extent for loop in chosen)
    return [float(len(chosen)), float(prod), float(chosen[-1].extent)] + position


# -- the walk ----------------------------------------------------------------------------
class StoreFeatureCollector(StmtExprVisitor):
    """Walks the statements of one lowered PrimFunc; ``rows`` gets one list per store.

    >>> rows = StoreFeatureCollector(func).collect()      # doctest: +SKIP
    """

    def __init__(self, func: PrimFunc, buffers_per_store: int = 5, curve_samples: int = 10,
                 cache_line_bytes: int = 64, cache_bytes=(32 * 1024, 1024 * 1024)):
        self.func = func
        self.cache_bytes = cache_bytes
        self.buffers_per_store = buffers_per_store
        self.curve_samples = curve_samples
        self.cache_line_bytes = cache_line_bytes
        self.loops: list = []                 # enclosing loops, outermost first
        self.unroll_max_step = 0              # pragma_auto_unroll_max_step in force
        self.rows: list = []
        self.allocations: dict = {}           # data Var -> (numel, itemsize, outer prod, scope)
        self.allocation_depth: dict = {}      # data Var -> loops around its Allocate
        self.touched: dict = {}               # loop Var -> {buffer key: [region sizes]}
        self.dtype_bytes: dict = {}           # buffer key -> element size
        for buffer in func.buffer_map.values():
            self.allocations[buffer.data] = (_numel(buffer.shape), buffer.dtype.itemsize, 1,
                                             buffer.scope)

    def collect(self) -> list:
        self.visit(self.func.body)
        return self.rows

    # statements: walk bodies, never expressions
    def visit_For(self, op):
        inherited = self.unroll_max_step
        self.unroll_max_step = _const(op.annotations.get("pragma_auto_unroll_max_step",
                                                         inherited), inherited)
        extent = _const(op.extent, 1)
        # a loop of one iteration is no loop (TVM's lowering drops it): its kind and
        # position would only blur the features of the loops that do run
        unit = extent == 1 and _const(op.min, 0) == 0
        if not unit:
            self.loops.append(Loop(op.loop_var, _const(op.min, 0), extent, op.kind,
                                   self.unroll_max_step))
        self.visit(op.body)
        if not unit:
            self.loops.pop()
        self.unroll_max_step = inherited

    def visit_IfThenElse(self, op):
        pinned = _pinned_values(op.condition)
        saved = list(self.loops)
        self.loops = [Loop(x.var, pinned[x.var], 1, x.kind, x.unroll_max_step)
                      if x.var in pinned else x for x in self.loops]
        self.visit(op.then_case)
        self.loops = saved
        if op.else_case is not None:
            self.visit(op.else_case)

    def visit_Allocate(self, op):
        outer = math.prod(loop.extent for loop in self.loops)
        self.allocations[op.buffer.data] = (_numel(op.buffer.shape), op.buffer.dtype.itemsize,
                                            outer, op.buffer.scope)
        self.allocation_depth[op.buffer.data] = len(self.loops)
        self.visit(op.body)

    def visit_LetStmt(self, op):
        self.visit(op.body)

    visit_DeclBuffer = visit_AssertStmt = visit_LetStmt

    def visit_Evaluate(self, op):
        return None

    def visit_BufferStore(self, op):
        if not _is_constant(op.value):    # fills (a reduction's init) are left out, as in TVM
            self.rows.append(self._row(op))

    # one row
    def _row(self, store) -> list:
        loops = self.loops
        prod = math.prod(loop.extent for loop in loops)
        counts = [0] * len(ARITH_NAMES)
        count_ops(store.value, counts)
        for index in store.indices:
            count_ops(index, counts)
        accesses = _accesses(store)
        row = [c * prod for c in counts]
        # a loop is spatial when it moves the written element; the loops around the
        # allocation of a compacted local buffer do too (each has its own copy)
        depth = self.allocation_depth.get(store.buffer.data, 0)
        spatial = accesses[0].variables | {loop.var for loop in loops[:depth]}
        for _, kind in LOOP_KINDS:
            row += loop_kind_features(loops, kind, spatial)
        self._vector_loop = vector_loop(loops)
        access_rows, level_bytes, misses = self._access_features(accesses, prod)
        row += access_rows
        row += intensity_curve(sum(counts[:7]), loops, level_bytes, self.curve_samples)
        row += self._allocation_features(store.buffer, prod)
        row += [prod, len(loops), self.unroll_max_step,
                loops[-1].extent if loops else 1, loops[0].extent if loops else 1]
        return row + misses + self._vector_features(spatial) + register_tile(loops, spatial)

    def _vector_features(self, spatial: set) -> list:
        if self._vector_loop is None:
            return [0.0, 0.0, 0.0, 0.0]
        loop = self.loops[self._vector_loop]
        body = math.prod(x.extent for x in self.loops[self._vector_loop + 1:])
        return [loop.extent, float(loop.kind == ForKind.VECTORIZED),
                float(loop.var not in spatial), body]

    def _access_features(self, accesses: list, prod: int):
        loops, n = self.loops, len(self.loops)
        strides = [loop_strides(a, loops) for a in accesses]
        numels = [[region_numel(a, loops, i, s) for i in range(n)]
                  for a, s in zip(accesses, strides)]
        for access, sizes in zip(accesses, numels):
            self.dtype_bytes[access.key] = access.dtype_bytes
            for loop, size in zip(loops, sizes):
                self.touched.setdefault(loop.var, {}).setdefault(access.key, []).append(size)
        level_bytes = [sum(sizes[i] * a.dtype_bytes for a, sizes in zip(accesses, numels))
                       for i in range(n)]
        per_iteration = sum(a.dtype_bytes for a in accesses)
        features = [self._one_access(a, s, sizes, prod, per_iteration)
                    for a, s, sizes in zip(accesses, strides, numels)]
        features.sort(key=lambda f: (-f[0][ACCESS_NAMES.index("lines")],
                                     -f[0][ACCESS_NAMES.index("bytes")], f[1]))
        row = []
        for values, _ in features[:self.buffers_per_store]:
            row += values
        row += [0.0] * (len(ACCESS_NAMES) * (self.buffers_per_store - len(features)))
        misses = [cache_misses(accesses, loops, strides, numels, capacity, self.cache_line_bytes)
                  for capacity in self.cache_bytes]
        return row[:len(ACCESS_NAMES) * self.buffers_per_store], level_bytes, misses

    def _one_access(self, access, strides, sizes, prod, per_iteration):
        loops, width = self.loops, access.dtype_bytes
        moving = [i for i, s in enumerate(strides) if s]
        stride = strides[moving[-1]] if moving else 0
        still = math.prod(loop.extent for loop in loops[moving[-1] + 1:]) if moving else prod
        unique_bytes = (sizes[0] if sizes else 1) * width
        lines = max(1.0, prod / still * min(1.0, stride * width / self.cache_line_bytes))
        dense = min(contiguous_elements(loops, strides), sizes[0] if sizes else 1) * width
        unique_lines = max(1.0, unique_bytes / min(self.cache_line_bytes, dense))
        reuse = find_reuse(access, loops, self.touched, self.dtype_bytes, per_iteration)
        proxy = reuse.count if reuse.count > 0 else 0.5
        values = [float(access.kind == k) for k in ("read", "write", "readwrite")]
        values += [prod * width, unique_bytes, lines, unique_lines]
        values += [float(reuse.kind == k) for k in ("loop", "serial", "none")]
        values += [reuse.distance_iters, reuse.distance_bytes, reuse.count]
        values += [prod * width / proxy, unique_bytes / proxy, lines / proxy,
                   unique_lines / proxy, stride, _innermost_stride(loops, strides),
                   strides[self._vector_loop] if self._vector_loop is not None else 0]
        return values, access.name

    def _allocation_features(self, buffer, prod: int) -> list:
        info = self.allocations.get(buffer.data)
        if info is None:
            return [0.0] * len(ALLOC_NAMES)
        numel, itemsize, outer, scope = info
        return [numel * itemsize, numel * outer, outer, prod / outer, float(scope != "global")]


def unrolled_suffix(loops: list) -> tuple:
    """(loops, steps): how many of the innermost loops become straight-line code --
    ``T.unroll`` and ``T.vectorized`` loops, and serial loops that the
    ``pragma_auto_unroll_max_step`` in force lets ``UnrollLoop`` copy out -- and the
    iterations of the store they hold."""
    count, steps = 0, 1
    for loop in reversed(loops):
        copied = loop.kind in (ForKind.UNROLLED, ForKind.VECTORIZED) or (
            loop.kind == ForKind.SERIAL and loop.extent * steps <= loop.unroll_max_step)
        if not copied:
            break
        count, steps = count + 1, steps * loop.extent
    return count, steps


def register_tile(loops: list, spatial: set) -> list:
    """unrolled_steps, register_tile, register_tile_unrolled.

    The register tile is the output elements one step of the innermost reduction loop
    updates (the product of the loops inside it; 0 without a reduction loop). When
    every one of those loops is unrolled or vectorized, the accumulators can live in
    registers (1.0); a loop left rolled makes them memory traffic (0.0)."""
    count, steps = unrolled_suffix(loops)
    reductions = [i for i, loop in enumerate(loops) if loop.var not in spatial]
    if not reductions:
        return [steps, 0.0, 0.0]
    inside = loops[reductions[-1] + 1:]
    tile = math.prod(loop.extent for loop in inside)
    return [steps, tile, float(len(inside) <= count)]


def vector_loop(loops: list):
    """Position of the loop that SIMD lanes run along: the innermost ``T.vectorized``
    one, else the innermost loop LLVM may vectorize (not unrolled, at least 8 long)."""
    for kinds, shortest in (((ForKind.VECTORIZED,), 2), ((ForKind.SERIAL, ForKind.PARALLEL), 8)):
        for position in range(len(loops) - 1, -1, -1):
            if loops[position].kind in kinds and loops[position].extent >= shortest:
                return position
    return None


def _innermost_stride(loops: list, strides: list) -> int:
    """How far one step of the innermost non-unit loop moves the index (0: not at all)."""
    inner = [s for loop, s in zip(loops, strides) if loop.extent > 1]
    return inner[-1] if inner else 0


def _accesses(store) -> list:
    """The buffers ``store`` touches, the written one first."""
    found: dict = {}

    def add(buffer, indices, kind):
        index = indices[0] if len(indices) == 1 else buffer.offset_of(indices)
        access = found.get(buffer.data)
        if access is None:
            access = found[buffer.data] = Access(buffer.data, buffer.name,
                                                 buffer.dtype.itemsize, kind)
        elif access.kind != kind:
            access.kind = "readwrite"
            return                            # the update reads what it writes: same index
        access.indices.append(index)
        access.variables |= index_variables(index)

    add(store.buffer, store.indices, "write")
    stack = [store.value]
    while stack:
        node = stack.pop()
        if isinstance(node, E.BufferLoad):
            add(node.buffer, node.indices, "read")
        if isinstance(node, E.PrimExpr):
            stack += reversed([x for f in node._fields for x in _children(getattr(node, f.name))])
    return list(found.values())


def _children(value) -> list:
    if isinstance(value, E.PrimExpr):
        return [value]
    if isinstance(value, tuple):
        return [x for x in value if isinstance(x, E.PrimExpr)]
    return []


def intensity_curve(flops_per_iteration: float, loops: list, level_bytes: list,
                    samples: int) -> list:
    """Flops per touched byte at ``samples`` evenly spaced amounts of work, from the
    innermost loop outwards (linear between loop levels), as Ansor's curve."""
    if not loops or flops_per_iteration <= 0 or samples <= 0:
        return [0.0] * samples
    ops, ratio = [], []
    work = float(flops_per_iteration)
    for level in range(len(loops) - 1, -1, -1):
        work *= loops[level].extent
        ops.append(work)
        ratio.append(work / max(level_bytes[level], 1))
    curve, p = [], 0
    for s in range(samples):
        target = (s + 1) / samples * ops[-1]
        while p < len(ops) - 1 and ops[p] < target * (1 - 1e-9):
            p += 1
        if p == 0:
            curve.append(ratio[0])
        else:
            slope = (ratio[p] - ratio[p - 1]) / (ops[p] - ops[p - 1])
            curve.append(ratio[p - 1] + slope * (target - ops[p - 1]))
    return curve


def _pinned_values(condition) -> dict:
    """``{var: value}`` for each ``var == constant`` conjunct of an if condition."""
    if isinstance(condition, E.And):
        return {**_pinned_values(condition.a), **_pinned_values(condition.b)}
    if isinstance(condition, E.EQ) and isinstance(condition.a, E.Var) \
            and isinstance(condition.b, E.IntImm):
        return {condition.a: condition.b.value}
    return {}


def _is_constant(value) -> bool:
    if isinstance(value, E.Broadcast):
        value = value.value
    return isinstance(value, (E.IntImm, E.FloatImm))


def _const(value, default: int) -> int:
    if isinstance(value, int):
        return value
    return value.value if isinstance(value, E.IntImm) else default


def _numel(shape) -> int:
    return math.prod(_const(d, 1) for d in shape)
