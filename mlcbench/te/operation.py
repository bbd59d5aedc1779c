"""Building tensor expressions: ``placeholder``, ``compute`` and scalar helpers.

::

    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j] + 1.0, name="B")

The ``lambda``'s argument names become the loop names after ``create_prim_func``
(``i``, ``j``; block variables ``v_i``, ``v_j``). ``lambda *i`` names them ``i0``,
``i1``, ... like TVM.
"""
from __future__ import annotations

import inspect

from ..ir.errors import IRError
from ..tir.expr import BufferLoad, PrimExpr, SizeVar, Var, convert
from ..tir.functor import StmtExprVisitor
from ..tir.stmt import IterType
from .reduction import Reduce, make_axis
from .tensor import ComputeOp, PlaceholderOp, Tensor, tensor_of_buffer, trace_inputs


def placeholder(shape, dtype="float32", name: str = "placeholder") -> Tensor:
    """An input tensor: ``te.placeholder((128, 128), "float32", name="A")``."""
    shape = (shape,) if isinstance(shape, (int, PrimExpr)) else tuple(shape)
    return PlaceholderOp(shape, dtype, name).output(0)


def compute(shape, fcompute, name: str = "compute", tag: str = "", attrs=None):
    """A tensor whose element at ``indices`` is ``fcompute(*indices)``.

    ``fcompute`` takes one argument per dimension (or ``*i``) and returns an expression,
    a top-level reduction (``te.sum(..., axis=k)``) or a tuple of them (one tensor
    each). Returns the tensor, or a tuple of tensors for tuple bodies.

    >>> C = te.compute((4, 5), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    """
    shape = (shape,) if isinstance(shape, (int, PrimExpr)) else tuple(shape)
    return compute_with_axis_names(shape, fcompute, _argument_names(fcompute, len(shape), name),
                                   name, tag, attrs)


def compute_with_axis_names(shape, fcompute, names, name="compute", tag="", attrs=None):
    """``compute`` with the axis names given (``ax0, ax1, ...`` in TVM's C++ operators)."""
    shape = tuple(convert(int(s) if isinstance(s, float) else s) for s in shape)
    axis = [make_axis(extent, arg, IterType.DATA_PAR) for arg, extent in zip(names, shape)]
    with trace_inputs() as traced:
        body = fcompute(*[iv.var for iv in axis])
    body = [convert(b) for b in (body if isinstance(body, (list, tuple)) else [body])]
    reduce_axis = _check_reductions(body, name)
    inputs = _input_tensors(body, traced, name)
    op = ComputeOp(name, tag, attrs, axis, body, inputs, reduce_axis)
    return op.output(0) if op.num_outputs == 1 else op.outputs


def _argument_names(fcompute, ndim: int, name: str) -> list:
    spec = inspect.getfullargspec(fcompute)
    if spec.varargs is not None:
        fixed = list(spec.args)
        if len(fixed) > ndim:
            raise IRError(f"compute {name!r}: fcompute takes {len(fixed)} indices, the shape "
                          f"has only {ndim} dimensions")
        return fixed + [f"i{k}" for k in range(len(fixed), ndim)]
    if not spec.args:
        return [f"i{k}" for k in range(ndim)]
    if len(spec.args) != ndim:
        raise IRError(f"compute {name!r}: fcompute takes {len(spec.args)} indices "
                      f"{tuple(spec.args)}, the shape has {ndim} dimensions")
    return list(spec.args)


class _ReductionFinder(StmtExprVisitor):
    def __init__(self):
        self.found = []
        self.loads = []

    def visit_Reduce(self, op: Reduce):
        self.found.append(op)
        self.generic_visit(op)

    def visit_BufferLoad(self, op: BufferLoad):
        self.loads.append(op.buffer)
        self.generic_visit(op)


def _check_reductions(body: list, name: str) -> tuple:
    """Reductions may only stand at the top of a body, all over the same axes."""
    tops = [b for b in body if isinstance(b, Reduce)]
    for b in body:
        finder = _ReductionFinder()
        finder.visit(b.source if isinstance(b, Reduce) else b)
        if finder.found:
            raise IRError(f"compute {name!r}: a reduction (te.sum/max/min) must be the whole "
                          "body, found one nested inside an expression; compute the "
                          "reduction as its own tensor first")
    if tops and len(tops) != len(body):
        raise IRError(f"compute {name!r}: outputs mix reductions and plain expressions")
    if not tops:
        return ()
    if any(t.combiner is not tops[0].combiner for t in tops):
        raise IRError(f"compute {name!r}: all outputs must come from one reduction")
    return tuple(tops[0].axis)


def _input_tensors(body: list, traced: dict, name: str) -> tuple:
    finder = _ReductionFinder()
    finder.visit(body)
    tensors = []
    for buffer in finder.loads:
        tensor = tensor_of_buffer(buffer, traced)
        if tensor is None:
            raise IRError(f"compute {name!r}: the body loads from buffer {buffer.name!r}, "
                          "which is not a te tensor; index te.placeholder/te.compute results")
        if tensor not in tensors:
            tensors.append(tensor)
    return tuple(tensors)


def var(name: str = "tindex", dtype="int32", span=None) -> Var:
    """A scalar variable, e.g. a symbolic size or a scalar parameter."""
    return Var(name, dtype)


def size_var(name: str = "size", dtype="int32", span=None) -> SizeVar:
    """A non-negative variable for symbolic shapes: ``n = te.size_var("n")``."""
    return SizeVar(name, dtype)
