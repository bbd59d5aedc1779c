"""Which buffer accesses of a lowered PrimFunc stay in bounds only for some scalar arguments.

``for i in range(n): A[i] = ...`` on ``A: T.Buffer((16,))`` is in bounds for ``n <= 16``
only, and nothing in the shapes says so. For every access to a parameter buffer this
relaxes the loops around it (:func:`~mlcbench.arith.eval_set`) into an index range
written in the scalar parameters and symbolic dims; where the range is not provably
inside the buffer it becomes a runtime :class:`~mlcbench.runtime.access_checks.AccessCheck`
that the compiled entry evaluates with the actual arguments::

    scalar_access_checks(lowered, {n: "n"})
    (AccessCheck(buffer='A', kind='writes', low=0, high=('-', 'n', 1), uses=('n',),
                 nonempty=('n',)), ...)

Conditions around an access narrow it: ``if i < m`` bounds the loop variable ``i`` by
``m``, ``if n <= 16`` (no loop variable) is checked with the access. An access under a
condition of any other form, or whose index reads memory, gets no check: a range that
ignored such a condition could refuse calls that are correct.
"""
from __future__ import annotations

from ...arith import Analyzer
from ...arith.int_set import IntSet, eval_set
from ...runtime.access_checks import AccessCheck
from .. import expr as E
from .. import stmt as S
from ..functor import StmtExprMutator, post_order_visit, substitute, uses_var

_FORMULA_OPS = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.FloorDiv: "//", E.FloorMod: "%",
                E.Min: "min", E.Max: "max"}
_FLIPPED = {E.LT: E.GT, E.LE: E.GE, E.GT: E.LT, E.GE: E.LE}
_NEGATED = {E.LT: E.GE, E.LE: E.GT, E.GT: E.LE, E.GE: E.LT}


class _Context:
    """The loops, lets and conditions around a statement (rebuilt, never mutated)."""

    def __init__(self, loops=(), lets=None, conditions=(), opaque=False):
        self.loops = loops            # ((var, min, extent), ...), outermost first
        self.lets = lets or {}        # {var: value with outer lets substituted}
        self.conditions = conditions  # comparisons that hold where the statement runs
        self.opaque = opaque          # under a condition we cannot use

    def with_loop(self, loop: S.For) -> "_Context":
        entry = (loop.loop_var, self.resolve(loop.min), self.resolve(loop.extent))
        return _Context(self.loops + (entry,), self.lets, self.conditions, self.opaque)

    def with_let(self, var, value) -> "_Context":
        return _Context(self.loops, {**self.lets, var: self.resolve(value)}, self.conditions,
                        self.opaque)

    def with_condition(self, condition, holds: bool = True) -> "_Context":
        conjuncts = _conjuncts(self.resolve(condition)) if holds else [self.resolve(condition)]
        usable = []
        for cond in conjuncts:
            cond = cond if holds else _negated(cond)
            if cond is None or type(cond) not in _FLIPPED:
                return _Context(self.loops, self.lets, self.conditions, True)
            usable.append(cond)
        return _Context(self.loops, self.lets, self.conditions + tuple(usable), self.opaque)

    def resolve(self, expr):
        return substitute(expr, self.lets) if self.lets else expr


def _conjuncts(condition) -> list:
    if isinstance(condition, E.And):
        return _conjuncts(condition.a) + _conjuncts(condition.b)
    return [condition]


def _negated(condition):
    cls = _NEGATED.get(type(condition))
    return None if cls is None else E.binary(cls, condition.a, condition.b)


class _Access:
    def __init__(self, buffer, param, kind: str, indices, context: _Context):
        self.buffer, self.param, self.kind = buffer, param, kind
        self.indices, self.context = indices, context


def _collect(stmt, context: _Context, params: dict, out: list) -> None:
    """Every load and store of a parameter buffer below ``stmt``, with its context."""
    if isinstance(stmt, S.For):
        _collect_loads(stmt.extent, context, params, out)
        _collect(stmt.body, context.with_loop(stmt), params, out)
    elif isinstance(stmt, S.IfThenElse):
        _collect_loads(stmt.condition, context, params, out)
        _collect(stmt.then_case, context.with_condition(stmt.condition), params, out)
        if stmt.else_case is not None:
            _collect(stmt.else_case, context.with_condition(stmt.condition, holds=False),
                     params, out)
    elif isinstance(stmt, S.LetStmt):
        _collect_loads(stmt.value, context, params, out)
        _collect(stmt.body, context.with_let(stmt.var, stmt.value), params, out)
    elif isinstance(stmt, S.AssertStmt):
        _collect(stmt.body, context.with_condition(stmt.condition), params, out)
    elif isinstance(stmt, S.BufferStore):
        _collect_loads((stmt.value, stmt.indices), context, params, out)
        _add(stmt.buffer, "writes", stmt.indices, context, params, out)
    elif isinstance(stmt, S.SeqStmt):
        for part in stmt.seq:
            _collect(part, context, params, out)
    elif isinstance(stmt, S.Stmt):
        for field in stmt._fields:
            value = getattr(stmt, field.name)
            if isinstance(value, S.Stmt):
                _collect(value, context, params, out)
            elif isinstance(value, E.PrimExpr):
                _collect_loads(value, context, params, out)


def _collect_loads(expr, context: _Context, params: dict, out: list) -> None:
    def visit(node):
        if isinstance(node, E.BufferLoad):
            _add(node.buffer, "reads", node.indices, context, params, out)
    post_order_visit(expr, visit)


def _add(buffer, kind, indices, context, params, out) -> None:
    param = params.get(buffer.data)
    if param is not None and buffer.dtype == param.dtype:
        out.append(_Access(buffer, param, kind, indices, context))


class _Lanes(StmtExprMutator):
    """``Ramp(base, stride, lanes)`` -> ``base + t * stride`` with ``t`` in ``[0, lanes)``."""

    def __init__(self):
        self.lane_doms = {}

    def visit_Ramp(self, ramp):
        lane = E.Var(f"lane{len(self.lane_doms)}", ramp.base.dtype)
        self.lane_doms[lane] = IntSet.interval(0, ramp.lanes - 1)
        return E.binary(E.Add, self.visit(ramp.base), E.binary(E.Mul, lane, ramp.stride))

    def visit_Broadcast(self, broadcast):
        return self.visit(broadcast.value)


def _flat_index(access: _Access):
    buffer = access.buffer
    strides = buffer.strides or tuple(
        _product(buffer.shape[k + 1:]) for k in range(len(buffer.shape)))
    flat = E.const(0, "int64")
    for index, stride in zip(access.indices, strides):
        flat = E.binary(E.Add, flat, E.binary(E.Mul, E.cast("int64", index), stride))
    if buffer.elem_offset is not None and not E.is_const_int(buffer.elem_offset, 0):
        flat = E.binary(E.Add, flat, buffer.elem_offset)
    return access.context.resolve(flat)


def _product(dims):
    result = E.const(1, "int64")
    for dim in dims:
        result = E.binary(E.Mul, result, E.cast("int64", dim))
    return result


def _loop_vars(context: _Context) -> set:
    return {var for var, _, _ in context.loops}


def _domains(context: _Context):
    """{loop var: IntSet} narrowed by the conditions, and the conditions that involve
    no loop variable; None when a condition on loop variables has another form."""
    loop_vars = _loop_vars(context)
    bounds = {var: [lo, E.binary(E.Sub, E.binary(E.Add, lo, extent), 1)]
              for var, lo, extent in context.loops}
    scalar_conditions = []
    for cond in context.conditions:
        cls, var, bound = type(cond), cond.a, cond.b
        if not (isinstance(var, E.Var) and var in bounds):
            cls, var, bound = _FLIPPED[cls], cond.b, cond.a
        if isinstance(var, E.Var) and var in bounds and not _uses(bound, loop_vars):
            _narrow(bounds[var], cls, bound)
        elif _uses(cond, loop_vars):
            return None
        else:
            scalar_conditions.append(cond)
    return {v: IntSet.interval(lo, hi) for v, (lo, hi) in bounds.items()}, scalar_conditions


def _narrow(bound: list, cls, limit) -> None:
    one = E.const(1, limit.dtype)
    if cls is E.LT:
        bound[1] = E.binary(E.Min, bound[1], E.binary(E.Sub, limit, one))
    elif cls is E.LE:
        bound[1] = E.binary(E.Min, bound[1], limit)
    elif cls is E.GT:
        bound[0] = E.binary(E.Max, bound[0], E.binary(E.Add, limit, one))
    else:
        bound[0] = E.binary(E.Max, bound[0], limit)


def _uses(expr, variables) -> bool:
    return uses_var(expr, lambda v: v in variables)


def _relax(expr, doms: dict, analyzer):
    """(low, high) of ``expr`` over ``doms``, free of the relaxed variables (a loop bound
    may name an outer loop's variable: relax again until none is left)."""
    low = high = expr
    for _ in range(len(doms) + 1):
        if not _uses(low, doms) and not _uses(high, doms):
            return low, high
        low = eval_set(low, doms, analyzer).min_value
        high = eval_set(high, doms, analyzer).max_value
        if low is None or high is None:
            return None
    return None


def _free_vars(*exprs) -> list:
    found = []

    def visit(node):
        if isinstance(node, E.Var) and node not in found:
            found.append(node)
    for expr in exprs:
        post_order_visit(expr, visit)
    return found


def _reads_memory(expr) -> bool:
    found = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, (E.BufferLoad, E.Call))
                     else None)
    return bool(found)


def formula(expr, names: dict):
    """``expr`` as an access-check formula over ``names`` ({Var: name}); None when it
    uses anything else (a loop variable, a load, a truncating division, ...)."""
    if isinstance(expr, E.IntImm):
        return int(expr.value)
    if isinstance(expr, E.Var):
        return names.get(expr)
    if isinstance(expr, E.Cast):
        widening = expr.dtype.is_integer and expr.dtype.bits >= expr.value.dtype.bits
        return formula(expr.value, names) if widening else None
    op = _FORMULA_OPS.get(type(expr))
    if op is None:
        return None
    a, b = formula(expr.a, names), formula(expr.b, names)
    return None if a is None or b is None else (op, a, b)


def _positive_when(cond, names: dict):
    """A formula that is positive exactly when the comparison ``cond`` holds."""
    cls, a, b = type(cond), cond.a, cond.b
    if cls in (E.GT, E.GE):
        cls, a, b = _FLIPPED[cls], b, a
    gap = formula(E.binary(E.Sub, b, a), names)
    if gap is None or cls is E.LT:
        return gap
    return ("+", gap, 1)


def _nonempty(context: _Context, scalar_conditions, names: dict):
    """Formulas that are all positive when the access runs; None if a condition has none."""
    loop_vars = _loop_vars(context)
    result = []
    for _, _, extent in context.loops:
        if not isinstance(extent, E.IntImm) and not _uses(extent, loop_vars):
            result.append(formula(extent, names))
    result.extend(_positive_when(cond, names) for cond in scalar_conditions)
    return None if any(f is None for f in result) else tuple(result)


class _Uncast(StmtExprMutator):
    """Drops integer widening casts, which the int64 flat index puts around every
    int32 scalar and which hide ``n - 1 < n`` from the simplifier."""

    def visit_Cast(self, cast):
        value = self.visit(cast.value)
        if cast.dtype.is_integer and value.dtype.is_integer and \
                cast.dtype.bits >= value.dtype.bits:
            return value
        return E.cast(cast.dtype, value)


def _provably_inside(low, high, shape, analyzer: Analyzer) -> bool:
    uncast = _Uncast()
    low, high = uncast.visit(low), uncast.visit(high)
    extent = E.const(1, high.dtype)
    for dim in shape:
        extent = E.binary(E.Mul, extent, uncast.visit(dim))
    return analyzer.can_prove(E.binary(E.GE, low, E.const(0, low.dtype))) and \
        analyzer.can_prove(E.binary(E.LT, high, extent))


def _check_for(access: _Access, names: dict, analyzer: Analyzer):
    """The AccessCheck of one access, or None when its range is provably in bounds, does
    not depend on scalar arguments, or cannot be bounded."""
    if access.context.opaque or not _depends_on(access, names):
        return None
    lanes = _Lanes()
    flat = lanes.visit(_flat_index(access))
    found = _domains(access.context)
    if found is None or _reads_memory(flat):
        return None
    doms, scalar_conditions = found
    doms.update(lanes.lane_doms)
    relaxed = _relax(flat, doms, analyzer)
    if relaxed is None:
        return None
    low, high = relaxed
    uses = _free_vars(low, high)
    if not uses or any(v not in names for v in uses):
        return None
    if _provably_inside(low, high, access.param.shape, analyzer):
        return None
    low_f, high_f = formula(low, names), formula(high, names)
    nonempty = _nonempty(access.context, scalar_conditions, names)
    if low_f is None or high_f is None or nonempty is None:
        return None
    return AccessCheck(access.param.name, access.kind, low_f, high_f,
                       tuple(name for var, name in names.items() if var in uses), nonempty)


def _depends_on(access: _Access, names: dict) -> bool:
    """Whether a scalar or a dim appears in the index, a loop bound or a condition
    around it (most accesses of most kernels: no, and then nothing needs computing)."""
    context = access.context
    parts = [_flat_index(access), context.conditions]
    parts.extend((lo, extent) for _, lo, extent in context.loops)
    return _uses(parts, names)


def scalar_access_checks(func, names: dict) -> tuple:
    """The AccessChecks of lowered ``func``; ``names`` maps its scalar parameters and
    symbolic dims to the names the runtime knows them by."""
    if not names:
        return ()
    params = {buffer.data: buffer for buffer in func.buffer_map.values()}
    accesses = []
    _collect(func.body, _Context(), params, accesses)
    analyzer = Analyzer()
    checks = (_check_for(access, names, analyzer) for access in accesses)
    unique = {}  # a range both read and written is reported as written
    for check in checks:
        key = None if check is None else (check.buffer, check.low, check.high, check.nonempty)
        if key is not None and (key not in unique or check.kind == "writes"):
            unique[key] = check
    return tuple(sorted(unique.values(), key=lambda c: c.kind != "writes"))
