"""Template of the NCHW direct convolution for x86 CPUs: ``conv2d_nchw.x86``.

The compute is the operator library's :func:`~mlcbench.topi.nn.conv2d_nchw` (a
``pad_temp`` stage when there is padding, then block ``conv2d_nchw``), so stride,
padding and dilation mean what they mean there. The knobs split the output channels
(``tile_f``, unrolled rows of the register tile), the output rows (``tile_y``) and
columns (``tile_x``, the vector), and the input channels (``tile_rc``); the kernel
window runs between the channel tiles, and the outer tiles may run in parallel::

    task = autotvm.task.create("conv2d_nchw.x86", args=(
        ("TENSOR", (32, 1, 8, 8), "float32"), ("TENSOR", (8, 1, 3, 3), "float32"),
        (1, 1), (1, 1, 1, 1), (1, 1), "float32"))
"""
from __future__ import annotations

from ... import te, topi
from ...ir.errors import TuningError
from ..task import get_config, template
from .workload import placeholder_of


def _conv_operands(data, kernel):
    A = placeholder_of(data, "data", "conv2d_nchw.x86")
    W = placeholder_of(kernel, "kernel", "conv2d_nchw.x86")
    if len(A.shape) != 4 or len(W.shape) != 4 or int(A.shape[1]) != int(W.shape[1]):
        raise TuningError(f"conv2d_nchw.x86: expected data (N, C, H, W) and kernel "
                          f"(O, C, KH, KW) with the same C, found {tuple(A.shape)} and "
                          f"{tuple(W.shape)}")
    return A, W


@template("conv2d_nchw.x86")
def conv2d_nchw(data, kernel, strides, padding, dilation, out_dtype="float32"):
    """NCHW convolution, OIHW kernel, register-blocked over (channels, columns)."""
    A, W = _conv_operands(data, kernel)
    C = topi.nn.conv2d_nchw(A, W, strides, padding, dilation, out_dtype=out_dtype)
    batch, out_c, out_h, out_w = (int(d) for d in C.shape)
    in_c, kh, kw = (int(d) for d in W.shape[1:])
    cfg = get_config()
    cfg.define_split("tile_f", out_c, num_outputs=2, max_factor=8)
    cfg.define_split("tile_y", out_h, num_outputs=2, max_factor=8)
    cfg.define_split("tile_x", out_w, num_outputs=2, max_factor=64)
    cfg.define_split("tile_rc", in_c, num_outputs=2, max_factor=16)
    # Listed first, so the fallback config (first candidates) unrolls.
    cfg.define_knob("unroll_f", [1, 0])
    cfg.define_knob("parallel", [0, 1])
    cfg.add_flop(2 * batch * out_c * out_h * out_w * in_c * kh * kw)
    s = te.create_schedule(C.op)
    n, f, y, x = s[C].op.axis
    rc, ry, rx = s[C].op.reduce_axis
    fo, fi = cfg["tile_f"].apply(s, C, f)
    yo, yi = cfg["tile_y"].apply(s, C, y)
    xo, xi = cfg["tile_x"].apply(s, C, x)
    rco, rci = cfg["tile_rc"].apply(s, C, rc)
    # Reductions outside the register tile: yi x fi rows of xi-wide vectors accumulate.
    s[C].reorder(n, fo, yo, xo, rco, ry, rx, rci, yi, fi, xi)
    if cfg["unroll_f"].val:
        s[C].unroll(fi)
    s[C].vectorize(xi)
    if cfg["parallel"].val:
        s[C].parallel(s[C].fuse(n, fo))
    return s, [A, W, C]
