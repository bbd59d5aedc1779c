"""Reductions: ``te.sum``, ``te.max``, ``te.min`` and user-defined commutative reducers.

A reduction is a :class:`Reduce` expression at the top of a compute body::

    k = te.reduce_axis((0, 6), name="k")
    C = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="C")

``create_prim_func`` turns it into a block with ``T.init()`` (the reducer's identity)
and an update ``C[v_i] = C[v_i] + A[v_i, v_k]`` (the reducer's combiner).
A reducer over tuples (``argmax``: index and value) makes a compute with one output
per tuple element.
"""
from __future__ import annotations

from ..ir.errors import IRError
from ..ir.node import Node, node
from ..tir import op as tir_op
from ..tir.expr import PrimExpr, Range, Var, cast, const, convert
from ..tir.functor import substitute
from ..tir.stmt import IterType, IterVar


# -- axes ----------------------------------------------------------------------------

class _AxisArithmetic:
    """Let an axis stand for its variable in arithmetic: ``ry * 2 + yy``, ``k > 1``."""

    @property
    def dtype(self):
        return self.var.dtype

    def __add__(self, o): return self.var + _var_of(o)
    def __radd__(self, o): return _var_of(o) + self.var
    def __sub__(self, o): return self.var - _var_of(o)
    def __rsub__(self, o): return _var_of(o) - self.var
    def __mul__(self, o): return self.var * _var_of(o)
    def __rmul__(self, o): return _var_of(o) * self.var
    def __floordiv__(self, o): return self.var // _var_of(o)
    def __mod__(self, o): return self.var % _var_of(o)
    def __neg__(self): return -self.var
    def __lt__(self, o): return self.var < _var_of(o)
    def __le__(self, o): return self.var <= _var_of(o)
    def __gt__(self, o): return self.var > _var_of(o)
    def __ge__(self, o): return self.var >= _var_of(o)
    __hash__ = object.__hash__


def _var_of(value):
    return value.var if isinstance(value, IterVar) else value


@node
class TensorAxis(_AxisArithmetic, IterVar):
    """An IterVar of a tensor expression; usable wherever its variable is."""


def make_axis(dom, name: str, iter_type: IterType) -> TensorAxis:
    """An axis over ``dom``: an extent, a ``(lo, hi)`` pair or a ``Range``."""
    if isinstance(dom, Range):
        rng = dom
    elif isinstance(dom, (tuple, list)):
        if len(dom) != 2:
            raise IRError(f"an axis domain is (lo, hi) or a Range, found {dom!r}")
        lo, hi = convert(dom[0]), convert(dom[1])
        lo = lo if lo.dtype == hi.dtype else cast(hi.dtype, lo)
        rng = Range(lo, hi - lo)
    else:
        extent = convert(dom)
        rng = Range(const(0, extent.dtype), extent)
    return TensorAxis(rng, Var(name, rng.extent.dtype), iter_type)


def reduce_axis(dom, name: str = "rv", thread_tag: str = "", span=None) -> TensorAxis:
    """A reduction axis over ``dom`` (``(lo, hi)`` or a ``Range``), e.g.
    ``k = te.reduce_axis((0, 128), name="k")``."""
    return make_axis(dom, name, IterType.COMM_REDUCE)


def thread_axis(dom=None, tag: str = "", name: str = "", span=None) -> TensorAxis:
    """A GPU thread axis for ``s[C].bind``: ``te.thread_axis("threadIdx.x")`` or
    ``te.thread_axis((0, 32), "threadIdx.x")``. Without a domain its extent is a
    variable, set by the loop it is bound to."""
    if isinstance(dom, str):
        tag, dom = dom, None
    if not tag:
        raise IRError("thread_axis: expected a thread tag such as \"threadIdx.x\", found none")
    name = name or tag
    axis = make_axis(Var(name + ".extent", "int32") if dom is None else dom, name,
                     IterType.THREAD_INDEX)
    return axis.replace(thread_tag=tag)


# -- the reduction expression -----------------------------------------------------------

@node
class CommReducer(Node):
    """``result`` combines ``lhs`` (the running value) with ``rhs`` (a new element);
    ``identity_element`` starts the reduction. One entry per output of the reducer."""

    lhs: tuple
    rhs: tuple
    result: tuple
    identity_element: tuple

    def combine(self, running, new) -> tuple:
        vmap = dict(zip(self.lhs, running))
        vmap.update(zip(self.rhs, new))
        return tuple(substitute(r, vmap) for r in self.result)


@node
class Reduce(PrimExpr):
    """Output ``value_index`` of reducing ``source`` over ``axis`` where ``condition``.

    Only valid at the top of a compute body (as in TVM)."""

    combiner: CommReducer
    source: tuple
    axis: tuple
    condition: PrimExpr
    value_index: int
    dtype: object = None

    def __post_init__(self):
        if self.dtype is None:
            object.__setattr__(self, "dtype", self.source[self.value_index].dtype)


def _as_axis_list(axis) -> list:
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    for ax in axes:
        if not isinstance(ax, IterVar) or ax.iter_type != IterType.COMM_REDUCE:
            raise IRError(f"a reduction runs over reduce axes (te.reduce_axis), found {ax!r}")
    return axes


def comm_reducer(fcombine, fidentity, name: str = "reduce"):
    """Make a reducer from a combiner and an identity, like ``tvm.te.comm_reducer``.

    ``fcombine(x, y)`` combines running and new values (tuples for multi-value
    reducers); ``fidentity(*dtypes)`` gives the starting value(s). The result is
    called as ``reducer(expr, axis, where=None)``; with two expressions instead of an
    axis it combines them elementwise (``te.max(a, b)``).

    >>> mysum = te.comm_reducer(lambda x, y: x + y, lambda t: tvm.tir.const(0, t))
    """
    def reducer(expr, axis=None, where=None, init=None, span=None):
        if axis is not None and not isinstance(axis, (IterVar, list, tuple)):
            return _combine_pair(fcombine, expr, axis)
        if axis is None:
            raise IRError(f"{name}: expected reduce axes (te.reduce_axis), found none")
        return _make_reduce(fcombine, fidentity, expr, _as_axis_list(axis), where)

    reducer.__name__ = name
    reducer.__doc__ = f"Reduce with {name} over the given reduce axes (``where=`` masks)."
    return reducer


def _combine_pair(fcombine, a, b):
    a, b = convert(a), convert(b)
    return fcombine(a, b)


def _make_reduce(fcombine, fidentity, expr, axes, where):
    multi = isinstance(expr, (list, tuple))
    sources = tuple(convert(e) for e in (expr if multi else (expr,)))
    dtypes = [s.dtype for s in sources]
    lhs = tuple(Var("x", t) for t in dtypes)
    rhs = tuple(Var("y", t) for t in dtypes)
    result = fcombine(lhs, rhs) if multi else fcombine(lhs[0], rhs[0])
    identity = fidentity(*dtypes)
    result = tuple(result) if multi else (result,)
    identity = tuple(identity) if multi else (identity,)
    combiner = CommReducer(lhs, rhs, tuple(convert(r) for r in result),
                           tuple(convert(v, t) for v, t in zip(identity, dtypes)))
    condition = const(True) if where is None else convert(where)
    reduces = tuple(Reduce(combiner, sources, tuple(axes), condition, k)
                    for k in range(len(sources)))
    return reduces if multi else reduces[0]


sum = comm_reducer(lambda x, y: x + y, lambda t: const(0, t), name="sum")  # noqa: A001
max = comm_reducer(lambda x, y: tir_op.max(x, y), tir_op.min_value, name="max")  # noqa: A001
min = comm_reducer(lambda x, y: tir_op.min(x, y), tir_op.max_value, name="min")  # noqa: A001

