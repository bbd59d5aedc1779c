"""Which template covers a kernel: the workload of its anchor block.

A kernel of a Relax model is a PrimFunc after FuseOps/FuseTIR: the anchor (one matmul
or convolution block, found as the default schedules find it, see
:mod:`mlcbench.dlight.cpu`) with injective epilogue blocks (bias, relu) after it::

    fused_matmul_add_relu(x, permute_dims, fc1_bias, compute):
        T_matmul_NN  (x, permute_dims) -> T_matmul_NN_intermediate   <- anchor
        T_add        -> T_add_intermediate
        compute      -> compute

The anchor's workload is read from the IR -- shapes and dtypes of its operands, and for
a convolution the stride and dilation from its window index (``yy * 2 + ry * 1``) and
the padding from the ``pad_temp`` block that feeds it -- so a kernel matches the task
:func:`~mlcbench.autotvm.task.extract_from_program` made for it whatever it is fused
with. An anchor whose operands are computed inside the kernel (a fused transpose, say)
or whose indexing is not the template's is not covered, and keeps the default schedule.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...arith import Analyzer
from ...dlight.cpu.conv2d import conv_block
from ...dlight.cpu.matmul import matmul_block
from ...tir.buffer import Buffer
from ...tir.expr import BufferLoad, IntImm, Var
from ...tir.function import PrimFunc
from ...tir.functor import post_order_visit, substitute
from ...tir.schedule import Schedule
from .workload import tensor_arg

TEMPLATES_OF_KIND = {"dense": ("dense_pack.x86", "dense.x86"),
                     "conv2d": ("conv2d_nchw.x86",)}
"""Templates that compute each kind of anchor, the one TVM's x86 strategy prefers first."""


@dataclass(frozen=True)
class Anchor:
    """The anchor block of a kernel and what a template needs to replace it.

    ``operands`` are the kernel's buffers the template's ``(data, weight, out)`` stand
    for; ``replaced`` the buffers the template computes itself (the padded input).
    """

    kind: str
    args: tuple
    block_name: str
    operands: tuple
    replaced: tuple = ()

    def workloads(self) -> list:
        return [(name,) + self.args for name in TEMPLATES_OF_KIND[self.kind]]


def find_anchor(func: PrimFunc) -> Anchor | None:
    """The anchor of ``func`` when a registered template computes it, else None."""
    sch = Schedule(func)
    params = set(func.buffer_map.values())
    found = matmul_block(sch)
    if found is not None:
        return _dense_anchor(*found, params)
    found = conv_block(sch)
    if found is not None:
        return _conv_anchor(func, *found, params)
    return None


def _dense_anchor(info, loads, params) -> Anchor | None:
    out = info.store
    if len(out.indices) != 2 or not all(isinstance(i, Var) for i in out.indices):
        return None
    i, j = out.indices
    k = next(iv.var for iv in info.block.iter_vars if iv.iter_type.name != "DATA_PAR")
    data = next((ld for ld in loads if list(ld.indices) == [i, k]), None)
    weight = next((ld for ld in loads if ld is not data), None)
    if data is None or weight is None or not {data.buffer, weight.buffer} <= params:
        return None
    layout = {(j, k): "NK", (k, j): "KN"}.get(tuple(weight.indices))
    if layout is None:
        return None
    args = (_tensor(data.buffer), _tensor(weight.buffer), None, str(out.buffer.dtype))
    if layout == "KN":
        args += ("KN",)
    return Anchor("dense", args, info.name, (data.buffer, weight.buffer, out.buffer))


def _conv_anchor(func, info, loads, params) -> Anchor | None:
    out = info.store
    if len(out.indices) != 4 or not all(isinstance(i, Var) for i in out.indices):
        return None
    n, f, y, x = out.indices
    reduce_vars = [iv.var for iv in info.block.iter_vars if iv.iter_type.name != "DATA_PAR"]
    if len(reduce_vars) != 3:
        return None
    rc, ry, rx = reduce_vars
    kernel = next((ld for ld in loads if list(ld.indices) == [f, rc, ry, rx]), None)
    window = next((ld for ld in loads if ld is not kernel), None)
    if kernel is None or window is None or kernel.buffer not in params:
        return None
    if list(window.indices[:2]) != [n, rc]:
        return None
    strides = (_coefficient(window.indices[2], y, ry), _coefficient(window.indices[3], x, rx))
    dilation = (_coefficient(window.indices[2], ry, y), _coefficient(window.indices[3], rx, x))
    padded = _padding(func, window.buffer, params)
    if None in strides or None in dilation or padded is None:
        return None
    data, padding = padded
    args = (_tensor(data), _tensor(kernel.buffer), strides, padding, dilation,
            str(out.buffer.dtype))
    replaced = () if data is window.buffer else (window.buffer,)
    return Anchor("conv2d", args, info.name, (data, kernel.buffer, out.buffer), replaced)


def _tensor(buffer: Buffer) -> tuple:
    return tensor_arg([int(s.value) for s in buffer.shape], buffer.dtype)


def _coefficient(index, var, other) -> int | None:
    """The constant ``c`` of ``index = c * var + d * other``, None when not of that form."""
    analyzer = Analyzer()
    at = lambda a, b: analyzer.simplify(substitute(index, {var: a, other: b}))
    zero, one, two = at(0, 0), at(1, 0), at(2, 0)
    if not all(isinstance(v, IntImm) for v in (zero, one, two)) or zero.value != 0:
        return None
    step = one.value
    return step if two.value == 2 * step and step > 0 else None


def _padding(func, window: Buffer, params):
    """``(data buffer, (top, left, bottom, right))`` of the input the window reads."""
    if window in params:
        return window, (0, 0, 0, 0)
    writers = []
    post_order_visit(func.body, lambda node: writers.append(node) if type(node).__name__ ==
                     "Block" and any(w.buffer is window for w in node.writes) else None)
    if len(writers) != 1 or len(writers[0].iter_vars) != 4:
        return None
    block = writers[0]
    sources = []
    post_order_visit(block.body, lambda node: sources.append(node) if isinstance(
        node, BufferLoad) and node.buffer in params else None)
    if len({id(s.buffer) for s in sources}) != 1:
        return None
    data, load = sources[0].buffer, sources[0]
    analyzer, zeros = Analyzer(), {iv.var: 0 for iv in block.iter_vars}
    offsets = [analyzer.simplify(substitute(idx, zeros)) for idx in load.indices]
    if not all(isinstance(o, IntImm) for o in offsets) or offsets[0].value or offsets[1].value:
        return None
    top, left = -offsets[2].value, -offsets[3].value
    bottom = int(window.shape[2].value) - int(data.shape[2].value) - top
    right = int(window.shape[3].value) - int(data.shape[3].value) - left
    if min(top, left, bottom, right) < 0:
        return None
    return data, (top, left, bottom, right)
