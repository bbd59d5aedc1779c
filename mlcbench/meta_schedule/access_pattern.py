"""How a loop nest walks the memory of one buffer: regions, strides, cache lines, reuse.

The analysis behind the buffer-access features of :mod:`~mlcbench.meta_schedule.per_store_feature`.
It works on the *flat* indices of lowered TIR (``A_1[i_0 * 256 + i_1 * 128 + k]``), so a
buffer is one line of elements and every question is about a set of integers:

* the **stride** of a loop is how far one step of it moves the index;
* the **region** under loop ``i`` is how many distinct elements the loops from ``i``
  inwards touch while the loops outside stay put; we bound it by the span of the index
  (an interval evaluation) and by the product of the extents of the loops it uses;
* **reuse** is found, as in Ansor, at the innermost loop the index does not depend on
  (every iteration reads the same data again) or at a loop under which earlier stores
  touched the same buffer (serial reuse).

Example: ``C[i * 16 + j] += A[i * 8 + k] * B[k * 16 + j]`` under ``i, j, k`` of extents
4, 16, 8 has strides ``{i: 8, j: 0, k: 1}`` on ``A`` (reused across ``j``), and the
region of ``A`` under the whole nest is 32 elements.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..tir import expr as E

UNKNOWN = 2 ** 40      # the bound of a value the analysis cannot see (an indirect index)


@dataclass
class Loop:
    """One enclosing loop as the features see it: ``extent`` is 1 when an
    ``if var == c`` pins the loop (the init of a reduction runs once per reduction)."""

    var: E.Var
    min: int
    extent: int
    kind: str                  # ForKind value: "serial", "parallel", "vectorized", "unroll"
    unroll_max_step: int = 0   # the ``pragma_auto_unroll_max_step`` annotation


@dataclass
class Access:
    """Every access of one buffer by one store."""

    key: object                # the buffer's data Var: flat views of one buffer share it
    name: str
    dtype_bytes: int
    kind: str                  # "read", "write" or "readwrite"
    indices: list = field(default_factory=list)   # flat index expressions
    variables: set = field(default_factory=set)   # Vars used by the indices


# -- interval evaluation ------------------------------------------------------------------
def _add(a, b):
    return a[0] + b[0], a[1] + b[1]


def _sub(a, b):
    return a[0] - b[1], a[1] - b[0]


def _mul(a, b):
    products = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(products), max(products)


# Only division by one positive constant is followed; anything else is unbounded.
def _div(a, b):
    if b[0] != b[1] or b[0] <= 0:
        return -UNKNOWN, UNKNOWN
    return a[0] // b[0], a[1] // b[0]


def _mod(a, b):
    if b[0] != b[1] or b[0] <= 0:
        return -UNKNOWN, UNKNOWN
    c = b[0]
    # The range stays within one block of c: its remainders keep their order.
    if a[0] // c == a[1] // c:
        return a[0] % c, a[1] % c
    return 0, c - 1


_BINARY = {E.Add: _add, E.Sub: _sub, E.Mul: _mul, E.FloorDiv: _div, E.Div: _div,
           E.FloorMod: _mod, E.Mod: _mod,
           E.Min: lambda a, b: (min(a[0], b[0]), min(a[1], b[1])),
           E.Max: lambda a, b: (max(a[0], b[0]), max(a[1], b[1]))}


def bounds(expr, env: dict) -> tuple:
    """``(lo, hi)`` of an integer expression when each Var lies in ``env[var]``.

    Variables missing from ``env`` count as 0 (a let-bound or outer symbol the caller
    keeps fixed); anything the evaluator cannot follow spans ``[-UNKNOWN, UNKNOWN]``.

    >>> i = E.Var("i")
    >>> bounds(i * 4 + 3, {i: (0, 7)})
    (3, 31)
    """
    kind = type(expr)
    if kind is E.IntImm:
        return expr.value, expr.value
    if kind is E.Var or kind is E.SizeVar:
        return env.get(expr, (0, 0))
    rule = _BINARY.get(kind)
    if rule is not None:
        return rule(bounds(expr.a, env), bounds(expr.b, env))
    if kind is E.Cast:
        return bounds(expr.value, env)
    if kind is E.Let:
        inner = dict(env)
        inner[expr.var] = bounds(expr.value, env)
        return bounds(expr.body, inner)
    if kind is E.Select:
        t, f = bounds(expr.true_value, env), bounds(expr.false_value, env)
        return min(t[0], f[0]), max(t[1], f[1])
    if kind is E.Ramp:
        base, stride = bounds(expr.base, env), bounds(expr.stride, env)
        return _add(base, _mul(stride, (0, expr.lanes - 1)))
    return -UNKNOWN, UNKNOWN


def index_variables(expr) -> set:
    """The Vars an index expression reads."""
    found = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, E.Var):
            found.add(node)
        elif isinstance(node, E.BinaryOp):
            stack += (node.a, node.b)
        elif isinstance(node, E.PrimExpr):
            stack += [getattr(node, f.name) for f in node._fields
                      if isinstance(getattr(node, f.name), E.PrimExpr)]
            stack += [x for f in node._fields if isinstance(getattr(node, f.name), tuple)
                      for x in getattr(node, f.name) if isinstance(x, E.PrimExpr)]
    return found


# -- per-access measures ------------------------------------------------------------------
def loop_strides(access: Access, loops: list) -> list:
    """Per loop, the smallest non-zero |index step| over the access's indices (0: none)."""
    base = {loop.var: (loop.min, loop.min) for loop in loops}
    strides = []
    for loop in loops:
        # A loop the index does not use, or of one iteration, never moves it.
        if loop.var not in access.variables or loop.extent <= 1:
            strides.append(0)
            continue
        step = dict(base)
        step[loop.var] = (loop.min + 1, loop.min + 1)
        moves = [abs(bounds(ix, step)[0] - bounds(ix, base)[0]) for ix in access.indices]
        moves = [m for m in moves if m]
        strides.append(min(moves) if moves else 0)
    return strides


def region_numel(access: Access, loops: list, level: int, strides: list) -> int:
    """Distinct elements touched by loops ``level..`` (outer loops fixed at their min)."""
    env = {loop.var: (loop.min, loop.min) for loop in loops[:level]}
    for loop in loops[level:]:
        env[loop.var] = (loop.min, loop.min + loop.extent - 1)
    inner = list(zip(loops[level:], strides[level:]))
    step = 0
    for _, stride in inner:
        step = math.gcd(step, stride)
    lo, hi = UNKNOWN, -UNKNOWN
    cap = 0
    for index in access.indices:
        index_lo, index_hi = bounds(index, env)
        lo, hi = min(lo, index_lo), max(hi, index_hi)
        cap += math.prod(loop.extent for loop, _ in inner if loop.var in access.variables)
    return max(1, min(cap, (hi - lo) // max(step, 1) + 1))


def contiguous_elements(loops: list, strides: list) -> int:
    """Length of the dense run the loops sweep, starting from unit stride: loops whose
    stride fits inside the run so far extend it (``k * 16 + j`` with j < 16: 16 * extent(k))."""
    run = 1
    for stride, extent in sorted((s, loop.extent) for s, loop in zip(strides, loops) if s):
        if stride > run:
            break
        run += stride * (extent - 1)
    return run


@dataclass
class Reuse:
    kind: str = "none"         # "loop" (invariant loop), "serial" (earlier stores), "none"
    distance_iters: float = 0.0
    distance_bytes: float = 0.0
    count: float = 0.0


def find_reuse(access: Access, loops: list, touched: dict, dtype_bytes: dict,
               innermost_bytes: float) -> Reuse:
    """Reuse of ``access`` at the innermost loop that offers it.

    ``touched[loop var][buffer key]`` lists the region sizes earlier stores (and this one)
    touched under that loop; ``dtype_bytes`` maps buffer keys to element sizes.
    """
    for position in range(len(loops) - 1, -1, -1):
        loop = loops[position]
        if loop.var not in access.variables and loop.extent > 1:
            inner = loops[position + 1:]
            if inner:
                under = touched.get(inner[0].var, {})
                distance = sum(sum(n) * dtype_bytes[k] for k, n in under.items())
            else:
                distance = innermost_bytes
            return Reuse("loop", float(math.prod(x.extent for x in inner)), float(distance),
                         float(loop.extent))
        sizes = touched.get(loop.var, {}).get(access.key, ())
        if len(sizes) >= 2:
            under = touched[loop.var]
            distance = sum(sum(n) * dtype_bytes[k] for k, n in under.items())
            return Reuse("serial", min(sizes) / loop.extent, distance / loop.extent,
                         float(len(sizes) - 1))
    return Reuse()


def cache_misses(accesses: list, loops: list, strides: list, numels: list,
                 capacity: int, line_bytes: int) -> float:
    """Cache lines fetched by the nest for a cache of ``capacity`` bytes, roughly.

    Find the outermost loop whose footprint (all accesses, one iteration of the loops
    outside it) fits; the loops outside run that footprint again and again, each time
    fetching its lines anew. Nothing fits: every access of every iteration misses.
    """
    level = next((i for i in range(len(loops))
                  if sum(sizes[i] * a.dtype_bytes for a, sizes in zip(accesses, numels))
                  <= capacity), len(loops))
    outer = math.prod(loop.extent for loop in loops[:level])
    if level == len(loops):
        return float(outer * len(accesses))
    lines = 0.0
    for access, stride, sizes in zip(accesses, strides, numels):
        run = min(contiguous_elements(loops[level:], stride[level:]), sizes[level])
        lines += max(1.0, sizes[level] * access.dtype_bytes
                     / min(line_bytes, run * access.dtype_bytes))
    return outer * lines
