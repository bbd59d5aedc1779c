"""Integer expressions as linear sums ``c1*t1 + c2*t2 + ... + c0``.

The simplifier reasons about ``+``, ``-`` and ``* constant`` by turning an expression
into a :class:`LinearSum`: a constant plus coefficients of *atoms* (anything that is
not itself a sum: variables, ``x // 4``, ``min(a, b)``, loads, ...). Like terms
collect, so ``(i * 4 + j) - i * 4`` becomes ``j`` with no rule written for it.

Atoms are matched structurally through :func:`expr_key`, a hashable tuple in which
variables and buffers appear by identity (``Var("i")`` twice gives two keys).

Printing goes back through :func:`sum_to_expr`, which orders terms by decreasing
absolute coefficient, positive first, and otherwise keeps the order in which terms
first appeared: ``j + i * 4`` prints as ``i * 4 + j`` and ``i + j`` stays ``i + j``.
"""
from __future__ import annotations

from ..tir import expr as E


class LinearSum:
    """``const + sum(coeff * atom)``; ``terms`` maps an atom key to ``[atom, coeff]``."""

    __slots__ = ("dtype", "const", "terms")

    def __init__(self, dtype, const: int = 0, terms: dict | None = None):
        self.dtype = dtype
        self.const = const
        self.terms = terms if terms is not None else {}

    @staticmethod
    def atom(key, expr: E.PrimExpr) -> "LinearSum":
        return LinearSum(expr.dtype, 0, {key: [expr, 1]})

    def copy(self) -> "LinearSum":
        return LinearSum(self.dtype, self.const, {k: [a, c] for k, (a, c) in self.terms.items()})

    def add_term(self, key, atom, coeff: int) -> None:
        if coeff == 0:
            return
        entry = self.terms.get(key)
        if entry is None:
            self.terms[key] = [atom, coeff]
        else:
            entry[1] += coeff
            if entry[1] == 0:
                del self.terms[key]

    def add(self, other: "LinearSum", scale: int = 1) -> "LinearSum":
        """In place: ``self += scale * other``; returns self."""
        self.const += scale * other.const
        for key, (atom, coeff) in other.terms.items():
            self.add_term(key, atom, scale * coeff)
        return self

    def scaled(self, factor: int) -> "LinearSum":
        if factor == 0:
            return LinearSum(self.dtype)
        return LinearSum(self.dtype, self.const * factor,
                         {k: [a, c * factor] for k, (a, c) in self.terms.items()})

    def is_const(self) -> bool:
        return not self.terms

    def linear_key(self) -> frozenset:
        """Identity of the non-constant part, used to look up known facts."""
        return frozenset((k, c) for k, (_, c) in self.terms.items())


def is_linear_dtype(dtype) -> bool:
    """Scalar signed integers are reassociated; floats, bools and vectors are not."""
    return dtype.code == "int" and dtype.lanes == 1


def to_sum(expr: E.PrimExpr, key_memo: dict, sum_memo: dict) -> LinearSum:
    """The linear form of an integer expression whose parts are already simplified.

    ``(i + j) * 4 - j`` gives ``{i: 4, j: 3}``; a product of two non-constants is an atom.
    The result is shared through ``sum_memo``: copy it before changing it.
    """
    found = sum_memo.get(id(expr))
    if found is not None:
        return found[0]
    cls = type(expr)
    if cls is E.IntImm:
        result = LinearSum(expr.dtype, expr.value)
    elif cls is E.Add or cls is E.Sub:
        result = to_sum(expr.a, key_memo, sum_memo).copy()
        result.add(to_sum(expr.b, key_memo, sum_memo), 1 if cls is E.Add else -1)
    elif cls is E.Mul and type(expr.b) is E.IntImm:
        result = to_sum(expr.a, key_memo, sum_memo).scaled(expr.b.value)
    elif cls is E.Mul and type(expr.a) is E.IntImm:
        result = to_sum(expr.b, key_memo, sum_memo).scaled(expr.a.value)
    else:
        result = LinearSum.atom(expr_key(expr, key_memo), expr)
    sum_memo[id(expr)] = (result, expr)
    return result


# -- keys ------------------------------------------------------------------------------

def expr_key(expr, memo: dict | None = None):
    """A hashable structural key: equal keys mean the same computation.

    Binders (Var, Buffer) enter by identity; immediates by dtype and value.
    """
    if memo is not None:
        found = memo.get(id(expr))
        if found is not None:
            return found[0]
    key = _compute_key(expr, memo)
    if memo is not None:
        memo[id(expr)] = (key, expr)      # keep expr alive: ids must not be reused
    return key


def _compute_key(expr, memo):
    if isinstance(expr, E.IntImm):
        return ("imm", expr.dtype, expr.value)
    if isinstance(expr, E.Var):
        return ("var", id(expr))
    if isinstance(expr, E.FloatImm):
        return ("fimm", expr.dtype, expr.value)
    if isinstance(expr, E.BufferLoad):
        return ("load", id(expr.buffer), expr.dtype) + tuple(expr_key(i, memo) for i in expr.indices)
    parts = [type(expr).__name__, expr.dtype]
    for field in expr._fields:
        value = getattr(expr, field.name)
        if isinstance(value, (tuple, list)):
            parts.append(tuple(expr_key(v, memo) if isinstance(v, E.Node) else v for v in value))
        elif isinstance(value, E.Node):
            parts.append(expr_key(value, memo))
        elif field.name != "dtype":
            parts.append(value)
    return tuple(parts)


def imm_key(value: int, dtype) -> tuple:
    return ("imm", dtype, value)


def binary_key(cls, dtype, a_key, b_key) -> tuple:
    """The key :func:`expr_key` gives ``cls(a, b)`` (without building the node)."""
    return (cls.__name__, dtype, a_key, b_key)


# -- back to expressions -----------------------------------------------------------------

def make(cls, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
    """``cls(a, b)`` for operands of the same dtype (checked), without folding."""
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    return cls(a, b, a.dtype)


def _term_order(item):
    _, (_, coeff) = item
    return (coeff < 0, -abs(coeff))


def sum_to_expr(s: LinearSum) -> E.PrimExpr:
    """Rebuild an expression: ``i * 4 + j - 1`` (terms by decreasing |coefficient|)."""
    dtype = s.dtype
    items = sorted(s.terms.items(), key=_term_order)          # stable: ties keep order
    result = None
    if items and items[0][1][1] < 0 and s.const > 0:
        result = E.IntImm(dtype, s.const)
    for _, (atom, coeff) in items:
        if result is None:
            result = atom if coeff == 1 else make(E.Mul, atom, E.IntImm(dtype, coeff))
            continue
        magnitude = abs(coeff)
        term = atom if magnitude == 1 else make(E.Mul, atom, E.IntImm(dtype, magnitude))
        result = make(E.Add if coeff > 0 else E.Sub, result, term)
    if result is None:
        return E.IntImm(dtype, s.const)
    if items[0][1][1] < 0 and s.const > 0:
        return result
    if s.const > 0:
        return make(E.Add, result, E.IntImm(dtype, s.const))
    if s.const < 0:
        return make(E.Sub, result, E.IntImm(dtype, -s.const))
    return result


def expr_size(expr, memo: dict | None = None) -> int:
    """Number of expression nodes below ``expr`` (loads count their indices)."""
    if memo is not None:
        found = memo.get(id(expr))
        if found is not None:
            return found[0]
    if isinstance(expr, (E.IntImm, E.FloatImm, E.Var, E.StringImm)):
        size = 1
    else:
        size = 1
        for field in expr._fields:
            value = getattr(expr, field.name)
            if isinstance(value, E.PrimExpr):
                size += expr_size(value, memo)
            elif isinstance(value, tuple):
                size += sum(expr_size(v, memo) for v in value if isinstance(v, E.PrimExpr))
    if memo is not None:
        memo[id(expr)] = (size, expr)       # keep expr alive: ids must not be reused
    return size
