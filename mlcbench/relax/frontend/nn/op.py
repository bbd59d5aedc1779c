"""Functional ops on ``nn.Tensor``: each emits one Relax binding named after the op.

They are the high-level Relax ops (``R.matmul``, ``R.nn.conv2d`` ...) taking and
returning ``nn.Tensor``; a Python number next to a tensor becomes a constant of the
tensor's dtype. Call them inside ``forward`` while the module is exported::

    def forward(self, x):
        h = nn.op.matmul(x, nn.op.permute_dims(self.weight))   # R.matmul(x, R.permute_dims(w))
        return nn.op.relu(h + self.bias)                        # R.add, then R.nn.relu
"""
from __future__ import annotations

import math

from ....tir.expr import IntImm
from ... import op as _op
from ...expr import const
from ...struct_info import as_dim, dim_equal
from .core import Tensor, emit, expr_of


def _operands(a, b, where: str):
    """Relax expressions for a binary op; a number takes the dtype of the tensor beside it."""
    if isinstance(a, (int, float)) and isinstance(b, Tensor):
        return const(a, b.dtype), b._expr
    if isinstance(a, Tensor) and isinstance(b, (int, float)):
        return a._expr, const(b, a.dtype)
    return expr_of(a, where), expr_of(b, where)


def add(a, b, name: str = "add") -> Tensor:
    """``a + b`` with numpy broadcasting."""
    return emit(_op.add(*_operands(a, b, "nn.op.add")), name)


def subtract(a, b, name: str = "subtract") -> Tensor:
    return emit(_op.subtract(*_operands(a, b, "nn.op.subtract")), name)


def multiply(a, b, name: str = "mul") -> Tensor:
    return emit(_op.multiply(*_operands(a, b, "nn.op.multiply")), name)


def divide(a, b, name: str = "divide") -> Tensor:
    return emit(_op.divide(*_operands(a, b, "nn.op.divide")), name)


def matmul(a: Tensor, b: Tensor, out_dtype: str | None = None, name: str = "matmul") -> Tensor:
    """numpy's ``a @ b`` (batch dimensions broadcast)."""
    return emit(_op.matmul(expr_of(a, "nn.op.matmul"), expr_of(b, "nn.op.matmul"),
                           out_dtype=out_dtype), name)


def permute_dims(x: Tensor, axes=None, name: str = "permute_dims") -> Tensor:
    """Reorder axes; ``axes=None`` reverses them (a matrix transpose)."""
    return emit(_op.permute_dims(expr_of(x, "nn.op.permute_dims"), axes), name)


def reshape(x: Tensor, shape, name: str = "reshape") -> Tensor:
    """``reshape(x, (n, -1))``: one dimension may be -1 (inferred).

    The -1 is resolved here when the extents it stands for are constant, also beside
    a symbolic batch: ``(n, 8, 4, 4)`` to ``(n, -1)`` emits ``R.shape([n, 128])``.
    """
    expr = expr_of(x, "nn.op.reshape")
    shape = [shape] if isinstance(shape, int) else list(shape)
    return emit(_op.reshape(expr, _resolve_minus_one(x.struct_info.dims, shape)), name)


def _resolve_minus_one(in_dims, shape: list) -> list:
    """``shape`` with its one -1 made explicit, when the product of what is left of the
    input (after cancelling dimensions equal to requested ones) is a known constant."""
    wildcards = [k for k, d in enumerate(shape) if isinstance(d, int) and d == -1]
    if len(wildcards) != 1 or in_dims is None:
        return shape
    remaining = list(in_dims)
    known_out = 1
    for dim in shape[:wildcards[0]] + shape[wildcards[0] + 1:]:
        dim = as_dim(dim)
        match = next((k for k, d in enumerate(remaining) if dim_equal(d, dim)), None)
        if match is not None:
            remaining.pop(match)
        elif isinstance(dim, IntImm):
            known_out *= dim.value
        else:
            return shape
    if not all(isinstance(d, IntImm) for d in remaining) or known_out == 0:
        return shape
    total = math.prod(d.value for d in remaining)
    if total % known_out:
        return shape           # relax.reshape reports the mismatch
    return shape[:wildcards[0]] + [total // known_out] + shape[wildcards[0] + 1:]


def astype(x: Tensor, dtype: str, name: str = "astype") -> Tensor:
    return emit(_op.astype(expr_of(x, "nn.op.astype"), dtype), name)


def relu(x: Tensor, name: str = "relu") -> Tensor:
    return emit(_op.nn.relu(expr_of(x, "nn.op.relu")), name)


def softmax(x: Tensor, axis: int = -1, name: str = "softmax") -> Tensor:
    return emit(_op.nn.softmax(expr_of(x, "nn.op.softmax"), axis), name)


def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1, data_layout: str = "NCHW",
           name: str = "conv2d") -> Tensor:
    """2-D convolution of NCHW ``x`` with OIHW ``weight``, then ``bias`` per channel.

    As in TVM, the bias is reshaped to ``(1, O, 1, 1)`` and added, so the exported
    function shows ``R.nn.conv2d``, ``R.reshape`` and ``R.add``.
    """
    out = emit(_op.nn.conv2d(expr_of(x, "nn.op.conv2d"), expr_of(weight, "nn.op.conv2d"),
                             strides=stride, padding=padding, dilation=dilation,
                             groups=groups, data_layout=data_layout), name)
    if bias is None:
        return out
    return add(out, reshape(bias, [1, -1, 1, 1]))


def max_pool2d(x: Tensor, kernel_size, stride=None, padding=0,
               name: str = "max_pool2d") -> Tensor:
    """Max over ``kernel_size`` windows; ``stride`` defaults to the window (PyTorch's rule)."""
    stride = kernel_size if stride is None else stride
    return emit(_op.nn.max_pool2d(expr_of(x, "nn.op.max_pool2d"), kernel_size, stride,
                                  padding), name)
