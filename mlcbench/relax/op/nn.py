"""Neural-network ops: ``relu``, ``softmax``, ``conv2d``, pooling, norms, ``dropout``, ``linear``.

Layouts are NCHW (data) and OIHW (weights), as in the MLC course; ``conv2d`` and the
pools also take NHWC data (with HWIO weights), which ``relax.transform.ConvertLayout``
produces. ``padding`` is an int, a pair ``(h, w)`` or ``(top, left, bottom, right)``; it is
stored as the 4-tuple.
"""
from __future__ import annotations

import numpy as np

from ... import te, topi
from ...ir.errors import IRError
from ...tir.expr import IntImm, const
from ..expr import Constant, Tuple
from ..struct_info import TensorStructInfo, TupleStructInfo, shape_text
from ..te_bridge import call_te_parts
from .base import call_tir
from .binary import add
from .manipulate import permute_dims
from .reduce import matmul
from .registry import (OpPatternKind, check_arity, make_call, normalize_axis, register_op,
                       tensor_arg)
from .unary import define_unary
from .winograd import TILE_MULTIPLE, winograd_nhwc_tile_size, winograd_tile_size

relu = define_unary("nn.relu", topi.nn.relu)
gelu = define_unary("nn.gelu", topi.gelu, float_only=True)


def _pair(value, what: str) -> tuple:
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * 2
    if len(value) != 2:
        raise IRError(f"{what} is an int or a pair, found {value!r}")
    return value


def _padding(value) -> tuple:
    if isinstance(value, int):
        return (value,) * 4
    value = tuple(int(v) for v in value)
    if len(value) == 2:
        return value * 2
    if len(value) != 4:
        raise IRError(f"padding is an int, a pair or (top, left, bottom, right), found {value!r}")
    return value


def _window_extent(size, k, stride, dilation, lo, hi, ceil_mode=False):
    span = size + lo + hi - ((k - 1) * dilation + 1)
    if isinstance(size, IntImm):
        span = span.value if hasattr(span, "value") else int(span)
        if span < 0:
            return None
        out = (span + stride - 1) // stride + 1 if ceil_mode else span // stride + 1
        return IntImm("int64", out)
    # A symbolic size cannot be checked here: the window is trusted to fit.
    return span // stride + 1


def _nchw(call, index: int, what: str) -> TensorStructInfo:
    sinfo = tensor_arg(call, index, what)
    if sinfo.ndim != 4 or sinfo.dims is None:
        raise IRError(f"{call.op.name}: {what} must be a 4-D tensor of known shape, "
                      f"found {shape_text(sinfo.dims) if sinfo.dims else sinfo.ndim}")
    return sinfo


# Where the height, width and channel axes of 4-D data lie, by layout.
_DATA_AXES = {"NCHW": (2, 3, 1), "NHWC": (1, 2, 3)}


def _layout(call, key: str = "data_layout") -> str:
    return call.attrs.get(key, None) or "NCHW"


def _spatial(call, data, kernel_hw, layout: str = "NCHW"):
    a = call.attrs
    h_axis, w_axis, _ = _DATA_AXES[layout]
    h, w = data.dims[h_axis], data.dims[w_axis]
    top, left, bottom, right = a.padding
    out_h = _window_extent(h, kernel_hw[0], a.strides[0], a.dilation[0], top, bottom,
                           a.get("ceil_mode", False))
    out_w = _window_extent(w, kernel_hw[1], a.strides[1], a.dilation[1], left, right,
                           a.get("ceil_mode", False))
    if out_h is None or out_w is None:
        raise IRError(f"{call.op.name}: window {tuple(kernel_hw)} (dilation {a.dilation}) does "
                      f"not fit the padded input {shape_text(data.dims)}")
    return out_h, out_w


# -- conv2d --------------------------------------------------------------------------------

def _conv2d_infer(call):
    check_arity(call, 2)
    data, weight = _nchw(call, 0, "data"), _nchw(call, 1, "weight")
    layout = _layout(call)
    kh, kw, i, o = weight.dims if layout == "NHWC" else \
        (weight.dims[2], weight.dims[3], weight.dims[1], weight.dims[0])
    c = data.dims[_DATA_AXES[layout][2]]
    groups = call.attrs.groups
    if isinstance(c, IntImm) and isinstance(i, IntImm) and c.value != i.value * groups:
        raise IRError(f"relax.nn.conv2d: data has {c.value} channels but weight "
                      f"{shape_text(weight.dims)} expects {i.value * groups} "
                      f"(in_channels x groups={groups})")
    if not (isinstance(kh, IntImm) and isinstance(kw, IntImm)):
        raise IRError("relax.nn.conv2d: the kernel extent must be constant")
    out_h, out_w = _spatial(call, data, (kh.value, kw.value), layout)
    dims = [data.dims[0], out_h, out_w, o] if layout == "NHWC" else \
        [data.dims[0], o, out_h, out_w]
    return TensorStructInfo(dims, call.attrs.out_dtype or data.dtype)


def _conv2d_legalize(bb, call):
    a = call.attrs
    if _layout(call) == "NHWC":
        tile_size = winograd_nhwc_tile_size(call)
        if tile_size is not None:
            return _conv2d_winograd_nhwc(bb, call, tile_size)
        return bb.call_te(topi.nn.conv2d, call.args[0], call.args[1], a.strides, a.padding,
                          a.dilation, a.groups, "NHWC", "HWIO", a.out_dtype,
                          primfunc_name_hint="conv2d")
    if _groups_as_axis(call):
        return _conv2d_by_group(bb, call)
    tile_size = winograd_tile_size(call)
    if tile_size is not None:
        return bb.call_te(topi.nn.conv2d_winograd_nchw, call.args[0], call.args[1],
                          a.strides, a.padding, a.dilation, a.out_dtype, tile_size,
                          TILE_MULTIPLE, primfunc_name_hint="conv2d_winograd")
    return bb.call_te(topi.nn.conv2d, call.args[0], call.args[1], a.strides, a.padding,
                      a.dilation, a.groups, "NCHW", "OIHW", a.out_dtype,
                      primfunc_name_hint="conv2d")


def _conv2d_winograd_nhwc(bb, call, tile_size: int):
    """Three kernels: the input transform, a batched matmul with the transformed weight
    (a constant, so PrepackWeights packs it at build time) and the output transform,
    into which FuseOps puts the convolution's elementwise consumers."""
    data, weight = call.args
    a = call.attrs
    transformed = Constant(topi.nn.winograd_nhwc_weight(weight.data.numpy(), tile_size))
    # The input transform fuses with nothing: the ops before it (a relu, a concat) stay
    # in their own kernel. The output transform fuses like a convolution: its elementwise
    # consumers go into it, and it never joins another convolution's kernel.
    packed = bb.emit(_call_te_fused_as(bb, OpPatternKind.OPAQUE, "winograd_data_pack",
                                       topi.nn.winograd_nhwc_data_pack, data, a.padding,
                                       tile_size))
    product = bb.emit(bb.call_te(topi.nn.batch_matmul, packed, transformed, None,
                                 a.out_dtype, False, False,
                                 primfunc_name_hint="winograd_batch_matmul"))
    out_shape = [d.value for d in call.struct_info.dims]
    return _call_te_fused_as(bb, OpPatternKind.OUT_EWISE_FUSABLE, "winograd_inverse",
                             topi.nn.winograd_nhwc_inverse, product, out_shape, tile_size)


def _call_te_fused_as(bb, pattern: OpPatternKind, name: str, te_func, *args):
    """``bb.call_te`` with the PrimFunc's fusion kind given, not derived from its blocks
    (AnnotateTIROpPattern keeps an ``op_pattern`` already set)."""
    prim_func, relax_args, out_sinfo = call_te_parts(te_func, args, {})
    gvar = bb.add_func(prim_func.with_attr("op_pattern", int(pattern)), name)
    return call_tir(gvar, Tuple(relax_args), out_sinfo)


# A grouped convolution with at most this many groups (not a depthwise one) computes its
# groups as an output axis, each group's channels padded to whole vectors, and a kernel
# after it (into which FuseOps puts the elementwise consumers) joins the groups' real
# channels (``topi.nn.group_conv2d_nchw_by_group``): each group is an ordinary
# convolution with output channels in the vector lanes, where in one grouped kernel of
# NCHW output a vector of channels may straddle two groups and the schedule falls back
# to width vectors (ShuffleNet's 1x1 layer of 272 channels in 4 groups: 3.7 ms as one
# such kernel, 0.3 ms by group on a 2-core Zen host). One kernel for all groups, rather
# than one per group joined by a concat of four inputs, ran ShuffleNet from the onnx
# wheel 3.01 -> 2.83 ms (2-core Zen 4, onnxruntime 2.94 in the same run).
MAX_GROUPS_AS_AXIS = 8
# A group's constant weight gets zero rows up to a multiple of this many output channels
# (a vector of 8 floats), whose outputs ungroup_channels skips: with 34 channels the
# last channel vector of the schedule is partial, and its predicated loop ran 30x slower
# than the padded group's 40 channels.
GROUP_CHANNEL_MULTIPLE = 8


def _groups_as_axis(call) -> bool:
    groups = call.attrs.groups
    dims = call.args[1].struct_info.dims
    # One input channel per group is depthwise, which stays one kernel.
    return (1 < groups <= MAX_GROUPS_AS_AXIS and all(isinstance(d, IntImm) for d in dims)
            and dims[1].value > 1)


def _conv2d_by_group(bb, call):
    """``ungroup_channels(group_conv2d_nchw_by_group(data, weight by group))``."""
    data, weight = call.args
    a = call.attrs
    per_group = weight.struct_info.dims[0].value // a.groups
    grouped = bb.emit(bb.call_te(topi.nn.group_conv2d_nchw_by_group, data,
                                 _weight_by_group(bb, weight, a.groups, per_group),
                                 a.strides, a.padding, a.dilation, a.out_dtype,
                                 primfunc_name_hint="group_conv2d"))
    return bb.call_te(topi.nn.ungroup_channels, grouped, per_group,
                      primfunc_name_hint="ungroup_channels")


def _weight_by_group(bb, weight, groups: int, per_group: int):
    """``weight`` as (groups, per_group, in / groups, kh, kw); a constant's groups are
    padded with zero rows to a multiple of ``GROUP_CHANNEL_MULTIPLE``."""
    shape = [d.value for d in weight.struct_info.dims]
    if not isinstance(weight, Constant):
        return bb.emit(bb.call_te(topi.reshape, weight, [groups, per_group, *shape[1:]],
                                  primfunc_name_hint="reshape"))
    rows = weight.data.numpy().reshape(groups, per_group, *shape[1:])
    missing = -per_group % GROUP_CHANNEL_MULTIPLE
    return Constant(np.concatenate(
        [rows, np.zeros((groups, missing, *shape[1:]), rows.dtype)], axis=1))


register_op("relax.nn.conv2d", _conv2d_infer, "out_ewise_fusable", _conv2d_legalize)


CONV2D_LAYOUTS = (("NCHW", "OIHW"), ("NHWC", "HWIO"))


def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups: int = 1,
           data_layout: str = "NCHW", kernel_layout: str = "OIHW", out_dtype=None):
    """2-D convolution: NCHW data with an OIHW weight, or NHWC data with an HWIO weight
    (then without groups)."""
    if (data_layout, kernel_layout) not in CONV2D_LAYOUTS:
        raise IRError(f"relax.nn.conv2d: supported layouts are NCHW/OIHW and NHWC/HWIO, "
                      f"found {data_layout}/{kernel_layout}")
    if data_layout == "NHWC" and int(groups) != 1:
        raise IRError(f"relax.nn.conv2d: NHWC takes groups=1, found groups={groups}")
    attrs = {"strides": _pair(strides, "strides"), "padding": _padding(padding),
             "dilation": _pair(dilation, "dilation"), "groups": int(groups),
             "out_dtype": str(out_dtype) if out_dtype else None}
    if data_layout != "NCHW":
        attrs.update(data_layout=data_layout, kernel_layout=kernel_layout)
    return make_call("relax.nn.conv2d", (data, weight), attrs)


# -- pooling -------------------------------------------------------------------------------

def _pool_infer(call):
    check_arity(call, 1)
    data = _nchw(call, 0, "data")
    layout = _layout(call, "layout")
    out_h, out_w = _spatial(call, data, call.attrs.pool_size, layout)
    if layout == "NHWC":
        return TensorStructInfo([data.dims[0], out_h, out_w, data.dims[3]], data.dtype)
    return TensorStructInfo([data.dims[0], data.dims[1], out_h, out_w], data.dtype)


def _define_pool(kind: str):
    op_name = f"relax.nn.{kind}_pool2d"

    def legalize(bb, call):
        a = call.attrs
        return bb.call_te(topi.nn.pool2d, call.args[0], a.pool_size, a.strides, a.dilation,
                          a.padding, kind, a.ceil_mode, _layout(call, "layout"),
                          a.count_include_pad,
                          primfunc_name_hint=f"{kind}_pool2d")

    register_op(op_name, _pool_infer, "out_ewise_fusable", legalize)

    def user_function(data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0),
                      dilation=(1, 1), ceil_mode: bool = False,
                      count_include_pad: bool = False, layout: str = "NCHW"):
        if layout not in _DATA_AXES:
            raise IRError(f"{op_name}: supported layouts are NCHW and NHWC, found {layout}")
        attrs = {"pool_size": _pair(pool_size, "pool_size"), "strides": _pair(strides, "strides"),
                 "padding": _padding(padding), "dilation": _pair(dilation, "dilation"),
                 "ceil_mode": bool(ceil_mode), "count_include_pad": bool(count_include_pad)}
        if layout != "NCHW":
            attrs["layout"] = layout
        return make_call(op_name, (data,), attrs)

    user_function.__name__ = user_function.__qualname__ = f"{kind}_pool2d"
    user_function.__doc__ = f"2-D {kind} pooling over NCHW (or NHWC) data."
    return user_function


max_pool2d = _define_pool("max")
avg_pool2d = _define_pool("avg")


def _adaptive_infer(call):
    data = _nchw(call, 0, "data")
    size = call.attrs.output_size
    if size is not None and tuple(size) != (1, 1):
        raise IRError(f"relax.nn.adaptive_avg_pool2d: output_size (1, 1) is supported, "
                      f"found {tuple(size)}")
    one = IntImm("int64", 1)
    if _layout(call, "layout") == "NHWC":
        return TensorStructInfo([data.dims[0], one, one, data.dims[3]], data.dtype)
    return TensorStructInfo([data.dims[0], data.dims[1], one, one], data.dtype)


register_op("relax.nn.adaptive_avg_pool2d", _adaptive_infer, "comm_reduce",
            lambda bb, call: bb.call_te(topi.nn.global_avg_pool2d, call.args[0],
                                        _layout(call, "layout"),
                                        primfunc_name_hint="adaptive_avg_pool2d"))


def adaptive_avg_pool2d(data, output_size=None, layout: str = "NCHW"):
    """Average each channel to ``output_size`` (only ``(1, 1)``, global pooling)."""
    if layout not in _DATA_AXES:
        raise IRError(f"relax.nn.adaptive_avg_pool2d: supported layouts are NCHW and NHWC, "
                      f"found {layout}")
    size = None if output_size is None else _pair(output_size, "output_size")
    attrs = {"output_size": size}
    if layout != "NCHW":
        attrs["layout"] = layout
    return make_call("relax.nn.adaptive_avg_pool2d", (data,), attrs)


# -- softmax -------------------------------------------------------------------------------

def _softmax_infer(call):
    check_arity(call, 1)
    x = tensor_arg(call, 0, "x")
    if x.dtype and not x.dtype.startswith("float"):
        raise IRError(f"{call.op.name}: expects a floating-point tensor, found {x.dtype}")
    normalize_axis(call.op.name, call.attrs.axis, x.ndim)
    return x


for _name, _func in (("softmax", topi.nn.softmax), ("log_softmax", topi.nn.log_softmax)):
    register_op(f"relax.nn.{_name}", _softmax_infer, "opaque",
                lambda bb, call, f=_func, n=_name: bb.call_te(f, call.args[0], call.attrs.axis,
                                                              primfunc_name_hint=n))


def softmax(x, axis: int = -1):
    """``exp(x) / sum(exp(x))`` along ``axis``."""
    return make_call("relax.nn.softmax", (x,), {"axis": int(axis)})


def log_softmax(x, axis: int = -1):
    """``log(softmax(x))`` computed stably along ``axis``."""
    return make_call("relax.nn.log_softmax", (x,), {"axis": int(axis)})


# -- normalization and dropout -------------------------------------------------------------

def _batch_norm_infer(call):
    check_arity(call, 5)
    data = tensor_arg(call, 0, "data")
    normalize_axis(call.op.name, call.attrs.axis, data.ndim)
    for k, what in enumerate(("gamma", "beta", "moving_mean", "moving_var"), start=1):
        param = tensor_arg(call, k, what)
        if param.ndim != 1:
            raise IRError(f"relax.nn.batch_norm: {what} must be 1-D, found ndim={param.ndim}")
    return TupleStructInfo([data, tensor_arg(call, 3), tensor_arg(call, 4)])


def _batch_norm_legalize(bb, call):
    a = call.attrs

    def normalized(*tensors):
        return topi.nn.batch_norm(*tensors, axis=a.axis, epsilon=a.epsilon, center=a.center,
                                  scale=a.scale)[0]

    out = bb.call_te(normalized, *call.args, primfunc_name_hint="batch_norm")
    # In inference the running statistics pass through: no kernel computes them.
    return Tuple([out, call.args[3], call.args[4]])


register_op("relax.nn.batch_norm", _batch_norm_infer, "out_ewise_fusable",
            _batch_norm_legalize)


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis: int = 1,
               epsilon: float = 1e-5, center: bool = True, scale: bool = True):
    """Inference batch norm; a tuple ``(out, moving_mean, moving_var)`` as in TVM."""
    attrs = {"axis": int(axis), "epsilon": float(epsilon), "center": bool(center),
             "scale": bool(scale)}
    return make_call("relax.nn.batch_norm", (data, gamma, beta, moving_mean, moving_var), attrs)


def _layer_norm_infer(call):
    check_arity(call, 3)
    data = tensor_arg(call, 0, "data")
    for a in call.attrs.axes:
        normalize_axis(call.op.name, a, data.ndim)
    tensor_arg(call, 1, "gamma")
    tensor_arg(call, 2, "beta")
    return data


register_op("relax.nn.layer_norm", _layer_norm_infer, "opaque",
            lambda bb, call: bb.call_te(topi.nn.layer_norm, *call.args, call.attrs.axes,
                                        call.attrs.epsilon, primfunc_name_hint="layer_norm"))


def layer_norm(data, gamma, beta, axes, epsilon: float = 1e-5):
    """Normalize over ``axes``, then scale by ``gamma`` and shift by ``beta``."""
    axes = tuple(int(a) for a in (axes if isinstance(axes, (list, tuple)) else [axes]))
    return make_call("relax.nn.layer_norm", (data, gamma, beta),
                     {"axes": axes, "epsilon": float(epsilon)})


def _dropout_infer(call):
    x = tensor_arg(call, 0, "x")
    return TupleStructInfo([x, x])


def _dropout_te(x):
    ones = te.compute(x.shape, lambda *i: const(1, x.dtype), name="T_dropout_mask")
    return te.compute(x.shape, lambda *i: x(*i), name="T_dropout"), ones


register_op("relax.nn.dropout", _dropout_infer, "injective",
            lambda bb, call: bb.call_te(_dropout_te, call.args[0], primfunc_name_hint="dropout"))


def dropout(data, rate: float = 0.5):
    """``(output, mask)``; at inference the output is the input and the mask is ones."""
    return make_call("relax.nn.dropout", (data,), {"rate": float(rate)})


def linear(data, weight, bias=None, out_dtype=None):
    """``data @ weight.T + bias`` (weight is (out_features, in_features)), as composed ops."""
    # Composed as in TVM; FuseTransposeMatmul later reads the weight where it lies.
    out = matmul(data, permute_dims(weight), out_dtype=out_dtype)
    return add(out, bias) if bias is not None else out


def _dense_infer(call):
    check_arity(call, 2)
    data, weight = tensor_arg(call, 0, "data"), tensor_arg(call, 1, "weight")
    if weight.ndim not in (-1, 2) or data.ndim in (0, 1):
        raise IRError(f"relax.nn.dense: expects data (..., in_features) and a 2-D weight "
                      f"(out_features, in_features), found {_describe_dims(data)} and "
                      f"{_describe_dims(weight)}")
    if data.dtype and weight.dtype and data.dtype != weight.dtype:
        raise IRError(f"relax.nn.dense: data and weight have different dtypes, "
                      f"{data.dtype} and {weight.dtype}")
    dtype = call.attrs.out_dtype or data.dtype
    if data.dims is None or weight.dims is None:
        return TensorStructInfo(None, dtype, data.ndim)
    k_data, k_weight = data.dims[-1], weight.dims[1]
    if isinstance(k_data, IntImm) and isinstance(k_weight, IntImm) \
            and k_data.value != k_weight.value:
        raise IRError(f"relax.nn.dense: data {shape_text(data.dims)} has {k_data.value} input "
                      f"features, weight {shape_text(weight.dims)} has {k_weight.value}")
    return TensorStructInfo(data.dims[:-1] + (weight.dims[0],), dtype)


def _describe_dims(sinfo: TensorStructInfo) -> str:
    return shape_text(sinfo.dims) if sinfo.dims is not None else f"a {sinfo.ndim}-D tensor"


# ``data @ weight.T`` in one reduction block (T_matmul_NT), as TVM's dense legalizes.
register_op("relax.nn.dense", _dense_infer, "out_ewise_fusable",
            lambda bb, call: bb.call_te(topi.nn.dense, call.args[0], call.args[1], None,
                                        call.attrs.out_dtype, primfunc_name_hint="dense"))


def dense(data, weight, out_dtype=None):
    """``data @ weight.T`` with ``weight`` of shape (out_features, in_features): the dense
    op of the 2022 MLC course (``relax.op.nn.dense``); today's spelling is ``linear``."""
    return make_call("relax.nn.dense", (data, weight),
                     {"out_dtype": str(out_dtype) if out_dtype else None})


del _name, _func


from .activation import leakyrelu, silu  # noqa: E402,F401 -- relax.op.nn.* as in TVM
from .spatial import conv2d_transpose, lrn, pad  # noqa: E402,F401
