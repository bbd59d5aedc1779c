"""Tensors and the operations that produce them.

A :class:`Tensor` is a named, shaped value produced by an :class:`Operation`: a
:class:`PlaceholderOp` (an input) or a :class:`ComputeOp` (one expression per output
element). Indexing a tensor, ``A[i, j]``, gives a ``BufferLoad`` of the buffer that
stands for the tensor, so compute bodies are ordinary TIR expressions::

    A = te.placeholder((4, 6), name="A")
    B = te.compute((4, 6), lambda i, j: A[i, j] * 2.0, name="B")
    B.op.body[0]          # A[i, j] * T.float32(2.0)

Tensors compare by identity; ``A.shape[1] == B.shape[0]`` is a (constant) boolean
expression that Python can test with ``if``.
"""
from __future__ import annotations

import threading
import weakref

from ..ir.dtype import dtype as as_dtype
from ..ir.errors import IRError
from ..tir.buffer import Buffer
from ..tir.expr import BufferLoad, PrimExpr, convert

# Tensors indexed while an fcompute runs, so that the op can name its inputs.
_TRACE = threading.local()
# Every live tensor by the identity of its buffer (for loads built outside fcompute).
_TENSOR_OF_BUFFER: "weakref.WeakValueDictionary[int, Tensor]" = weakref.WeakValueDictionary()


class Tensor:
    """The ``value_index``-th output of ``op``; ``shape`` and ``dtype`` as in TVM."""

    def __init__(self, op: "Operation", value_index: int, shape, dtype, name: str):
        self.op = op
        self.value_index = value_index
        self.shape = tuple(convert(s) for s in shape)
        self.dtype = as_dtype(dtype)
        self.name = name
        self.buffer = Buffer(name, self.shape, self.dtype)
        _TENSOR_OF_BUFFER[id(self.buffer)] = self

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, indices) -> BufferLoad:
        indices = indices if isinstance(indices, tuple) else (indices,)
        if len(indices) != self.ndim:
            raise IRError(f"tensor {self.name} has {self.ndim} dimensions (shape "
                          f"{[str(s) for s in self.shape]}), indexed with {len(indices)}")
        frames = getattr(_TRACE, "frames", None)
        if frames:
            frames[-1][self.buffer] = self
        return BufferLoad(self.buffer, tuple(_as_index(i) for i in indices))

    def __call__(self, *indices) -> BufferLoad:
        """``A(i, j)`` is ``A[i, j]`` (TVM's older spelling, used with ``lambda *i``)."""
        if len(indices) == 1 and isinstance(indices[0], (tuple, list)):
            indices = tuple(indices[0])
        return self[tuple(indices)]

    def astype(self, dtype):
        from .. import topi
        return topi.cast(self, dtype)

    def __repr__(self) -> str:
        shape = ", ".join(str(s) for s in self.shape)
        return f"Tensor(shape=({shape}), op.name={self.op.name}, dtype={self.dtype})"


def _as_index(value) -> PrimExpr:
    """Indices may be expressions, Python ints or IterVars (``A[k]`` for a reduce axis)."""
    from ..tir.stmt import IterVar
    if isinstance(value, IterVar):
        return value.var
    return convert(value)


class Operation:
    """What produces tensors. ``output(i)`` is the i-th tensor it produces."""

    name: str
    tag: str
    attrs: dict
    outputs: tuple

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    def output(self, index: int) -> Tensor:
        return self.outputs[index]

    @property
    def input_tensors(self) -> tuple:
        return ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class PlaceholderOp(Operation):
    """An input tensor of the program."""

    def __init__(self, shape, dtype, name: str):
        self.name, self.tag, self.attrs = name, "", {}
        self.shape = tuple(convert(s) for s in shape)
        self.dtype = as_dtype(dtype)
        self.outputs = (Tensor(self, 0, self.shape, self.dtype, name),)


class ComputeOp(Operation):
    """``outputs[k][axis...] = body[k]``; ``axis`` are spatial IterVars, ``reduce_axis``
    the reduction IterVars that the body's reductions range over."""

    def __init__(self, name, tag, attrs, axis, body, inputs, reduce_axis=()):
        self.name, self.tag, self.attrs = name, tag, dict(attrs or {})
        self.axis = tuple(axis)
        self.body = tuple(body)
        self.reduce_axis = tuple(reduce_axis)
        self._inputs = tuple(inputs)
        shape = tuple(iv.dom.extent for iv in self.axis)
        if len(self.body) == 1:
            names = [name]
        else:
            names = [f"{name}_v{k}" for k in range(len(self.body))]
        self.outputs = tuple(Tensor(self, k, shape, b.dtype, n)
                             for k, (b, n) in enumerate(zip(self.body, names)))

    @property
    def input_tensors(self) -> tuple:
        return self._inputs


class trace_inputs:
    """Record the tensors indexed while building a compute body (a context manager)."""

    def __enter__(self) -> dict:
        frames = getattr(_TRACE, "frames", None)
        if frames is None:
            frames = _TRACE.frames = []
        self.frame = {}
        frames.append(self.frame)
        return self.frame

    def __exit__(self, *exc):
        _TRACE.frames.pop()
        return False


def tensor_of_buffer(buffer: Buffer, traced: dict) -> Tensor | None:
    """The tensor that ``buffer`` stands for, if any."""
    found = traced.get(buffer)
    if found is None:
        found = _TENSOR_OF_BUFFER.get(id(buffer))
        if found is not None and found.buffer is not buffer:
            found = None
    return found

