"""VectorizeLoop: turn ``T.vectorized`` loops into vector expressions.

A vectorized loop ``for v in T.vectorized(n)`` with a constant extent disappears; its
loop variable becomes the vector ``T.Ramp(min, 1, n)`` and every expression that
depends on it becomes an ``n``-lane vector::

    for v in T.vectorized(8):                 C[T.Ramp(i * 8, 1, 8)] = (
        C[i * 8 + v] = A[i * 8 + v] + 1.0          A[T.Ramp(i * 8, 1, 8)] + T.Broadcast(1.0, 8))

Rules (an expression is *vector* when it depends on the loop variable):

* ``Ramp`` arithmetic stays a ``Ramp``: ``ramp + s``, ``ramp - s``, ``ramp * s``,
  ``ramp + ramp``; ``ramp // c`` and ``ramp % c`` when the lanes provably stay inside
  one block of ``c`` (a ``Broadcast`` and a ``Ramp``). Other binary operations
  broadcast their scalar side (``T.Broadcast(x, n)``) and compute lane-wise.
* ``Select``, ``Cast``, ``Not``, comparisons, ``Min``/``Max`` and the math intrinsics
  (``tir.exp``, ``tir.sqrt``, ...) work lane-wise. ``tir.if_then_else`` with a scalar
  condition becomes a vector ``tir.if_then_else``; with a vector condition it becomes a
  ``Select`` when neither branch loads memory.
* A load guarded by a lane-dependent ``tir.if_then_else`` (a padded window's border
  test) versions the loop: the vector code, without the guard, runs when the guard
  holds on every lane, the serial loop otherwise (a ``Select`` would load every lane,
  the ones the guard keeps out of bounds too). The guard's lane-dependent conjuncts must
  be comparisons (not ``!=``) of expressions affine in the lanes, with no variable
  bound inside the loop: each then holds on an interval of lanes, so holding on the
  first and on the last lane means holding on all. Lane-independent conjuncts stay a
  scalar ``tir.if_then_else`` condition::

      for v in T.vectorized(8):
          C[j * 8 + v] = T.if_then_else(16 * j + 2 * v >= 1, A[16 * j + 2 * v - 1], -inf)
      # becomes
      if 16 * j >= 1 and 16 * j + 14 >= 1:
          C[T.Ramp(j * 8, 1, 8)] = A[T.Ramp(16 * j - 1, 2, 8)]
      else:
          for v in range(8):
              C[j * 8 + v] = T.if_then_else(16 * j + 2 * v >= 1, A[16 * j + 2 * v - 1], -inf)
* With ``masked_loads`` (the CPU pipeline), that border version is vector code too when
  every guarded load is one vector load of constant stride 1 to
  ``MASKED_LOAD_MAX_STRIDE`` and its guard loads nothing: the
  guard's lane-dependent conjuncts become the load's mask,
  ``T.if_then_else(mask, A[ramp], -inf)`` with a ``boolxN`` mask, which the LLVM code
  generator emits as ``llvm.masked.load`` (masked lanes read no memory). A 3x3/1 max
  pool of 1x480x14x14, whose every 14-lane row has a border lane, went from 100 to 66
  us on a Zen 4. Other guarded loads keep the serial border.
* An ``if`` without ``else`` whose condition varies across lanes (the predicate of a
  split's tail, ``if i * 8 + v < 113``) versions the loop the same way: the vector
  code runs the tiles where it holds on every lane, the serial loop the tail.
* A load whose last index is a ``Ramp`` is a vector load (dtype ``float32xN``); a load
  whose indices do not vary is a scalar load, broadcast. A store needs a ``Ramp`` as
  its last index; the stored value is broadcast when it is scalar.
* ``Let``/``LetStmt`` whose value becomes a vector get a vector variable (a ``Ramp``
  or ``Broadcast`` value is substituted instead, so indices stay affine).
* An inner loop whose bounds do not depend on the lanes is kept, with its body
  vectorized: the lanes run side by side through the inner iterations.

When a loop cannot be vectorized it stays a loop of kind ``SERIAL`` (correct before
fast): a symbolic extent; a store whose last index does not vary across lanes (every
lane writes one element, a reduction across lanes); an ``if`` with an ``else``, or an
``assert``, whose condition varies across lanes; a load or an ``if`` guarded by a
lane-dependent condition that is not a conjunction of affine comparisons; an index that
is not affine in the lanes (a gather);
``call_extern`` or side effects that depend on the lanes; an ``Allocate`` or a
parallel loop inside; a body that already holds vectors. Vectorizing assumes lanes are
independent (no dependence carried across iterations of the loop), which
``sch.vectorize`` checks when it marks the loop.
"""
from __future__ import annotations

from ...ir.transform import prim_func_pass
from ..expr import (CMP_OPS, NE, Add, And, Broadcast, BufferLoad, Call, Cast, FloorDiv,
                    FloorMod, IntImm, Let, Mul, Not, Or, PrimExpr, Ramp, Select, Sub, Var,
                    binary, cast, const)
from ..functor import StmtExprMutator, post_order_visit, substitute
from ..op import MATH_INTRINSICS
from ..stmt import BufferStore, Evaluate, For, ForKind, IfThenElse, LetStmt
from ._common import _analyzer, const_int, simplify_expr

# Bit-level calls act lane by lane too (an exp built from its exponent bits vectorizes).
LANEWISE_CALLS = frozenset(f"tir.{name}" for name in MATH_INTRINSICS + (
    "reinterpret", "shift_left", "shift_right", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not"))


class NotVectorizable(Exception):
    """Internal signal: this loop stays serial (the message says why)."""


def lanes_of(expr: PrimExpr) -> int:
    return expr.dtype.lanes


def broadcast(expr: PrimExpr, lanes: int) -> PrimExpr:
    return expr if lanes_of(expr) == lanes else Broadcast(expr, lanes)


def vector_cast(element_dtype, expr: PrimExpr) -> PrimExpr:
    """Cast lane-wise, keeping ``Ramp``/``Broadcast`` shapes."""
    lanes = lanes_of(expr)
    if lanes == 1:
        return cast(element_dtype, expr)
    if expr.dtype.element == element_dtype:
        return expr
    if isinstance(expr, Broadcast):
        return Broadcast(cast(element_dtype, expr.value), lanes)
    if isinstance(expr, Ramp) and element_dtype.is_integer:
        return Ramp(cast(element_dtype, expr.base), cast(element_dtype, expr.stride), lanes)
    return Cast(element_dtype.with_lanes(lanes), expr)


def _common_element(a: PrimExpr, b: PrimExpr):
    ea, eb = a.dtype.element, b.dtype.element
    if ea == eb:
        return ea
    # As in C's usual conversions: a float side wins, then the wider; bool yields to the other.
    if ea.is_float != eb.is_float:
        return ea if ea.is_float else eb
    if ea.is_bool != eb.is_bool:
        return eb if ea.is_bool else ea
    return ea if ea.bits >= eb.bits else eb


def _uniform_value(expr: PrimExpr):
    """The value every lane holds (scalar or Broadcast), else ``None``."""
    if lanes_of(expr) == 1:
        return expr
    return expr.value if isinstance(expr, Broadcast) else None


def _ramp_parts(expr: PrimExpr):
    """``(base, stride)`` viewing a scalar or Broadcast as a Ramp of stride 0."""
    if isinstance(expr, Ramp):
        return expr.base, expr.stride
    value = _uniform_value(expr)
    return None if value is None else (value, const(0, value.dtype))


def _known_remainder(expr: PrimExpr, divisor: int):
    """``expr % divisor`` when it does not depend on the variables, else ``None``."""
    if isinstance(expr, IntImm):
        return expr.value % divisor
    if isinstance(expr, Mul):
        for factor in (expr.a, expr.b):
            if const_int(factor) is not None and const_int(factor) % divisor == 0:
                return 0
    if isinstance(expr, Add):
        left, right = _known_remainder(expr.a, divisor), _known_remainder(expr.b, divisor)
        if left is not None and right is not None:
            return (left + right) % divisor
    return None


def _ramp_stays_in_block(ramp: Ramp, divisor: int) -> bool:
    """True when ``base % d + (lanes - 1) * stride < d``: all lanes share ``base // d``."""
    stride = const_int(ramp.stride)
    # Only non-negative constant strides are proved; anything else keeps the lane-wise division.
    if stride is None or stride < 0 or divisor <= 0:
        return False
    span = (ramp.lanes - 1) * stride
    remainder = _known_remainder(ramp.base, divisor)
    # A base such as i * 8 + 3 has a remainder known without the analyzer.
    if remainder is not None:
        return remainder + span < divisor
    analyzer = _analyzer()
    if analyzer is None or not hasattr(analyzer, "can_prove"):
        return False
    return bool(analyzer.can_prove(binary(FloorMod, ramp.base, divisor) + span < divisor))


def _ramp_div_mod(cls, a: PrimExpr, b: PrimExpr, lanes: int):
    divisor = const_int(_uniform_value(b)) if _uniform_value(b) is not None else None
    if not isinstance(a, Ramp) or divisor is None or not _ramp_stays_in_block(a, divisor):
        return None
    if cls is FloorDiv:
        return Broadcast(binary(FloorDiv, a.base, divisor), lanes)
    return Ramp(binary(FloorMod, a.base, divisor), a.stride, lanes)


def _affine(cls, a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a + b`` / ``a - b`` without the ``+ 0`` a loop starting at zero would leave."""
    if const_int(b) == 0:
        return a
    if cls is Add and const_int(a) == 0:
        return b
    return binary(cls, a, b)


def vector_binary(cls, a: PrimExpr, b: PrimExpr, lanes: int) -> PrimExpr:
    """``cls(a, b)`` where either side may be a vector of ``lanes`` lanes."""
    if lanes_of(a) == 1 and lanes_of(b) == 1:
        return binary(cls, a, b)
    # Logical operators keep their bool operands; a cast would make them numeric.
    if cls not in (And, Or):
        element = _common_element(a, b)
        a, b = vector_cast(element, a), vector_cast(element, b)
    if cls in (Add, Sub) and (isinstance(a, Ramp) or isinstance(b, Ramp)):
        parts_a, parts_b = _ramp_parts(a), _ramp_parts(b)
        if parts_a is not None and parts_b is not None:
            return Ramp(_affine(cls, parts_a[0], parts_b[0]),
                        _affine(cls, parts_a[1], parts_b[1]), lanes)
    if cls is Mul:
        ramp, other = (a, b) if isinstance(a, Ramp) else (b, a)
        scale = _uniform_value(other)
        if isinstance(ramp, Ramp) and scale is not None:
            return Ramp(ramp.base * scale, ramp.stride * scale, lanes)
    if cls in (FloorDiv, FloorMod):
        result = _ramp_div_mod(cls, a, b, lanes)
        if result is not None:
            return result
    value_a, value_b = _uniform_value(a), _uniform_value(b)
    # Both sides uniform: compute once and broadcast, not once per lane.
    if value_a is not None and value_b is not None:
        return Broadcast(binary(cls, value_a, value_b), lanes)
    return binary(cls, broadcast(a, lanes), broadcast(b, lanes))


def _loads_memory(expr) -> bool:
    found = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, BufferLoad) else None)
    return bool(found)


# The constant strides of a load the LLVM code generator masks lane by lane (contiguous
# loads and its shuffled loads of small strides).
MASKED_LOAD_MAX_STRIDE = 4


def _maskable_load(expr) -> bool:
    """A vector load whose last index is a Ramp of constant stride 1 to
    ``MASKED_LOAD_MAX_STRIDE``, the other indices lane-independent."""
    if not isinstance(expr, BufferLoad) or not isinstance(expr.indices[-1], Ramp):
        return False
    stride = const_int(expr.indices[-1].stride)
    return stride is not None and 1 <= stride <= MASKED_LOAD_MAX_STRIDE and \
        all(lanes_of(i) == 1 for i in expr.indices[:-1])


def _conjuncts(cond: PrimExpr) -> list:
    return _conjuncts(cond.a) + _conjuncts(cond.b) if isinstance(cond, And) else [cond]


def _all_of(conds) -> PrimExpr:
    result = None
    for cond in conds:
        result = cond if result is None else binary(And, result, cond)
    return result


def _free_vars(expr) -> set:
    found = set()
    post_order_visit(expr, lambda n: found.add(n) if isinstance(n, Var) else None)
    return found


def _bound_vars(stmt) -> set:
    """Variables that a loop body binds itself (inner loops, lets)."""
    found = set()
    post_order_visit(stmt, lambda n: found.add(n.loop_var if isinstance(n, For) else n.var)
                     if isinstance(n, (For, LetStmt, Let)) else None)
    return found


class _ExprVectorizer(StmtExprMutator):
    """Rewrites expressions of a loop body with the loop variable as a Ramp.

    ``guards`` collects the lane-dependent conjuncts of the ``if_then_else`` conditions
    that guard loads (dropped from the vector code, see the module docstring);
    ``body_vars`` are the variables the loop body binds, which a guard must not use.
    """

    def __init__(self, loop_var: Var, loop_min: PrimExpr, lanes: int, body_vars=frozenset(),
                 masked: bool = False):
        self.lanes = lanes
        self.var_map = {loop_var: Ramp(loop_min, const(1, loop_var.dtype), lanes)}
        self.body_vars = body_vars
        self.masked = masked
        self.guards: list = []

    def visit_Var(self, var):
        return self.var_map.get(var, var)

    def visit_BinaryOp(self, op):
        a, b = self.visit(op.a), self.visit(op.b)
        if a is op.a and b is op.b:
            return op
        return vector_binary(type(op), a, b, self.lanes)

    def visit_Not(self, op):
        a = self.visit(op.a)
        return op if a is op.a else Not(a, a.dtype.element.with_lanes(lanes_of(a)))

    def visit_Select(self, op):
        parts = [self.visit(x) for x in (op.condition, op.true_value, op.false_value)]
        if all(new is old for new, old in zip(parts, (op.condition, op.true_value,
                                                      op.false_value))):
            return op
        cond, true_value, false_value = (broadcast(p, self.lanes) for p in parts)
        return Select(cond, true_value, false_value, true_value.dtype)

    def visit_Cast(self, op):
        value = self.visit(op.value)
        return op if value is op.value else vector_cast(op.dtype.element, value)

    def visit_Call(self, op):
        args = tuple(self.visit(a) for a in op.args)
        if all(new is old for new, old in zip(args, op.args)):
            return op
        dtype = op.dtype.with_lanes(self.lanes)
        if op.op in LANEWISE_CALLS:
            return Call(dtype, op.op, tuple(broadcast(a, self.lanes) for a in args))
        if op.op == "tir.if_then_else":
            cond, true_value, false_value = args
            if lanes_of(cond) == 1:
                return Call(dtype, op.op, (cond, broadcast(true_value, self.lanes),
                                           broadcast(false_value, self.lanes)))
            # A Select evaluates both sides: a load the condition guards could read out of bounds.
            if _loads_memory(op.args[1]) or _loads_memory(op.args[2]):
                return self._guarded_load(op, true_value, false_value, dtype)
            return Select(cond, broadcast(true_value, self.lanes),
                          broadcast(false_value, self.lanes), dtype)
        raise NotVectorizable(f"call {op.op} depends on the vectorized loop variable")

    def _split_guard(self, condition, what: str) -> list:
        """The vectorized conjuncts of ``condition`` that are the same on every lane; the
        lane-dependent ones, each a comparison affine in the lanes, go to ``guards``."""
        uniform = []
        for conjunct in _conjuncts(condition):
            vector = self.visit(conjunct)
            if lanes_of(vector) == 1:
                uniform.append(vector)
            elif self._holds_on_an_interval(conjunct, vector):
                self.guards.append(conjunct)
            else:
                raise NotVectorizable(f"{what} a condition that is not a comparison affine "
                                      "in the lanes")
        return uniform

    def _guarded_load(self, op, true_value, false_value, dtype):
        """The vector code for when the guard's lane-dependent conjuncts hold on every
        lane: those go to ``guards``, the lane-independent ones stay a scalar condition.
        With ``masked``, the code for any tile: they become the mask of the load."""
        if self.masked:
            return self._masked_load(op, true_value, false_value, dtype)
        uniform = self._split_guard(op.args[0], "if_then_else guards a load with")
        true_value = broadcast(true_value, self.lanes)
        if not uniform:
            return true_value
        return Call(dtype, op.op, (_all_of(uniform), true_value,
                                   broadcast(false_value, self.lanes)))

    def _masked_load(self, op, true_value, false_value, dtype):
        """``T.if_then_else(mask, x[ramp], other)`` with a vector ``mask``: lanes outside
        it load nothing (a masked load in codegen). Only for one load of a small constant
        stride whose guard loads nothing; the lane-independent conjuncts stay a scalar
        condition."""
        if not _maskable_load(true_value) or _loads_memory(op.args[0]) or \
                _loads_memory(op.args[2]):
            raise NotVectorizable("a guarded load that is not one vector load of a small "
                                  "constant stride")
        uniform, lanewise = [], []
        for conjunct in _conjuncts(op.args[0]):
            vector = self.visit(conjunct)
            (uniform if lanes_of(vector) == 1 else lanewise).append(vector)
        other = broadcast(false_value, self.lanes)
        value = Call(dtype, op.op, (_all_of(lanewise), true_value, other))
        return Call(dtype, op.op, (_all_of(uniform), value, other)) if uniform else value

    def _holds_on_an_interval(self, conjunct, vector) -> bool:
        """True when ``conjunct`` holds on an interval of lanes: a comparison (not ``!=``)
        of two affine vectors, free of the body's own variables and of loads."""
        if not isinstance(vector, CMP_OPS) or isinstance(vector, NE):
            return False
        if _loads_memory(conjunct) or _free_vars(conjunct) & self.body_vars:
            return False
        return all(lanes_of(side) == 1 or isinstance(side, (Ramp, Broadcast))
                   for side in (vector.a, vector.b))

    def visit_Let(self, op):
        value = self.visit(op.value)
        if lanes_of(value) == 1:
            body = self.visit(op.body)
            return op if value is op.value and body is op.body else Let(op.var, value, body)
        if isinstance(value, (Ramp, Broadcast)):
            self.var_map[op.var] = value
            return self.visit(op.body)
        var = self.var_map[op.var] = Var(op.var.name, value.dtype)
        return Let(var, value, self.visit(op.body))

    def visit_Ramp(self, op):
        raise NotVectorizable("the loop body already holds vector expressions")

    visit_Broadcast = visit_Ramp

    def access_indices(self, indices, what: str):
        """Scalar indices plus whether the last one is a Ramp (a contiguous vector access)."""
        scalar = []
        for k, index in enumerate(indices):
            uniform = _uniform_value(index)
            if uniform is not None:
                scalar.append(uniform)
            # Only the last index may vary: a vector access is one contiguous run of memory.
            elif isinstance(index, Ramp) and k == len(indices) - 1:
                return tuple(scalar) + (index,), True
            else:
                raise NotVectorizable(f"{what}: index {k} is not affine in the lanes or is "
                                      "not the last index")
        return tuple(scalar), False

    def visit_BufferLoad(self, load):
        indices = self.visit(load.indices)
        if indices is load.indices:
            return load
        indices, is_vector = self.access_indices(indices, f"load of {load.buffer.name}")
        if not is_vector:
            return Broadcast(BufferLoad(load.buffer, indices, load.dtype), self.lanes)
        return BufferLoad(load.buffer, indices, load.buffer.dtype.with_lanes(self.lanes))


class _BodyVectorizer(_ExprVectorizer):
    """Statement rules on top of the expression rules (see the module docstring)."""

    def visit_BufferStore(self, store):
        indices, value = self.visit(store.indices), self.visit(store.value)
        indices, is_vector = self.access_indices(indices, f"store to {store.buffer.name}")
        if not is_vector:
            raise NotVectorizable(f"store to {store.buffer.name}: every lane writes the same "
                                  "element (a reduction across lanes)")
        value = vector_cast(store.buffer.dtype.element, broadcast(value, self.lanes))
        return BufferStore(store.buffer, value, indices)

    def visit_Evaluate(self, stmt):
        # Evaluate(0) is a no-op (an emptied loop): safe whatever the lanes.
        if isinstance(stmt.value, IntImm):
            return stmt
        raise NotVectorizable("a side effect (Evaluate) would run once instead of per lane")

    def visit_IfThenElse(self, stmt):
        if stmt.else_case is None and lanes_of(self.visit(stmt.condition)) > 1:
            return self._predicated(stmt)
        condition = self._uniform(stmt.condition, "if condition")
        then_case = self.visit(stmt.then_case)
        else_case = self.visit(stmt.else_case) if stmt.else_case is not None else None
        return IfThenElse(condition, then_case, else_case)

    def _predicated(self, stmt):
        """A lane-dependent ``if`` without ``else`` (a split's tail predicate) is a guard
        like a load's: its lane-dependent conjuncts go to ``guards``, the others stay a
        scalar condition around the vector code."""
        uniform = self._split_guard(stmt.condition, "an if varies across lanes with")
        then_case = self.visit(stmt.then_case)
        return IfThenElse(_all_of(uniform), then_case, None) if uniform else then_case

    def visit_AssertStmt(self, stmt):
        condition = self._uniform(stmt.condition, "assert condition")
        return stmt.replace(condition=condition, body=self.visit(stmt.body))

    def visit_LetStmt(self, stmt):
        value = self.visit(stmt.value)
        if lanes_of(value) == 1:
            return LetStmt(stmt.var, value, self.visit(stmt.body))
        if isinstance(value, (Ramp, Broadcast)):
            self.var_map[stmt.var] = value
            return self.visit(stmt.body)
        var = self.var_map[stmt.var] = Var(stmt.var.name, value.dtype)
        return LetStmt(var, value, self.visit(stmt.body))

    def visit_For(self, loop):
        if loop.kind not in (ForKind.SERIAL, ForKind.UNROLLED):
            raise NotVectorizable(f"a {loop.kind.value} loop inside a vectorized loop")
        loop_min = self._uniform(loop.min, "inner loop bound")
        extent = self._uniform(loop.extent, "inner loop bound")
        return loop.replace(min=loop_min, extent=extent, body=self.visit(loop.body))

    def visit_Allocate(self, stmt):
        raise NotVectorizable("an allocation inside a vectorized loop")

    def visit_DeclBuffer(self, stmt):
        raise NotVectorizable("a buffer declaration inside a vectorized loop")

    def visit_BlockRealize(self, stmt):
        raise NotVectorizable("blocks inside a vectorized loop (run LowerOpaqueBlock first)")

    def _uniform(self, expr, what):
        new = self.visit(expr)
        if lanes_of(new) != 1:
            raise NotVectorizable(f"{what} varies across lanes")
        return new


def _has_vectors(stmt) -> bool:
    found = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, PrimExpr)
                     and n.dtype.lanes > 1 else None)
    return bool(found)


def vectorize(loop: For, body=None, masked_loads: bool = False):
    """The vector form of a VECTORIZED loop, or the loop as SERIAL when that is impossible.
    ``masked_loads``: the tiles where a guard fails on some lanes run vector code with
    masked loads instead of the serial loop, when every guarded load can be masked."""
    body = loop.body if body is None else body
    lanes = const_int(loop.extent)
    if lanes is not None and lanes <= 1:
        return substitute(body, {loop.loop_var: loop.min}) if lanes == 1 else Evaluate(0)
    serial = loop.replace(kind=ForKind.SERIAL, body=body)
    try:
        if lanes is None or _has_vectors(body):
            raise NotVectorizable("symbolic extent or nested vectors")
        vectorizer = _BodyVectorizer(loop.loop_var, loop.min, lanes, _bound_vars(body))
        vector_body = vectorizer.visit(body)
    except NotVectorizable:
        return serial
    if not vectorizer.guards:
        return vector_body
    border = serial
    if masked_loads:
        try:
            masked = _BodyVectorizer(loop.loop_var, loop.min, lanes, _bound_vars(body),
                                     masked=True)
            border_body = masked.visit(body)
            if not masked.guards:
                border = border_body
        except NotVectorizable:
            pass
    return _versioned(loop, lanes, vectorizer.guards, vector_body, border)


def _versioned(loop: For, lanes: int, guards: list, vector_body, serial):
    """``if <every guard holds on the first and the last lane>: vector_body else serial``
    (a guard holds on an interval of lanes, so on all of them); ``serial`` is the serial
    loop or the masked vector code."""
    ends = (loop.min, simplify_expr(loop.min + (lanes - 1)))
    condition = simplify_expr(_all_of(substitute(guard, {loop.loop_var: end})
                                      for guard in guards for end in ends))
    if isinstance(condition, IntImm):      # known: one version only
        return vector_body if condition.value else serial
    return IfThenElse(condition, vector_body, serial)


# Inner loops are visited first, so a vectorized loop around an already vectorized one
# finds vectors in its body and stays serial.
class _LoopVectorizer(StmtExprMutator):
    def __init__(self, masked_loads: bool = False):
        super().__init__()
        self.masked_loads = masked_loads

    def visit_For(self, loop):
        body = self.visit(loop.body)
        if loop.kind == ForKind.VECTORIZED:
            return vectorize(loop, body, self.masked_loads)
        return loop if body is loop.body else loop.replace(body=body)


def _vectorize_pass(masked_loads: bool):
    @prim_func_pass(opt_level=0, name="tir.VectorizeLoop")
    def vectorize_loop(func, mod, ctx):
        body = _LoopVectorizer(masked_loads).visit(func.body)
        return func if body is func.body else func.with_body(body)
    return vectorize_loop


_vectorize_loop, _vectorize_loop_masked = _vectorize_pass(False), _vectorize_pass(True)


def VectorizeLoop(enable_vectorize: bool = True, masked_loads: bool = False):
    """Pass: rewrite VECTORIZED loops as vector code (serial fallback, see module docs).

    ``enable_vectorize=False`` turns every vectorized loop into a serial one;
    ``masked_loads=True`` (the CPU pipeline) gives border tiles masked vector loads
    instead of the serial loop.
    """
    if enable_vectorize:
        return _vectorize_loop_masked if masked_loads else _vectorize_loop

    @prim_func_pass(opt_level=0, name="tir.VectorizeLoop")
    def devectorize(func, mod, ctx):
        body = _Devectorizer().visit(func.body)
        return func if body is func.body else func.with_body(body)
    return devectorize


class _Devectorizer(StmtExprMutator):
    def visit_For(self, loop):
        body = self.visit(loop.body)
        if loop.kind == ForKind.VECTORIZED:
            return loop.replace(kind=ForKind.SERIAL, body=body)
        return loop if body is loop.body else loop.replace(body=body)
