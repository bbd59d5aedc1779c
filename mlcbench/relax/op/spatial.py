"""Ops over spatial layouts, reached as ``relax.op.nn.*``: ``pad``, ``conv2d_transpose``,
``lrn``. Data is NCHW; ``conv2d_transpose`` weights are IOHW as in PyTorch and ONNX."""
from __future__ import annotations

from ... import topi
from ...ir.errors import IRError
from ...tir.expr import IntImm
from ...topi.nn.conv2d_transpose import conv2d_transpose_out_size
from ..struct_info import TensorStructInfo, shape_text
from .registry import check_arity, make_call, normalize_axis, register_op, tensor_arg

PAD_MODES = ("constant", "edge", "reflect")


def _ints(values, count: int, what: str, where: str) -> tuple:
    values = (values,) * count if isinstance(values, int) else tuple(int(v) for v in values)
    if len(values) == 1:
        values = values * count
    if len(values) != count:
        raise IRError(f"{where}: {what} is an int or {count} ints, found {values!r}")
    return values


# -- pad -----------------------------------------------------------------------------------

def _pad_infer(call):
    check_arity(call, 1)
    x = tensor_arg(call, 0, "data")
    widths = call.attrs.pad_width
    if x.ndim >= 0 and len(widths) != 2 * x.ndim:
        raise IRError(f"relax.nn.pad: pad_width needs (before, after) for each of the "
                      f"{x.ndim} axes, found {len(widths)} values")
    if x.dims is None:
        return TensorStructInfo(None, x.dtype, x.ndim)
    dims = []
    for k, d in enumerate(x.dims):
        lo, hi = widths[2 * k], widths[2 * k + 1]
        if isinstance(d, IntImm):
            if d.value + lo + hi < 0:
                raise IRError(f"relax.nn.pad: pads ({lo}, {hi}) remove more than the "
                              f"{d.value} elements of axis {k}")
            dims.append(IntImm("int64", d.value + lo + hi))
        else:
            dims.append(d + (lo + hi))
    return TensorStructInfo(dims, x.dtype)


def _pad_te(data, widths, value, mode):
    before, after = list(widths[0::2]), list(widths[1::2])
    if mode == "constant":
        return topi.nn.pad(data, before, after, value, name="pad")
    return topi.nn.mirror_pad(data, before, after, mode)


register_op("relax.nn.pad", _pad_infer, "injective",
            lambda bb, call: bb.call_te(_pad_te, call.args[0], call.attrs.pad_width,
                                        call.attrs.pad_value, call.attrs.pad_mode,
                                        primfunc_name_hint="pad"))


def pad(data, pad_width, pad_value=0.0, pad_mode: str = "constant"):
    """Pad each axis: ``pad_width`` is ``(before_0, after_0, before_1, after_1, ...)`` (or
    pairs); ``pad_mode`` is constant (``pad_value``), edge or reflect."""
    flat = []
    for item in pad_width:
        flat.extend(item if isinstance(item, (list, tuple)) else [item])
    if pad_mode not in PAD_MODES:
        raise IRError(f"relax.nn.pad: pad_mode is one of {PAD_MODES}, found {pad_mode!r}")
    if pad_mode != "constant" and any(int(w) < 0 for w in flat):
        raise IRError(f"relax.nn.pad: negative widths are allowed only in constant mode, "
                      f"found {flat} with mode {pad_mode!r}")
    return make_call("relax.nn.pad", (data,), {"pad_width": tuple(int(w) for w in flat),
                                               "pad_value": float(pad_value),
                                               "pad_mode": pad_mode})


# -- conv2d_transpose ----------------------------------------------------------------------

def _conv2d_transpose_infer(call):
    check_arity(call, 2)
    data, weight = tensor_arg(call, 0, "data"), tensor_arg(call, 1, "weight")
    for what, s in (("data", data), ("weight", weight)):
        if s.dims is None or s.ndim != 4 or not all(isinstance(d, IntImm) for d in s.dims):
            raise IRError(f"relax.nn.conv2d_transpose: {what} must be 4-D of constant shape, "
                          f"found {shape_text(s.dims) if s.dims else s.ndim}")
    a = call.attrs
    n, c, h, w = (d.value for d in data.dims)
    wi, o, kh, kw = (d.value for d in weight.dims)
    if wi != c or c % a.groups:
        raise IRError(f"relax.nn.conv2d_transpose: weight {shape_text(weight.dims)} (IOHW) "
                      f"expects {wi} input channels, data has {c} (groups={a.groups})")
    top, left, bottom, right = a.padding
    out_h = conv2d_transpose_out_size(h, kh, a.strides[0], a.dilation[0], top, bottom,
                                      a.output_padding[0])
    out_w = conv2d_transpose_out_size(w, kw, a.strides[1], a.dilation[1], left, right,
                                      a.output_padding[1])
    if out_h <= 0 or out_w <= 0:
        raise IRError(f"relax.nn.conv2d_transpose: padding {a.padding} leaves no output")
    return TensorStructInfo([data.dims[0], IntImm("int64", o * a.groups),
                             IntImm("int64", out_h), IntImm("int64", out_w)],
                            a.out_dtype or data.dtype)


def _conv2d_transpose_legalize(bb, call):
    a = call.attrs
    return bb.call_te(topi.nn.conv2d_transpose_nchw, call.args[0], call.args[1], a.strides,
                      a.padding, a.out_dtype, a.output_padding, a.dilation, a.groups,
                      primfunc_name_hint="conv2d_transpose")


register_op("relax.nn.conv2d_transpose", _conv2d_transpose_infer, "out_ewise_fusable",
            _conv2d_transpose_legalize)


def conv2d_transpose(data, weight, strides=(1, 1), padding=(0, 0), output_padding=(0, 0),
                     dilation=(1, 1), groups: int = 1, data_layout: str = "NCHW",
                     kernel_layout: str = "IOHW", out_dtype=None):
    """Transposed convolution; ``weight`` is (in_channels, out_channels / groups, kh, kw)."""
    where = "relax.nn.conv2d_transpose"
    if data_layout != "NCHW" or kernel_layout != "IOHW":
        raise IRError(f"{where}: supported layouts are NCHW/IOHW, found "
                      f"{data_layout}/{kernel_layout}")
    padding = _ints(padding, 2, "padding", where) * 2 if isinstance(padding, int) or \
        len(padding) <= 2 else _ints(padding, 4, "padding", where)
    output_padding = _ints(output_padding, 2, "output_padding", where)
    strides = _ints(strides, 2, "strides", where)
    if any(p >= s for p, s in zip(output_padding, strides)) and output_padding != (0, 0):
        raise IRError(f"{where}: output_padding {output_padding} must be below strides "
                      f"{strides}")
    attrs = {"strides": strides, "padding": padding, "output_padding": output_padding,
             "dilation": _ints(dilation, 2, "dilation", where), "groups": int(groups),
             "out_dtype": str(out_dtype) if out_dtype else None}
    return make_call("relax.nn.conv2d_transpose", (data, weight), attrs)


# -- lrn -----------------------------------------------------------------------------------

def _lrn_infer(call):
    check_arity(call, 1)
    x = tensor_arg(call, 0, "data")
    normalize_axis(call.op.name, call.attrs.axis, x.ndim)
    if call.attrs.size < 1:
        raise IRError(f"relax.nn.lrn: size must be positive, found {call.attrs.size}")
    return x


register_op("relax.nn.lrn", _lrn_infer, "opaque",
            lambda bb, call: bb.call_te(topi.nn.lrn, call.args[0], call.attrs.size,
                                        call.attrs.axis, call.attrs.alpha, call.attrs.beta,
                                        call.attrs.bias, primfunc_name_hint="lrn"))


def lrn(data, size: int, axis: int = 1, alpha: float = 1e-4, beta: float = 0.75,
        bias: float = 1.0):
    """Local response normalization across ``size`` neighbouring channels:
    ``x / (bias + alpha / size * sum(x_c ** 2)) ** beta``."""
    return make_call("relax.nn.lrn", (data,), {"size": int(size), "axis": int(axis),
                                              "alpha": float(alpha), "beta": float(beta),
                                              "bias": float(bias)})
