"""Converters of torch's tensor functions, shared by both frontends.

Each converter takes the translator ``t`` and the call's translated arguments, named as
torch names them, and returns the Relax value of the result (emitted through ``t.emit``)
or a Python value when the call only computes with shapes (``x.size(0) * 2``).
Arguments that are Python numbers where torch takes a tensor become constants of the
other operand's dtype, as torch's type promotion would make them.
"""
from __future__ import annotations

import operator

import numpy as np

from ....ir.errors import IRError
from ... import op as R
from ...expr import Expr, const
from .base import tuple_item


def is_tensor(value) -> bool:
    return isinstance(value, Expr)


def scalar_like(t, value, like) -> Expr:
    """A Python number as a 0-d constant of the tensor ``like``'s dtype."""
    return const(np.asarray(value, dtype=t.dtype_of(like)))


def normalize_dim(dim: int, ndim: int) -> int:
    if not -ndim <= dim < max(ndim, 1):
        raise IRError(f"dimension {dim} is out of range for a tensor of {ndim} dimensions")
    return dim % ndim if ndim else 0


# -- elementwise ------------------------------------------------------------------------

def binary(relax_op, python_op):
    """``convert(t, input, other)``: Python numbers compute in Python, tensors in Relax."""
    def convert(t, input, other, *, alpha=1, out=None):
        if out is not None:
            raise IRError("the out= argument is not supported")
        if alpha != 1:
            other = other * alpha if not is_tensor(other) \
                else t.emit(R.multiply(other, scalar_like(t, alpha, other)))
        if not is_tensor(input) and not is_tensor(other):
            return python_op(input, other)
        if not is_tensor(input) and isinstance(input, float) or \
                not is_tensor(other) and isinstance(other, float):
            input, other = (_as_float(t, v) for v in (input, other))
        lhs = input if is_tensor(input) else scalar_like(t, input, other)
        rhs = other if is_tensor(other) else scalar_like(t, other, input)
        return t.emit(relax_op(*promoted(t, lhs, rhs)))
    return convert


def _as_float(t, value):
    """An integer or bool tensor meeting a Python float computes in float32, as in torch
    (``mask * 0.5`` is not truncated to 0)."""
    if is_tensor(value) and _rank(t.dtype_of(value))[0] < 2:
        return t.emit(R.astype(value, "float32"))
    return value


def _rank(dtype: str) -> tuple:
    kind = 2 if dtype.startswith(("float", "bfloat")) else 0 if dtype == "bool" else 1
    return (kind, int("".join(c for c in dtype if c.isdigit()) or 8))


def promoted(t, lhs, rhs) -> tuple:
    """Both operands in torch's result dtype for tensors of two dtypes (bool < int <
    float, then the wider), so ``x + mask`` with an int ``mask`` adds floats."""
    a, b = t.dtype_of(lhs), t.dtype_of(rhs)
    if a == b:
        return lhs, rhs
    if _rank(a) > _rank(b):
        return lhs, t.emit(R.astype(rhs, a))
    return t.emit(R.astype(lhs, b)), rhs


add = binary(R.add, operator.add)
sub = binary(R.subtract, operator.sub)
mul = binary(R.multiply, operator.mul)
floordiv = binary(R.floor_divide, operator.floordiv)
pow_ = binary(R.power, operator.pow)
maximum = binary(R.maximum, max)
minimum = binary(R.minimum, min)
eq = binary(R.equal, operator.eq)
ne = binary(R.not_equal, operator.ne)
lt = binary(R.less, operator.lt)
le = binary(R.less_equal, operator.le)
gt = binary(R.greater, operator.gt)
ge = binary(R.greater_equal, operator.ge)


true_divide = binary(R.divide, operator.truediv)


def div(t, input, other, *, rounding_mode=None):
    if rounding_mode == "floor":
        return floordiv(t, input, other)
    if rounding_mode is not None:
        raise IRError(f"div: rounding_mode {rounding_mode!r} is not supported "
                      f"(None and 'floor' are)")
    if is_tensor(input) or is_tensor(other):     # true division: ints divide as floats
        input, other = _as_float(t, input), _as_float(t, other)
    return true_divide(t, input, other)


def rsub(t, input, other, alpha=1):
    """``other - alpha * input``: torch's ``1 - x`` is ``rsub(x, 1)``."""
    scaled = mul(t, input, alpha) if alpha != 1 else input
    return sub(t, other, scaled)


def unary(relax_op):
    def convert(t, input, *_, inplace=False, **__):
        return t.emit(relax_op(input))
    return convert


relu = unary(R.nn.relu)
sigmoid = unary(R.sigmoid)
tanh = unary(R.tanh)
exp = unary(R.exp)
log = unary(R.log)
sqrt = unary(R.sqrt)
rsqrt = unary(R.rsqrt)
erf = unary(R.erf)
abs_ = unary(R.abs)


def neg(t, input):
    return -input if not is_tensor(input) else t.emit(R.negative(input))


def gelu(t, input, approximate="none"):
    if approximate != "none":
        return _gelu_tanh(t, input)
    return t.emit(R.nn.gelu(input))


def _gelu_tanh(t, x):
    """``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``, GELU(approximate='tanh')."""
    cube = t.emit(R.multiply(t.emit(R.multiply(x, x)), x))
    inner = t.emit(R.add(x, t.emit(R.multiply(cube, scalar_like(t, 0.044715, x)))))
    inner = t.emit(R.multiply(inner, scalar_like(t, np.sqrt(2 / np.pi), x)))
    half_x = t.emit(R.multiply(x, scalar_like(t, 0.5, x)))
    return t.emit(R.multiply(half_x, t.emit(R.add(t.emit(R.tanh(inner)),
                                                    scalar_like(t, 1.0, x)))))


def silu(t, input, inplace=False):
    if hasattr(R.nn, "silu"):
        return t.emit(R.nn.silu(input))
    return t.emit(R.multiply(input, t.emit(R.sigmoid(input))))


def hardtanh(t, input, min_val=-1.0, max_val=1.0, inplace=False):
    return t.emit(R.clip(input, min_val, max_val))


def relu6(t, input, inplace=False):
    return hardtanh(t, input, 0.0, 6.0)


def clamp(t, input, min=None, max=None):  # noqa: A002 (torch's names)
    out = input
    if min is not None:
        out = t.emit(R.maximum(out, min if is_tensor(min) else scalar_like(t, min, input)))
    if max is not None:
        out = t.emit(R.minimum(out, max if is_tensor(max) else scalar_like(t, max, input)))
    return out


def reciprocal(t, input):
    return t.emit(R.divide(scalar_like(t, 1.0, input), input))


def no_value(t, *_, **__):
    """Checks torch.export inserts (``_assert_tensor_metadata``): nothing to compute."""
    return None


def identity(t, input, *_, **__):
    """``contiguous``, ``clone``, ``detach``, dropout at inference: the value itself."""
    return input


def dropout(t, input, p=0.5, training=False, inplace=False):
    if training:
        raise IRError("dropout with training=True is not supported; export the model "
                      "in eval() mode")
    return input


# -- reductions and normalization ---------------------------------------------------------

def _dims(dim, ndim):
    if dim is None:
        return None
    dims = dim if isinstance(dim, (list, tuple)) else [dim]
    return [normalize_dim(d, ndim) for d in dims] or None


def reduction(relax_op):
    def convert(t, input, dim=None, keepdim=False, *, dtype=None):
        out = t.emit(relax_op(input, _dims(dim, len(t.shape_of(input))), keepdim))
        return astype(t, out, dtype) if dtype is not None else out
    return convert


mean = reduction(R.mean)
sum_ = reduction(R.sum)
amax = reduction(R.max)
amin = reduction(R.min)


def softmax(t, input, dim=-1, _stacklevel=3, dtype=None, half_to_float=False):
    x = astype(t, input, dtype) if dtype is not None else input
    return t.emit(R.nn.softmax(x, axis=dim))


def log_softmax(t, input, dim=-1, _stacklevel=3, dtype=None, half_to_float=False):
    x = astype(t, input, dtype) if dtype is not None else input
    return t.emit(R.nn.log_softmax(x, axis=dim))


def layer_norm(t, input, normalized_shape, weight=None, bias=None, eps=1e-5,
               cudnn_enable=True):
    shape = tuple(normalized_shape) if isinstance(normalized_shape, (list, tuple)) \
        else (normalized_shape,)
    ndim = len(t.shape_of(input))
    dtype = t.dtype_of(input)
    gamma = weight if weight is not None else const(np.ones(shape, dtype))
    beta = bias if bias is not None else const(np.zeros(shape, dtype))
    axes = list(range(ndim - len(shape), ndim))
    return t.emit(R.nn.layer_norm(input, gamma, beta, axes, eps))


def native_layer_norm(t, input, normalized_shape, weight, bias, eps):
    """aten's layer norm returns ``(out, mean, rstd)``; models use only ``out``."""
    return (layer_norm(t, input, normalized_shape, weight, bias, eps), None, None)


def batch_norm(t, input, weight, bias, running_mean, running_var, training=False,
               momentum=0.1, eps=1e-5, cudnn_enabled=True):
    if training:
        raise IRError("batch_norm in training mode is not supported; export the model "
                      "in eval() mode")
    channels = t.shape_of(input)[1]
    dtype = t.dtype_of(input)
    gamma = weight if weight is not None else const(np.ones(channels, dtype))
    beta = bias if bias is not None else const(np.zeros(channels, dtype))
    out = t.emit(R.nn.batch_norm(input, gamma, beta, running_mean, running_var, axis=1,
                                 epsilon=eps))
    return tuple_item(t, out, 0)


def batch_norm_no_training(t, input, weight, bias, running_mean, running_var, momentum,
                           eps):
    """``aten._native_batch_norm_legit_no_training``: ``(out, mean, invstd)``."""
    return (batch_norm(t, input, weight, bias, running_mean, running_var, False, momentum,
                       eps), None, None)


# -- linear algebra ---------------------------------------------------------------------

def linear(t, input, weight, bias=None):
    out = t.emit(R.matmul(input, t.emit(R.permute_dims(weight, [1, 0]))))
    return t.emit(R.add(out, bias)) if bias is not None else out


def matmul(t, input, other):
    return t.emit(R.matmul(input, other))


def addmm(t, input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``: ``linear`` decomposed, and ``baddbmm``."""
    out = t.emit(R.matmul(mat1, mat2))
    if alpha != 1:
        out = mul(t, out, alpha)
    bias = mul(t, input, beta) if beta != 1 else input
    return t.emit(R.add(out, bias))


def astype(t, input, dtype):
    from .base import torch_dtype
    name = torch_dtype(dtype)
    return input if t.dtype_of(input) == name else t.emit(R.astype(input, name))


# -- selection and logic -------------------------------------------------------------------

def where(t, condition, input, other):
    like = input if is_tensor(input) else other
    lhs = input if is_tensor(input) else scalar_like(t, input, like)
    rhs = other if is_tensor(other) else scalar_like(t, other, like)
    return t.emit(R.where(condition, lhs, rhs))


def masked_fill(t, input, mask, value):
    """``x.masked_fill(mask, v)``: ``v`` where ``mask`` is True (HF attention masks)."""
    fill = value if is_tensor(value) else scalar_like(t, value, input)
    return t.emit(R.where(mask, fill, input))


def logical_and(t, input, other):
    return t.emit(R.where(input, other, const(np.asarray(False))))


def logical_or(t, input, other):
    return t.emit(R.where(input, const(np.asarray(True)), other))


def logical_not(t, input):
    return t.emit(R.equal(input, const(np.asarray(False))))


def any_(t, input, dim=None, keepdim=False):
    """True where some element along ``dim`` is: a count of the true elements, above 0."""
    counts = t.emit(R.astype(input, "int32"))
    counts = t.emit(R.sum(counts, _dims(dim, len(t.shape_of(input))), keepdim))
    return t.emit(R.greater(counts, const(np.asarray(0, "int32"))))
