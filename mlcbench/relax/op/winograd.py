"""When ``relax.nn.conv2d`` is legalized to a Winograd convolution, and how.

A 3x3, stride 1, dilation 1, ungrouped float32 NCHW convolution whose weight is a
constant becomes :func:`~mlcbench.topi.nn.conv2d_winograd_nchw` (F(4x4, 3x3)); the
weight's transform is a loop nest reading only the weight, which PrepackWeights runs
once at build time, so no kernel transforms the weight per call.

Rule (:func:`winograd_tile_size`), from ``benchmarks/winograd.py`` on one Zen 1 thread
against the direct convolution's default schedule: Winograd pays where the image is
large enough for its tiles and there are enough channels for the batched products to
amortize the transforms. 128x28x28: 2.0x faster than onnxruntime's direct convolution;
64x56x56: 1.24x; 256x14x14: 1.04x (about even with the direct schedule); so Winograd
is used where ``out_h, out_w >= 14`` and ``16 <= in_c <= 256``; 7x7 images (a 4x4 tile
would be half padding) and wider layers keep the direct convolution.

Turn it off with the PassContext config ``relax.conv2d.winograd`` (default True)::

    with mlcbench.ir.transform.PassContext(config={"relax.conv2d.winograd": False}):
        ex = relax.build(mod, "llvm")
"""
from __future__ import annotations

from ...ir.transform import PassContext
from ...tir.expr import IntImm
from ..expr import Constant

WINOGRAD_CONFIG = "relax.conv2d.winograd"
MIN_OUT_SIZE = 14
MIN_CHANNELS, MAX_CHANNELS = 16, 256
TILE_SIZE = 4
# The batched product's tile count is rounded up to whole vectors of this many tiles.
TILE_MULTIPLE = 8


def _static(dims) -> tuple | None:
    if not all(isinstance(d, IntImm) for d in dims):
        return None
    return tuple(d.value for d in dims)


def winograd_tile_size(call) -> int | None:
    """The Winograd tile size for this conv2d call, or None for the direct convolution."""
    if not PassContext.current().config.get(WINOGRAD_CONFIG, True):
        return None
    data, weight = call.args
    a = call.attrs
    if not isinstance(weight, Constant) or a.groups != 1:
        return None
    if tuple(a.strides) != (1, 1) or tuple(a.dilation) != (1, 1):
        return None
    if data.struct_info.dtype != "float32" or weight.struct_info.dtype != "float32" or \
            (a.out_dtype or "float32") != "float32":
        return None
    wshape, out = _static(weight.struct_info.dims), _static(call.struct_info.dims)
    if wshape is None or out is None or wshape[2:] != (3, 3):
        return None
    if min(out[2:]) < MIN_OUT_SIZE or not MIN_CHANNELS <= wshape[1] <= MAX_CHANNELS:
        return None
    return TILE_SIZE
