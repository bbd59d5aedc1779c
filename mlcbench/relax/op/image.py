"""Image ops, reached as ``relax.op.image.*``: ``resize2d`` (nearest and linear) on NCHW.

>>> image.resize2d(x, (64, 64), method="nearest_neighbor",
...                coordinate_transformation_mode="asymmetric", rounding_method="floor")
"""
from __future__ import annotations

from ... import topi
from ...ir.errors import IRError
from ...tir.expr import IntImm
from ...topi.image.resize import COORDINATE_MODES, METHODS, ROUNDING_MODES
from ..struct_info import TensorStructInfo, shape_text
from .registry import check_arity, make_call, register_op, tensor_arg


def _resize2d_infer(call):
    check_arity(call, 1)
    x = tensor_arg(call, 0, "data")
    if x.dims is None or x.ndim != 4 or not all(isinstance(d, IntImm) for d in x.dims[2:]):
        raise IRError(f"relax.image.resize2d: data must be 4-D NCHW with constant H and W, "
                      f"found {shape_text(x.dims) if x.dims else x.ndim}")
    out_h, out_w = call.attrs.size
    return TensorStructInfo([x.dims[0], x.dims[1], IntImm("int64", out_h),
                             IntImm("int64", out_w)], x.dtype)


register_op("relax.image.resize2d", _resize2d_infer, "injective",
            lambda bb, call: bb.call_te(topi.image.resize2d, call.args[0], call.attrs.size,
                                        call.attrs.scales, call.attrs.method,
                                        call.attrs.coordinate_transformation_mode,
                                        call.attrs.rounding_method,
                                        primfunc_name_hint="resize2d"))


def resize2d(data, size, roi=None, layout: str = "NCHW", method: str = "linear",
             coordinate_transformation_mode: str = "half_pixel",
             rounding_method: str = "round_prefer_floor", scales=None):
    """Resample NCHW ``data`` to ``size = (out_h, out_w)``; ``scales`` (output/input ratios)
    override ``size / input size`` in the coordinate mapping, as ONNX's Resize allows."""
    where = "relax.image.resize2d"
    if layout != "NCHW" or roi is not None:
        raise IRError(f"{where}: supported is layout NCHW without roi, found {layout!r}, "
                      f"roi={roi!r}")
    if method == "nearest":
        method = "nearest_neighbor"
    if method not in METHODS or coordinate_transformation_mode not in COORDINATE_MODES \
            or rounding_method not in ROUNDING_MODES:
        raise IRError(f"{where}: method is one of {METHODS}, coordinate mode one of "
                      f"{COORDINATE_MODES}, rounding one of {ROUNDING_MODES}; found "
                      f"{method!r}, {coordinate_transformation_mode!r}, {rounding_method!r}")
    size = tuple(int(s) for s in (size if isinstance(size, (list, tuple)) else (size, size)))
    if len(size) != 2 or min(size) <= 0:
        raise IRError(f"{where}: size is two positive ints (out_h, out_w), found {size!r}")
    attrs = {"size": size, "method": method,
             "coordinate_transformation_mode": coordinate_transformation_mode,
             "rounding_method": rounding_method,
             "scales": None if scales is None else tuple(float(s) for s in scales)}
    return make_call("relax.image.resize2d", (data,), attrs)
