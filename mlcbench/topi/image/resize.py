"""``resize2d``: nearest and (bi)linear resampling of NCHW images, with ONNX's coordinate
transformations (``half_pixel``, ``align_corners``, ``asymmetric``, ``pytorch_half_pixel``,
``tf_half_pixel_for_nn``) and nearest rounding modes.

An output pixel ``x`` maps to the input coordinate ``x_in = transform(x)``; nearest reads
the rounded ``x_in``, linear blends its two neighbours; both clamp to the image.
"""
from __future__ import annotations

from ...ir.errors import IRError
from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir import op as tir_op
from ...tir.expr import cast, const
from ..utils import const_int

COORDINATE_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                    "tf_half_pixel_for_nn")
ROUNDING_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
METHODS = ("nearest_neighbor", "linear")


def _source_coordinate(x, in_size: int, out_size: int, scale: float, mode: str):
    """The input coordinate (float32) of output index ``x`` along one axis."""
    xf = cast("float32", x)
    half = const(0.5, "float32")
    if mode == "align_corners":
        ratio = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        return xf * const(ratio, "float32")
    if mode == "asymmetric":
        return xf / const(scale, "float32")
    if mode == "tf_half_pixel_for_nn":
        return (xf + half) / const(scale, "float32")
    # PyTorch maps a one-pixel output to coordinate 0, not to the half-pixel centre.
    if mode == "pytorch_half_pixel" and out_size <= 1:
        return const(0.0, "float32")
    return (xf + half) / const(scale, "float32") - half


def _nearest_index(coord, in_size: int, rounding: str):
    half = const(0.5, "float32")
    if rounding == "round_prefer_floor":
        # Halfway cases round down: ceil(x - 0.5) equals round(x) except at .5.
        rounded = tir_op.ceil(coord - half)
    elif rounding == "round_prefer_ceil":
        rounded = tir_op.floor(coord + half)
    elif rounding == "floor":
        rounded = tir_op.floor(coord)
    else:
        rounded = tir_op.ceil(coord)
    return _clamp(cast("int64", rounded), in_size)


def _clamp(index, in_size: int):
    return tir_op.min(tir_op.max(index, const(0, "int64")), const(in_size - 1, "int64"))


def _linear_taps(coord, in_size: int):
    """``(i0, i1, w1)``: the two neighbours of ``coord`` and the weight of ``i1``."""
    # Clamp before flooring so coordinates past the border blend with weight on the edge pixel.
    coord = tir_op.min(tir_op.max(coord, const(0.0, "float32")),
                       const(float(in_size - 1), "float32"))
    low = tir_op.floor(coord)
    i0 = _clamp(cast("int64", low), in_size)
    return i0, _clamp(i0 + 1, in_size), coord - low


def resize2d(data: Tensor, size, scales=None, method: str = "linear",
             coordinate_transformation_mode: str = "half_pixel",
             rounding_method: str = "round_prefer_floor") -> Tensor:
    """Resample NCHW ``data`` to spatial ``size = (out_h, out_w)``. ``scales = (sh, sw)``
    are the output/input ratios the coordinates use (``out / in`` when None)."""
    if method not in METHODS or coordinate_transformation_mode not in COORDINATE_MODES \
            or rounding_method not in ROUNDING_MODES:
        raise IRError(f"resize2d: method is one of {METHODS}, coordinate mode one of "
                      f"{COORDINATE_MODES}, rounding one of {ROUNDING_MODES}; found "
                      f"{method!r}, {coordinate_transformation_mode!r}, {rounding_method!r}")
    n, c, in_h, in_w = data.shape
    in_h, in_w = const_int(in_h), const_int(in_w)
    out_h, out_w = (int(s) for s in size)
    scales = scales or (out_h / in_h, out_w / in_w)
    mode = coordinate_transformation_mode

    def fcompute(b, ch, y, x):
        cy = _source_coordinate(y, in_h, out_h, scales[0], mode)
        cx = _source_coordinate(x, in_w, out_w, scales[1], mode)
        if method == "nearest_neighbor":
            return data[b, ch, _nearest_index(cy, in_h, rounding_method),
                        _nearest_index(cx, in_w, rounding_method)]
        (y0, y1, wy), (x0, x1, wx) = _linear_taps(cy, in_h), _linear_taps(cx, in_w)

        def at(i, j):
            # Blend in float32 whatever the element type, then cast back once.
            return cast("float32", data[b, ch, i, j])
        top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * wx
        bottom = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * wx
        return cast(data.dtype, top + (bottom - top) * wy)
    return compute((n, c, out_h, out_w), fcompute, name="resize", tag="injective")
