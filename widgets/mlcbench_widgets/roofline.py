"""A roofline: how fast a kernel runs against what this machine could do.

Two static counts describe the kernel (:func:`count_flops_and_bytes`): floating-point
operations, and the bytes of its parameter buffers (the traffic no schedule can avoid).
Their ratio, the *arithmetic intensity*, fixes the kernel's x position; each measured
schedule adds a point at its GFLOPS. The roof is ``min(peak GFLOPS, intensity * peak
GB/s)``, with both peaks measured on this machine by mlcbench kernels
(:func:`measure_machine_peaks`, see :mod:`mlcbench.driver.machine_peaks`) and cached
per CPU model, in memory and in a JSON file.

>>> counts = count_flops_and_bytes(mod["mm_relu"])       # doctest: +SKIP
>>> counts.flops, counts.bytes                           # doctest: +SKIP
(4210688, 196608)
>>> fig = plot_roofline(counts, [("step 3", 12.5)], MachinePeaks(190.0, 40.0))  # doctest: +SKIP
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlcbench.driver.machine_peaks import machine_peaks
from mlcbench.ir import MLCBenchError
from mlcbench.runtime.machine_peaks import MachinePeaks
from mlcbench.tir import BinaryOp, BlockRealize, BufferStore, Call, Evaluate, For, IntImm
from mlcbench.tir import post_order_visit

__all__ = ["KernelCounts", "MachinePeaks", "count_flops_and_bytes", "measure_machine_peaks",
           "plot_roofline"]

_CHILD_FIELDS = ("seq", "body", "block", "then_case", "else_case")


@dataclass(frozen=True)
class KernelCounts:
    """Static counts of one kernel: float operations and compulsory bytes moved."""
    flops: int
    bytes: int

    @property
    def intensity(self) -> float:
        """FLOPs per byte."""
        return self.flops / self.bytes if self.bytes else float("inf")


# -- static counts ------------------------------------------------------------------------
def count_flops_and_bytes(func) -> KernelCounts:
    """Floating-point operations (times loop extents; ``T.init`` bodies not counted, a
    ``T.where`` assumed always true) and the total size of the parameter buffers.

    Raises MLCBenchError when a loop extent is not a constant.
    """
    flops = _stmt_flops(func.body, 1)
    nbytes = 0
    for buffer in func.buffer_map.values():
        size = 1
        for dim in buffer.shape:
            if not isinstance(dim, IntImm):
                raise MLCBenchError(f"roofline: buffer {buffer.name} has the symbolic "
                                    f"dimension {dim}; counts need constant shapes")
            size *= dim.value
        nbytes += size * max(buffer.dtype.bits // 8, 1) * buffer.dtype.lanes
    return KernelCounts(flops, nbytes)


def _stmt_flops(stmt, times: int) -> int:
    if stmt is None:
        return 0
    if isinstance(stmt, For):
        if not isinstance(stmt.extent, IntImm):
            raise MLCBenchError(f"roofline: loop {stmt.loop_var.name} has the symbolic "
                                f"extent {stmt.extent}; counts need constant extents")
        return _stmt_flops(stmt.body, times * stmt.extent.value)
    if isinstance(stmt, BlockRealize):
        return _stmt_flops(stmt.block.body, times)       # the init runs far less often
    if isinstance(stmt, (BufferStore, Evaluate)):
        return times * _expr_flops(stmt.value)
    total = 0
    for name in _CHILD_FIELDS:
        value = getattr(stmt, name, None)
        for child in value if isinstance(value, tuple) else (value,):
            total += _stmt_flops(child, times)
    return total


def _expr_flops(expr) -> int:
    """Float arithmetic and math calls in ``expr``, lane by lane."""
    count = [0]

    def visit(node):
        if isinstance(node, (BinaryOp, Call)) and node.dtype.is_float:
            count[0] += node.dtype.lanes
    post_order_visit(expr, visit)
    return count[0]


# -- machine peaks ------------------------------------------------------------------------
def measure_machine_peaks(cache_path=None, refresh: bool = False,
                          kernel_gflops: float | None = None) -> MachinePeaks:
    """This machine's peak GFLOPS and GB/s (:func:`mlcbench.driver.machine_peaks.
    machine_peaks`): measured with enough FMA chains at every vector width, best of
    several runs, cached per CPU model in ``cache_path`` (default
    ``~/.cache/mlcbench/machine_peaks.json``, or ``$MLCBENCH_CACHE_DIR``) and measured
    again when a figure looks taken under load, when ``kernel_gflops`` (a rate a kernel
    just reached) beats it, or with ``refresh=True``; a new measurement never lowers a
    figure.
    """
    return machine_peaks(cache_path, refresh=refresh, kernel_gflops=kernel_gflops)


# -- the plot -----------------------------------------------------------------------------
def plot_roofline(counts: KernelCounts, points, peaks: MachinePeaks, ax=None,
                  title: str = "roofline"):
    """Draw the roof and one point per ``(label, gflops)`` at the kernel's intensity.

    Returns the matplotlib Figure (a new one, without pyplot, when ``ax`` is None).
    """
    if ax is None:
        from matplotlib.figure import Figure
        fig = Figure(figsize=(5.5, 3.6), layout="constrained")
        ax = fig.add_subplot()
    intensity = counts.intensity
    low = min(intensity, peaks.ridge) / 16
    high = max(intensity, peaks.ridge) * 16
    xs = np.geomspace(low, high, 200)
    ax.loglog(xs, peaks.roof(xs), color="black", linewidth=1.5,
              label=f"roof: {peaks.gflops:.0f} GFLOPS, {peaks.gbytes_per_s:.0f} GB/s")
    ax.axvline(intensity, color="grey", linestyle=":", linewidth=1)
    labels = [label for label, _ in points]
    values = [gflops for _, gflops in points]
    if points:
        ax.scatter([intensity] * len(values), values, zorder=3, color="tab:blue",
                   label="measured steps")
        for label, value in zip(labels, values):
            ax.annotate(label, (intensity, value), textcoords="offset points",
                        xytext=(6, 0), fontsize=8, va="center")
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("GFLOPS")
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize=8)
    return ax.figure


def figure_png(fig) -> bytes:
    """PNG bytes of a Figure (for an ipywidgets Image)."""
    import io
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()

