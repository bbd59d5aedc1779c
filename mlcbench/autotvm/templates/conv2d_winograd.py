"""Template of the Winograd NCHW convolution for x86 CPUs: ``conv2d_nchw_winograd.x86``.

The compute is :func:`~mlcbench.topi.nn.conv2d_winograd_nchw` (3x3 kernel, stride 1,
dilation 1). The knobs pick the tile size (F(4x4, 3x3) or F(2x2, 3x3)) and tile the
batched product ``bgemm[eps, nu] = kernel_pack[eps, nu] @ data_pack[eps, nu]``: its
output channels (``tile_co``, unrolled rows of the register tile), its tiles
(``tile_p``, the vector; the tile count is rounded up to whole vectors) and its input
channels (``tile_rc``); the transforms unroll
their ``alpha x alpha`` positions so only the non-zero matrix entries are computed. The
weight's transform is one loop nest at the head of the kernel, which
``relax.transform.SplitWeightPacking`` moves to build time when the weight is a constant.

It is the template older TVM chose with ``template_key="winograd"``: ::

    task = autotvm.task.create("conv2d_nchw.x86", args, "llvm", None, "winograd")

``create`` gives the task of this template for a convolution it can compute. Its
tensors are written as TVM 0.6's workloads wrote them, the shape followed by the dtype
(``(1, 64, 56, 56, "float32")``), the form of the era of template keys: the tutorials of
that era read the input channel count as ``task.workload[1][1]``.
"""
from __future__ import annotations

from ... import te, topi
from ...ir.errors import InvalidValueError, TuningError
from ...topi.nn.conv2d import _pair
from ..task import get_config, template
from ..task.task import register_template_key
from .workload import placeholder_of

NAME = "conv2d_nchw_winograd.x86"
DIRECT = "conv2d_nchw.x86"
TILE_SIZES = [4, 2]                     # the first is the fallback's
VECTOR_TILES = [8, 16, 4, 32]


def shape_dtype_arg(tensor_arg) -> tuple:
    """``("TENSOR", shape, dtype)`` as TVM 0.6 wrote a tensor: ``shape + (dtype,)``."""
    if isinstance(tensor_arg, tuple) and len(tensor_arg) == 3 and tensor_arg[0] == "TENSOR":
        return tuple(tensor_arg[1]) + (tensor_arg[2],)
    return tensor_arg


def _placeholder(arg, name: str):
    if not (isinstance(arg, tuple) and len(arg) >= 2 and isinstance(arg[-1], str)
            and all(isinstance(d, int) for d in arg[:-1])):
        raise TuningError(f"{NAME}: argument {name!r} must be (*shape, dtype), found {arg!r}")
    return placeholder_of(("TENSOR", arg[:-1], arg[-1]), name, NAME)


def winograd_args(args) -> tuple:
    """The arguments of this template for the direct template's ``args``, or
    InvalidValueError naming what Winograd cannot compute."""
    if len(args) not in (5, 6):
        raise InvalidValueError(f"{NAME}: expected (data, kernel, strides, padding, "
                                f"dilation[, out_dtype]) as {DIRECT} takes them, found "
                                f"{len(args)} arguments")
    data, kernel, strides, padding, dilation = (shape_dtype_arg(a) for a in args[:5])
    data_shape, kernel_shape = data[:-1], kernel[:-1]
    if len(data_shape) != 4 or len(kernel_shape) != 4:
        raise InvalidValueError(f"{NAME}: expected NCHW data and an OIHW kernel, found "
                                f"shapes {data_shape} and {kernel_shape}")
    if kernel_shape[1] != data_shape[1]:
        raise InvalidValueError(f"{NAME}: Winograd computes ungrouped convolutions; the "
                                f"kernel reads {kernel_shape[1]} channels per group of "
                                f"the data's {data_shape[1]} (groups > 1)")
    problems = []
    if tuple(kernel_shape[2:]) != (3, 3):
        problems.append(f"kernel size {kernel_shape[2]}x{kernel_shape[3]} (needs 3x3)")
    if _pair(strides, "stride") != (1, 1):
        problems.append(f"stride {strides} (needs 1)")
    if _pair(dilation, "dilation") != (1, 1):
        problems.append(f"dilation {dilation} (needs 1)")
    if problems:
        raise InvalidValueError(f"{NAME}: Winograd does not apply to this convolution: "
                                + ", ".join(problems))
    return (data, kernel, strides, padding, dilation) + tuple(args[5:])


def _schedule_bgemm(cfg, s, bgemm) -> None:
    """``for b (eps, nu fused; parallel?), coo, po, rco, rci, coi (unrolled), pi (vector)``."""
    eps, nu, co, p = s[bgemm].op.axis
    (rc,) = s[bgemm].op.reduce_axis
    b = s[bgemm].fuse(eps, nu)
    coo, coi = cfg["tile_co"].apply(s, bgemm, co)
    po, pi = s[bgemm].split(p, factor=cfg["tile_p"].val)
    rco, rci = cfg["tile_rc"].apply(s, bgemm, rc)
    s[bgemm].reorder(b, coo, po, rco, rci, coi, pi)
    s[bgemm].unroll(coi)
    s[bgemm].vectorize(pi)
    if cfg["parallel"].val:
        s[bgemm].parallel(b)


def _schedule_transform(s, stage, position: int) -> None:
    """The transform's position loop (the matrix column it computes) innermost and
    unrolled, so the choice among the columns folds away and only the non-zero entries
    of each are computed. Each half of a separable transform is a stage of its own:
    inlined into one another the expressions grow to hundreds of loads and compile
    for tens of seconds."""
    axes = list(s[stage].op.axis)
    s[stage].reorder(*(axes[:position] + axes[position + 1:]), axes[position])
    s[stage].unroll(axes[position])


@template(NAME)
def conv2d_nchw_winograd(data, kernel, strides, padding, dilation, out_dtype="float32"):
    """Winograd NCHW convolution F(m x m, 3x3), m a knob."""
    data, kernel, strides, padding, dilation = winograd_args(
        (data, kernel, strides, padding, dilation))[:5]
    A, W = _placeholder(data, "data"), _placeholder(kernel, "kernel")
    cfg = get_config()
    cfg.define_knob("tile_size", TILE_SIZES)
    out_c, in_c = int(W.shape[0]), int(W.shape[1])
    cfg.define_split("tile_co", out_c, num_outputs=2, max_factor=8)
    cfg.define_knob("tile_p", VECTOR_TILES)
    cfg.define_split("tile_rc", in_c, num_outputs=2, max_factor=16)
    cfg.define_knob("parallel", [1, 0])
    C = topi.nn.conv2d_winograd_nchw(A, W, strides, padding, dilation, out_dtype,
                                     tile_size=cfg["tile_size"].val,
                                     tile_multiple=cfg["tile_p"].val)
    batch, _, out_h, out_w = (int(d) for d in C.shape)
    # The direct convolution's count, as TVM counts it, so GFLOPS compare across templates.
    cfg.add_flop(2 * batch * out_c * out_h * out_w * in_c * 9)
    return _schedule(cfg, C), [A, W, C]


def _schedule(cfg, C):
    s = te.create_schedule(C.op)
    inverse = C.op.input_tensors[0]
    inverse_rows = inverse.op.input_tensors[0]
    bgemm = inverse_rows.op.input_tensors[0]
    kernel_pack, data_pack = bgemm.op.input_tensors
    data_rows = data_pack.op.input_tensors[0]
    kernel_rows = kernel_pack.op.input_tensors[0]
    # The weight's transform in one loop nest that reads only the weight (3 taps keep the
    # inlined expression small): a build with a constant weight runs it once
    # (relax.transform.SplitWeightPacking), not on every call.
    s[kernel_rows].compute_inline()
    eps, nu, co, ci = s[kernel_pack].op.axis
    s[kernel_pack].reorder(co, ci, eps, nu)
    s[kernel_pack].unroll(eps)
    s[kernel_pack].unroll(nu)
    for stage, position in ((data_rows, 0), (data_pack, 1), (inverse_rows, 0), (inverse, 3)):
        _schedule_transform(s, stage, position)
    _schedule_bgemm(cfg, s, bgemm)
    n, co, h, w = s[C].op.axis
    if cfg["parallel"].val:
        s[C].parallel(s[C].fuse(n, co))
    return s


register_template_key(DIRECT, "winograd", NAME, winograd_args)
