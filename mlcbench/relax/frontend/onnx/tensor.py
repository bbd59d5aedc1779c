"""Converters of shape and data-movement operators: Reshape, Flatten, Transpose, Concat,
Split, Slice, Gather, Squeeze/Unsqueeze, Expand, Pad, Tile, the reductions, Resize, and
the shape producers (Shape, ConstantOfShape, Constant), which give numpy arrays.

Operands that change between opsets (``axes`` as an attribute before opset 13 and an
input after, ``pads`` before and after opset 11 ...) are read by :func:`attr_or_input`,
so one converter covers the whole range.
"""
from __future__ import annotations

import numpy as np

from ... import op
from .common import tuple_outputs


def attr_or_input(g, node, name: str, index: int, default=None):
    """A constant operand given as attribute ``name`` or as input ``index``."""
    if name in node.attrs:
        value = node.attrs[name]
        return list(value) if isinstance(value, (list, tuple)) else value
    value = node.input(index)
    if value is None:
        return default
    if not g.known(value):
        raise node.fail(f"input {index} ({name}) must be a constant (an initializer or "
                        f"computed from shapes), found a tensor computed at run time")
    return [int(v) if np.issubdtype(value.dtype, np.integer) else float(v)
            for v in np.asarray(value).reshape(-1)]


# -- shape producers -------------------------------------------------------------------------

def convert_shape(g, node):
    shape = np.array(g.shape(node.input(0)), dtype="int64")
    start, end = node.attr("start", 0), node.attr("end")
    return shape[start:end]


def convert_size(g, node):
    return np.array(int(np.prod(g.shape(node.input(0)))), dtype="int64")


def convert_constant(g, node):
    from onnx import numpy_helper
    if "value" in node.attrs:
        return numpy_helper.to_array(node.attrs["value"])
    for name, dtype in (("value_float", "float32"), ("value_floats", "float32"),
                        ("value_int", "int64"), ("value_ints", "int64")):
        if name in node.attrs:
            return np.array(node.attrs[name], dtype=dtype)
    raise node.fail(f"supported value attributes are value, value_float(s), value_int(s); "
                    f"found {sorted(node.attrs)}")


def convert_constant_of_shape(g, node):
    from onnx import numpy_helper
    value = node.attrs.get("value")
    fill = numpy_helper.to_array(value).reshape(-1) if value is not None else \
        np.zeros(1, "float32")
    shape = [int(d) for d in np.asarray(node.input(0)).reshape(-1)]
    return np.full(shape, fill[0], dtype=fill.dtype)


# -- layout ----------------------------------------------------------------------------------

def convert_reshape(g, node):
    x = g.expr(node.input(0))
    in_shape = g.shape(x)
    target = attr_or_input(g, node, "shape", 1)
    if not node.attr("allowzero", 0):
        target = [in_shape[k] if d == 0 else d for k, d in enumerate(target)]
    return op.reshape(x, tuple(int(d) for d in target))


def convert_flatten(g, node):
    x = g.expr(node.input(0))
    shape = g.shape(x)
    axis = node.attr("axis", 1) % (len(shape) + 1) if shape else 0
    rows = int(np.prod(shape[:axis], dtype=np.int64))
    return op.reshape(x, (rows, int(np.prod(shape[axis:], dtype=np.int64))))


def convert_transpose(g, node):
    x = g.expr(node.input(0))
    perm = node.attr("perm")
    return op.permute_dims(x, list(perm) if perm is not None else None)


def convert_concat(g, node):
    values = [g.expr(v) for v in node.inputs if v is not None]
    return op.concat(values, node.attr("axis"))


def convert_split(g, node):
    x = g.expr(node.input(0))
    axis = node.attr("axis", 0)
    extent = g.shape(x)[axis]
    sizes = attr_or_input(g, node, "split", 1)
    count = node.num_outputs
    if sizes is None:
        step = -(-extent // count)     # opset 18: the last piece may be smaller
        sizes = [min(step, extent - k * step) for k in range(count)]
    if sum(sizes) != extent:
        raise node.fail(f"split sizes {sizes} do not add up to the extent {extent} of "
                        f"axis {axis}")
    cuts = list(np.cumsum(sizes)[:-1])
    return tuple_outputs(g, op.split(x, [int(c) for c in cuts], axis), count)


def convert_slice(g, node):
    x = g.expr(node.input(0))
    starts = attr_or_input(g, node, "starts", 1)
    ends = attr_or_input(g, node, "ends", 2)
    axes = attr_or_input(g, node, "axes", 3, list(range(len(starts))))
    steps = attr_or_input(g, node, "steps", 4, [1] * len(starts))
    return op.strided_slice(x, axes, starts, ends, steps)


def convert_gather(g, node):
    x, indices = node.input(0), node.input(1)
    axis = node.attr("axis", 0)
    extent = g.shape(x)[axis]
    if g.known(indices):
        indices = np.where(indices < 0, indices + extent, indices).astype("int64")
        if indices.size and (indices.min() < 0 or indices.max() >= extent):
            raise node.fail(f"indices {indices.tolist()} are out of range for axis {axis} "
                            f"of extent {extent}")
    else:
        dtype = g.dtype(indices)
        idx = g.expr(indices)
        negative = g.emit(op.less(idx, g.expr(np.array(0, dtype))))
        idx = g.emit(op.where(negative, g.emit(op.add(idx, g.expr(np.array(extent, dtype)))),
                              idx))
        indices = idx
    return op.take(g.expr(x), g.expr(indices), axis)


def convert_squeeze(g, node):
    axes = attr_or_input(g, node, "axes", 1)
    return op.squeeze(g.expr(node.input(0)), axes)


def convert_unsqueeze(g, node):
    return op.expand_dims(g.expr(node.input(0)), attr_or_input(g, node, "axes", 1))


def convert_expand(g, node):
    x = g.expr(node.input(0))
    shape = attr_or_input(g, node, "shape", 1)
    target = np.broadcast_shapes(g.shape(x), tuple(shape))
    return x if target == g.shape(x) else op.broadcast_to(x, target)


def convert_tile(g, node):
    x = g.expr(node.input(0))
    repeats = attr_or_input(g, node, "repeats", 1)
    shape = g.shape(x)
    # tile = broadcast to (r0, d0, r1, d1, ...) then merge each pair
    expanded = g.emit(op.reshape(x, tuple(v for d in shape for v in (1, d))))
    target = tuple(v for r, d in zip(repeats, shape) for v in (r, d))
    tiled = g.emit(op.broadcast_to(expanded, target))
    return op.reshape(tiled, tuple(r * d for r, d in zip(repeats, shape)))


def convert_pad(g, node):
    x = g.expr(node.input(0))
    rank = len(g.shape(x))
    pads = attr_or_input(g, node, "pads", 1)
    value = node.attr("value") if node.opset < 11 else None
    if value is None:
        given = node.input(2)
        value = float(np.asarray(given).reshape(-1)[0]) if given is not None and \
            g.known(given) else 0.0
    axes = attr_or_input(g, node, "axes", 3, list(range(rank)))
    widths = [0] * (2 * rank)
    for k, axis in enumerate(axes):
        widths[2 * (axis % rank)] = pads[k]
        widths[2 * (axis % rank) + 1] = pads[k + len(axes)]
    mode = node.attr("mode", "constant")
    if mode not in ("constant", "edge", "reflect"):
        raise node.fail(f"mode is constant, edge or reflect, found {mode!r}")
    return op.nn.pad(x, widths, value, mode)


# -- reductions ------------------------------------------------------------------------------

def convert_reduce(relax_func, axes_input_since: int):
    def convert(g, node):
        x = g.expr(node.input(0))
        axes = node.attr("axes")
        if axes is None and node.opset >= axes_input_since:
            axes = attr_or_input(g, node, "axes", 1)
        if not axes:
            if node.attr("noop_with_empty_axes", 0):
                return x
            axes = None
        return relax_func(x, axes, keepdims=bool(node.attr("keepdims", 1)))
    return convert


# -- resize ----------------------------------------------------------------------------------

def convert_resize(g, node):
    x = g.expr(node.input(0))
    shape = g.shape(x)
    if len(shape) != 4:
        raise node.fail(f"4-D NCHW input is supported, found shape {shape}")
    sizes, scales = _resize_targets(g, node)
    if sizes is not None:
        size = [int(s) for s in sizes[-2:]]
        spatial_scales = None
    else:
        if any(float(s) != 1.0 for s in scales[:2]):
            raise node.fail(f"scales on the batch and channel axes must be 1, found {scales}")
        spatial_scales = [float(s) for s in scales[2:]]
        size = [int(np.floor(d * s)) for d, s in zip(shape[2:], spatial_scales)]
    mode = node.attr("mode", "nearest")
    if mode not in ("nearest", "linear"):
        raise node.fail(f"mode {mode!r} is not supported; nearest and linear are")
    default_coords = "asymmetric" if node.opset < 11 else "half_pixel"
    coords = node.attr("coordinate_transformation_mode", default_coords)
    rounding = node.attr("nearest_mode", "round_prefer_floor") if node.opset >= 11 else \
        "floor"
    if node.opset < 11 and mode == "nearest":
        coords = "asymmetric"
    if node.attr("antialias", 0) or node.attr("keep_aspect_ratio_policy", "stretch") \
            != "stretch":
        raise node.fail("antialias and keep_aspect_ratio_policy are not supported")
    return op.image.resize2d(x, size, method=mode, coordinate_transformation_mode=coords,
                             rounding_method=rounding, scales=spatial_scales)


def _resize_targets(g, node):
    """(sizes, scales): opset 10 and Upsample give scales as input 1, later opsets as
    input 2 with sizes as input 3."""
    if node.op_type == "Upsample" and node.opset < 9:
        return None, list(node.attr("scales"))
    if node.opset < 11:
        return None, attr_or_input(g, node, "__scales", 1)
    scales = attr_or_input(g, node, "__scales", 2)
    sizes = attr_or_input(g, node, "__sizes", 3)
    if sizes:
        return sizes, None
    if not scales:
        raise node.fail("either scales or sizes must be given")
    return None, scales
