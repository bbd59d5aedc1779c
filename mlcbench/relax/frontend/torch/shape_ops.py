"""Converters of torch's shape functions: views, permutations, joins, splits, indexing.

Shapes are static here, so ``x.size(0)`` and ``x.shape`` become Python ints that later
converters (``x.view(x.size(0), -1)``) read as plain numbers.
"""
from __future__ import annotations

import math

import numpy as np

from ....ir.errors import IRError
from ... import op as R
from ...expr import Expr, Tuple, const
from .base import torch_dtype, tuple_item
from .ops import is_tensor, normalize_dim


def _varargs(values) -> list:
    """``x.view(2, 3)``, ``x.view((2, 3))`` and ``aten.view(x, [2, 3])`` alike."""
    if len(values) == 1 and isinstance(values[0], (list, tuple)):
        values = values[0]
    return [int(v) for v in values]


def reshape(t, input, *shape):
    shape = _varargs(shape)
    if tuple(shape) == t.shape_of(input):
        return input
    return t.emit(R.reshape(input, shape))


def flatten(t, input, start_dim=0, end_dim=-1):
    shape = t.shape_of(input)
    if not shape:
        return t.emit(R.reshape(input, [1]))
    start, end = normalize_dim(start_dim, len(shape)), normalize_dim(end_dim, len(shape))
    new_shape = shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:]
    return reshape(t, input, new_shape)


def unflatten(t, input, dim, sizes):
    shape = t.shape_of(input)
    dim = normalize_dim(dim, len(shape))
    return reshape(t, input, shape[:dim] + tuple(sizes) + shape[dim + 1:])


def permute(t, input, *dims):
    ndim = len(t.shape_of(input))
    dims = [normalize_dim(d, ndim) for d in _varargs(dims)]
    if dims == list(range(ndim)):
        return input
    return t.emit(R.permute_dims(input, dims))


def transpose(t, input, dim0, dim1):
    ndim = len(t.shape_of(input))
    axes = list(range(ndim))
    a, b = normalize_dim(dim0, ndim), normalize_dim(dim1, ndim)
    axes[a], axes[b] = axes[b], axes[a]
    return permute(t, input, axes)


def t_(t, input):
    """``x.t()``: transpose of a matrix; vectors stay as they are."""
    return transpose(t, input, 0, 1) if len(t.shape_of(input)) == 2 else input


def unsqueeze(t, input, dim):
    ndim = len(t.shape_of(input)) + 1
    return t.emit(R.expand_dims(input, normalize_dim(dim, ndim)))


def squeeze(t, input, dim=None):
    """torch ignores a named axis whose extent is not 1; so does this."""
    shape = t.shape_of(input)
    dims = range(len(shape)) if dim is None else \
        [normalize_dim(d, len(shape)) for d in (dim if isinstance(dim, (list, tuple))
                                                 else [dim])]
    axes = [d for d in dims if shape[d] == 1]
    return t.emit(R.squeeze(input, axes)) if axes else input


def expand(t, input, *sizes, implicit=False):
    shape = t.shape_of(input)
    sizes = _varargs(sizes)
    offset = len(sizes) - len(shape)
    target = [shape[k - offset] if s == -1 else s for k, s in enumerate(sizes)]
    if tuple(target) == shape:
        return input
    return t.emit(R.broadcast_to(input, target))


def expand_as(t, input, other):
    return expand(t, input, t.shape_of(other))


def repeat(t, input, *sizes):
    """``x.repeat(a, b)``: tile; written as broadcast over a new axis per dimension."""
    sizes = _varargs(sizes)
    shape = (1,) * (len(sizes) - len(t.shape_of(input))) + t.shape_of(input)
    x = reshape(t, input, [d for s in shape for d in (1, s)])
    x = expand(t, x, [d for r, s in zip(sizes, shape) for d in (r, s)])
    return reshape(t, x, [r * s for r, s in zip(sizes, shape)])


def cat(t, tensors, dim=0):
    tensors = [x for x in tensors if t.shape_of(x) != (0,)]
    if len(tensors) == 1:
        return tensors[0]
    return t.emit(R.concat(Tuple(list(tensors)), axis=dim))


def stack(t, tensors, dim=0):
    ndim = len(t.shape_of(tensors[0])) + 1
    return cat(t, [unsqueeze(t, x, dim) for x in tensors], normalize_dim(dim, ndim))


def _split_at(t, input, bounds, dim):
    """The pieces of ``input`` between consecutive ``bounds`` along ``dim``."""
    if len(bounds) == 2:
        return (input,)
    parts = t.emit(R.split(input, list(bounds[1:-1]), axis=dim))
    return tuple(tuple_item(t, parts, k) for k in range(len(bounds) - 1))


def split(t, input, split_size_or_sections, dim=0):
    """torch's int is the size of each piece (the last may be smaller)."""
    extent = t.shape_of(input)[normalize_dim(dim, len(t.shape_of(input)))]
    if isinstance(split_size_or_sections, int):
        sizes = [split_size_or_sections] * (extent // split_size_or_sections)
        if extent % split_size_or_sections:
            sizes.append(extent % split_size_or_sections)
    else:
        sizes = list(split_size_or_sections)
    return _split_at(t, input, [0, *np.cumsum(sizes).tolist()], dim)


def chunk(t, input, chunks, dim=0):
    extent = t.shape_of(input)[normalize_dim(dim, len(t.shape_of(input)))]
    return split(t, input, -(-extent // chunks), dim)


def unbind(t, input, dim=0):
    return tuple(squeeze(t, x, dim) for x in split(t, input, 1, dim))


def size(t, input, dim=None):
    shape = t.shape_of(input)
    return shape if dim is None else shape[normalize_dim(dim, len(shape))]


def sym_size(t, input, dim):
    return size(t, input, dim)


def getattr_(t, value, name):
    """``x.shape`` / ``x.dtype`` / ``x.ndim`` in a traced graph."""
    if name == "shape":
        return t.shape_of(value)
    if name == "ndim":
        return len(t.shape_of(value))
    if name == "dtype":
        return t.dtype_of(value)
    raise IRError(f"getattr: attribute {name!r} of a tensor is not supported "
                  f"(shape, ndim and dtype are)")


def numel(t, input):
    return math.prod(t.shape_of(input))


def dim(t, input):
    return len(t.shape_of(input))


def to(t, input, *args, **kwargs):
    """``x.to(torch.float16)``, ``x.float()``: devices are ignored, dtypes cast."""
    for value in (*args, kwargs.get("dtype")):
        if value is not None and str(value).startswith("torch.") and \
                not str(value).startswith("torch.device"):
            name = torch_dtype(value)
            return input if t.dtype_of(input) == name else t.emit(R.astype(input, name))
    return input


def type_as(t, input, other):
    dtype = t.dtype_of(other)
    return input if t.dtype_of(input) == dtype else t.emit(R.astype(input, dtype))


def cast_to(dtype):
    """``x.float()``, ``x.long()`` ..."""
    def convert(t, input, *_, **__):
        return input if t.dtype_of(input) == dtype else t.emit(R.astype(input, dtype))
    return convert


# -- indexing ---------------------------------------------------------------------------

def getitem(t, value, index):
    """``seq[i]`` of Python values and tuples, and numpy-style indexing of tensors."""
    if isinstance(value, (list, tuple)):
        return value[index]
    if isinstance(value, Expr) and not is_tensor_value(value):
        return tuple_item(t, value, index)
    return index_tensor(t, value, index if isinstance(index, tuple) else (index,))


def is_tensor_value(value) -> bool:
    from ...struct_info import TensorStructInfo
    return isinstance(value.struct_info, TensorStructInfo)


def _expand_ellipsis(index, ndim):
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if Ellipsis not in index:
        return tuple(index) + (slice(None),) * (ndim - used)
    k = index.index(Ellipsis)
    return index[:k] + (slice(None),) * (ndim - used) + index[k + 1:]


def index_tensor(t, x, index):
    """``x[1:, 0, None, ..., ::2]``: one strided_slice, then squeeze ints, add Nones;
    one integer tensor index (``x[:, idx]``) becomes a take."""
    shape = t.shape_of(x)
    index = _expand_ellipsis(tuple(index), len(shape))
    axes, begin, end, strides, drop, new, gather = [], [], [], [], [], [], None
    axis = out_pos = 0
    for item in index:
        if item is None:
            new.append(out_pos)
            out_pos += 1
            continue
        if isinstance(item, slice):
            start, stop, step = item.indices(shape[axis])
            if (start, stop, step) != (0, shape[axis], 1):
                axes.append(axis), begin.append(start), end.append(stop), strides.append(step)
            out_pos += 1
        elif is_tensor(item):
            gather = (axis, item)
            out_pos += 1
        else:
            k = int(item)
            if not -shape[axis] <= k < shape[axis]:
                raise IRError(f"index {k} is out of range for axis {axis} of extent "
                              f"{shape[axis]} (shape {shape})")
            k %= shape[axis]
            axes.append(axis), begin.append(k), end.append(k + 1), strides.append(1)
            drop.append(axis)
        axis += 1
    if axes:
        x = t.emit(R.strided_slice(x, axes, begin, end, strides))
    if gather is not None:
        x = t.emit(R.take(x, gather[1], axis=gather[0]))
    if drop:
        x = t.emit(R.squeeze(x, drop))
    return t.emit(R.expand_dims(x, new)) if new else x


def index(t, input, indices):
    """``aten.index.Tensor``: ``x[:, idx]`` as a list of per-axis tensors (None = all)."""
    return index_tensor(t, input, tuple(slice(None) if i is None else i for i in indices))


def select(t, input, dim, index):
    ndim = len(t.shape_of(input))
    return index_tensor(t, input, (slice(None),) * normalize_dim(dim, ndim) + (index,))


def slice_(t, input, dim=0, start=None, end=None, step=1):
    ndim = len(t.shape_of(input))
    return index_tensor(t, input, (slice(None),) * normalize_dim(dim, ndim)
                        + (slice(start, end, step),))


def narrow(t, input, dim, start, length):
    return slice_(t, input, dim, start, start + length)


def full_like(t, input, fill_value, *, dtype=None, **_):
    """A constant of ``input``'s shape (and dtype, unless ``dtype`` is given)."""
    dtype = torch_dtype(dtype) if dtype is not None else t.dtype_of(input)
    return const(np.full(t.shape_of(input), fill_value, dtype))


def zeros_like(t, input, *, dtype=None, **_):
    return full_like(t, input, 0, dtype=dtype)


def ones_like(t, input, *, dtype=None, **_):
    return full_like(t, input, 1, dtype=dtype)


# -- creation (static arguments, so the results are constants) ------------------------------

def _creation_dtype(dtype, *values) -> str:
    """torch's choice: the given dtype, else bool, int64 or the default float32."""
    if dtype is not None:
        return torch_dtype(dtype)
    if all(isinstance(v, bool) for v in values):
        return "bool"
    return "int64" if all(isinstance(v, int) for v in values) else "float32"


def arange(t, start, end=None, step=1, *, dtype=None, **_):
    if end is None:
        start, end = 0, start
    return const(np.arange(start, end, step, dtype=_creation_dtype(dtype, start, end, step)))


def full(t, size, fill_value, *, dtype=None, **_):
    return const(np.full(tuple(size), fill_value, _creation_dtype(dtype, fill_value)))


def zeros(t, *size, dtype=None, **_):
    return const(np.zeros(tuple(_varargs(size)), _creation_dtype(dtype, 0.0)))


def ones(t, *size, dtype=None, **_):
    return const(np.ones(tuple(_varargs(size)), _creation_dtype(dtype, 1.0)))


def scalar_tensor(t, s, *, dtype=None, **_):
    return const(np.asarray(s, _creation_dtype(dtype, float(s))))
