"""When ``relax.nn.conv2d`` is legalized to a Winograd convolution, and how.

**NHWC** (the layout ConvertLayout gives convolutions on CPU targets; on by default for
CPU targets).
A 3x3, stride 1, dilation 1, ungrouped float32 convolution with a constant HWIO weight
becomes three kernels (:mod:`mlcbench.topi.nn.winograd_nhwc`, F(4x4, 3x3))::

    packed  = winograd_data_pack(x)                  # B^T d B per 4x4 output tile
    product = batch_matmul(packed, U)                # 36 products (tiles x in_c x out_c)
    y       = winograd_inverse(product)              # A^T m A, then bias, residual, relu

``U = G g G^T`` is computed with numpy when the convolution is legalized (float64,
rounded once), so it is a constant of the built model and PrepackWeights packs it for
the matmul schedule, which runs the products at the machine's peak. The input transform
is marked opaque (nothing fuses into it: the relu or concat before it keeps its own
kernel); the output transform fuses like a convolution (its elementwise consumers go
into it). :func:`winograd_nhwc_tile_size` takes a convolution when it has at least 32
output channels, at least ``NHWC_MIN_MACS`` multiply-adds and a transformed weight that
streams from memory in at most half the direct convolution's time
(``NHWC_FLOPS_PER_BYTE``). Each layer with its residual add and relu, built alone on a
2-core Zen 4 (AVX-512), direct -> Winograd, us (in_c x out_c at size)::

    64x64 @56   1031 -> 348      128x128 @28  1040 -> 310     256x256 @14  1033 -> 407
    64x192 @56  3163 -> 1003     96x128 @28    771 -> 240     512x512 @14  4109 -> 3003
    128x32 @56  1046 -> 416      128x32 @28    276 -> 113

Timed alone, each of the three kernels may wait for the second thread to wake (tens of
microseconds on this host), which a model, running kernels back to back, mostly does
not. Whole models from the onnx wheel, both builds and onnxruntime in one process
(interleaved rounds), ms: ResNet-50 38.78 -> 33.20 (onnxruntime 38.21), VGG19 197.6 ->
95.4 (184.9), DenseNet-121 30.97 -> 25.53 (34.76), Inception v1 14.69 -> 11.05 (24.08),
Inception v2 20.19 -> 14.81 (19.31), SqueezeNet 3.70 -> 3.08 (3.51), ZFNet-512 28.97 ->
27.56 (39.31); AlexNet and ShuffleNet, whose grouped convolutions keep them in NCHW,
unchanged. ``PassContext(config={"relax.conv2d.winograd": False})`` keeps every
convolution direct.

**NCHW**: a 3x3, stride 1, dilation 1, ungrouped float32 NCHW convolution whose weight
is a constant becomes :func:`~mlcbench.topi.nn.conv2d_winograd_nchw` (F(4x4, 3x3)); the
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

In NCHW it is off by default and turned on with the PassContext config
``relax.conv2d.winograd``::

    with mlcbench.ir.transform.PassContext(config={"relax.conv2d.winograd": True}):
        ex = relax.build(mod, "llvm")

Off by default there because each of its kernels takes seconds to build: ResNet-50
from the onnx wheel, kept NCHW, builds in 14 s cold without it and 33 s with it (2-core
Zen 1, busy), for 1.09x onnxruntime's latency instead of 1.17x; VGG19 runs at 0.53x
onnxruntime's time with it instead of 1.17x (``benchmarks/models.py``, one thread, CPU
time). On CPU targets the models above are converted to NHWC first, so the NHWC rule
applies to them.
"""
from __future__ import annotations

from ...ir.transform import PassContext
from ...target import Target
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


def _eligible_shapes(call, default: bool, window: slice) -> tuple | None:
    """``(weight shape, output shape)`` of a conv2d call Winograd can compute (the config
    not off, a constant float32 weight whose ``window`` axes are 3x3, stride and dilation
    1, no groups, static shapes), else None."""
    if not PassContext.current().config.get(WINOGRAD_CONFIG, default):
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
    if wshape is None or out is None or wshape[window] != (3, 3):
        return None
    return wshape, out


def winograd_tile_size(call) -> int | None:
    """The Winograd tile size for this NCHW conv2d call, or None for the direct one."""
    shapes = _eligible_shapes(call, default=False, window=slice(2, 4))       # OIHW
    if shapes is None:
        return None
    wshape, out = shapes
    size = min(out[2:])
    if wshape[0] < MIN_OUT_CHANNELS or size < SMALL_OUT_SIZE:
        return None
    if size < MIN_OUT_SIZE and wshape[1] < SMALL_OUT_IN_CHANNELS:
        return None
    return TILE_SIZE


# NHWC (channels-last convolutions, see ConvertLayout): on unless the config is False.
NHWC_TILE_SIZE = 4
NHWC_MIN_OUT_CHANNELS = 32
# Multiply-adds of the direct convolution below which its three kernels save nothing:
# DenseNet's 128 -> 32 layer at 7x7 (1.8M) ran 38 us direct and 55 by Winograd built
# alone; at 14x14 (7.2M) 76-100 against 54-134 over runs, and DenseNet-121 with those
# layers in Winograd too (threshold 4M or 1M) ran as fast as without (24.4-24.8 ms).
NHWC_MIN_MACS = 16 * 10 ** 6
# The transformed weight is alpha^2 / 9 = 4x the weight, read from memory on every call
# of a model whose weights outgrow the caches: it must stream in at most half the time
# the direct convolution computes. Memory speed as the FMA peak's float operations per
# byte: 235 GFLOPS over 35.9 GB/s on a 2-core Zen 4. There ResNet-50's 512 x 512 layer
# at 7x7 (37.7 MB transformed, 231 MFLOP direct) ran no faster by Winograd (the model
# 38.16 -> 37.56 ms, noise), VGG19's 512-channel layers at 28x28 and 14x14 (same weight,
# 4x and 16x the work) took the model from 144.4 to 108.9 ms.
NHWC_FLOPS_PER_BYTE = 6.5


def winograd_nhwc_tile_size(call) -> int | None:
    """The Winograd tile size for this NHWC conv2d call, or None for the direct one. On
    by default for CPU targets only: the transforms' schedule rule is a CPU rule."""
    target = Target.current() or Target("llvm")
    shapes = _eligible_shapes(call, default=target.is_cpu, window=slice(0, 2))   # HWIO
    if shapes is None:
        return None
    wshape, out = shapes
    alpha = NHWC_TILE_SIZE + 2
    macs = out[0] * out[1] * out[2] * out[3] * 9 * wshape[2]
    streamed = alpha * alpha * wshape[2] * wshape[3] * 4      # bytes of the product's weight
    if wshape[3] < NHWC_MIN_OUT_CHANNELS or macs < NHWC_MIN_MACS or \
            streamed * NHWC_FLOPS_PER_BYTE > macs:              # 2 * macs flops, half of it
        return None
    return NHWC_TILE_SIZE
