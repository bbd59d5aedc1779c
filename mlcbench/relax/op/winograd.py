"""When ``relax.nn.conv2d`` is legalized to a Winograd convolution, and how.

A 3x3, stride 1, dilation 1, ungrouped float32 NCHW convolution whose weight is a
constant becomes :func:`~mlcbench.topi.nn.conv2d_winograd_nchw` (F(4x4, 3x3)); the
weight's transform is a loop nest reading only the weight, which PrepackWeights runs
once at build time, so no kernel transforms the weight per call.

Rule (:func:`winograd_tile_size`), from each layer shape built alone (conv2d + relu,
constant weight) on one Zen 1 thread, direct default schedule -> Winograd, in ms
(in_c x out_c at size)::

    64x64 @56  10.5 -> 6.8     128x128 @28  10.5 -> 7.7    256x256 @14  10.5 -> 7.8
    512x512 @7  13.8 -> 7.5    512x512 @14  44.3 -> 17.8   512x512 @28  195 -> 62
    256x256 @56  172 -> 45     128x128 @112  128 -> 100    64x192 @56   19.0 -> 10.1
    96x128 @28  4.6 -> 2.7     32x64 @14   0.27 -> 0.16    128x32 @14  0.45 -> 0.29
    128x32 @56  6.5 -> 9.2     128x32 @28  1.6 -> 2.5      128x32 @7   0.12 -> 0.13
    160x320 @7  1.2 -> 2.0

Winograd pays with at least 64 output channels (fewer leave the batched products too
small to amortize the transforms: DenseNet's 128 -> 32 layers lose) and an output of
at least 14x14; a 7x7 output (a 4x4 tile is then more than half padding) only with at
least 256 input channels.

It is off by default and turned on with the PassContext config ``relax.conv2d.winograd``::

    with mlcbench.ir.transform.PassContext(config={"relax.conv2d.winograd": True}):
        ex = relax.build(mod, "llvm")

Off by default because each Winograd kernel takes seconds to build: ResNet-50 from the
onnx wheel builds in 14 s cold without it and 33 s with it (2-core Zen 1, busy), for
1.09x onnxruntime's latency instead of 1.17x; VGG19 runs at 0.53x onnxruntime's time
with it instead of 1.17x (``benchmarks/models.py``, one thread, CPU time).
"""
from __future__ import annotations

from ...ir.transform import PassContext
from ...tir.expr import IntImm
from ..expr import Constant

WINOGRAD_CONFIG = "relax.conv2d.winograd"
MIN_OUT_CHANNELS = 64
MIN_OUT_SIZE = 14
# Below MIN_OUT_SIZE (down to 7) only this many input channels pay for the transforms.
SMALL_OUT_SIZE, SMALL_OUT_IN_CHANNELS = 7, 256
TILE_SIZE = 4
# The batched product's tile count is rounded up to whole vectors of this many tiles.
TILE_MULTIPLE = 8


def _static(dims) -> tuple | None:
    if not all(isinstance(d, IntImm) for d in dims):
        return None
    return tuple(d.value for d in dims)


def winograd_tile_size(call) -> int | None:
    """The Winograd tile size for this conv2d call, or None for the direct convolution."""
    if not PassContext.current().config.get(WINOGRAD_CONFIG, False):
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
    size = min(out[2:])
    if wshape[0] < MIN_OUT_CHANNELS or size < SMALL_OUT_SIZE:
        return None
    if size < MIN_OUT_SIZE and wshape[1] < SMALL_OUT_IN_CHANNELS:
        return None
    return TILE_SIZE
