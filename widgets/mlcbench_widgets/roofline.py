"""A roofline: how fast a kernel runs against what this machine could do.

Two static counts describe the kernel (:func:`count_flops_and_bytes`): floating-point
operations, and the bytes of its parameter buffers (the traffic no schedule can avoid).
Their ratio, the *arithmetic intensity*, fixes the kernel's x position; each measured
schedule adds a point at its GFLOPS. The roof is ``min(peak GFLOPS, intensity * peak
GB/s)``, with both peaks measured once on this machine by two tiny mlcbench kernels
(:func:`measure_machine_peaks`) and cached, in memory and in a JSON file.

>>> counts = count_flops_and_bytes(mod["mm_relu"])       # doctest: +SKIP
>>> counts.flops, counts.bytes                           # doctest: +SKIP
(4210688, 196608)
>>> fig = plot_roofline(counts, [("step 3", 12.5)], MachinePeaks(190.0, 40.0))  # doctest: +SKIP
"""
from __future__ import annotations

import json
import os
import pathlib
from dataclasses import asdict, dataclass

import numpy as np

import mlcbench
from mlcbench.ir import MLCBenchError
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


@dataclass(frozen=True)
class MachinePeaks:
    """Measured peak compute (GFLOPS) and memory bandwidth (GB/s) of this machine."""
    gflops: float
    gbytes_per_s: float
    machine: str = ""

    def roof(self, intensity):
        """Attainable GFLOPS at ``intensity`` FLOPs per byte."""
        return np.minimum(self.gflops, np.asarray(intensity) * self.gbytes_per_s)

    @property
    def ridge(self) -> float:
        """The intensity where memory stops limiting compute."""
        return self.gflops / self.gbytes_per_s


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
_PEAKS: dict[str, MachinePeaks] = {}


def default_cache_path() -> pathlib.Path:
    root = os.environ.get("MLCBENCH_CACHE_DIR") or pathlib.Path.home() / ".cache" / "mlcbench"
    return pathlib.Path(root) / "machine_peaks.json"


def machine_key(target=None) -> str:
    target = mlcbench.Target(target or "llvm")
    return f"{target.mcpu}-{target.num_cores}cores-{target.vector_width_bits}bit"


def measure_machine_peaks(cache_path=None, refresh: bool = False) -> MachinePeaks:
    """This machine's peak GFLOPS and GB/s: measured once (about half a second), then
    read from memory or from ``cache_path`` (default ``~/.cache/mlcbench/machine_peaks.json``,
    or ``$MLCBENCH_CACHE_DIR``).

    ``refresh=True`` measures again and keeps, per figure, the better of the new and the
    stored value: a peak is the best the machine did, and a measurement taken while
    other programs ran can only come out low.
    """
    key = machine_key()
    path = pathlib.Path(cache_path) if cache_path is not None else default_cache_path()
    if not refresh and key in _PEAKS:
        return _PEAKS[key]
    stored = _read_cache(path).get(key)
    if stored is not None and not refresh:
        peaks = MachinePeaks(**stored)
    else:
        peaks = MachinePeaks(_peak_gflops(), _peak_gbytes_per_s(), key)
        if stored is not None:
            peaks = MachinePeaks(max(peaks.gflops, stored["gflops"]),
                                 max(peaks.gbytes_per_s, stored["gbytes_per_s"]), key)
        _write_cache(path, key, peaks)
    _PEAKS[key] = peaks
    return peaks


def _read_cache(path: pathlib.Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _write_cache(path: pathlib.Path, key: str, peaks: MachinePeaks) -> None:
    stored = _read_cache(path)
    stored[key] = asdict(peaks)
    try:                     # a read-only home (Binder, CI) only costs a re-measurement
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stored, indent=1))
    except OSError:
        pass


_COMPUTE_KERNEL = '''
@T.prim_func
def peak_compute(A: T.Buffer(({cores}, {acc}, {lanes}), "float32")):
    T.func_attr({{"global_symbol": "peak_compute", "tir.noalias": True}})
    for p in T.parallel({cores}):
        for r in range({steps}):
            for a in T.unroll({acc}):
                for lane in T.vectorized({lanes}):
                    with T.block("fma"):
                        vp, vr, va, vl = T.axis.remap("SRSS", [p, r, a, lane])
                        A[vp, va, vl] = A[vp, va, vl] * T.float32(0.999) + T.float32(0.001)
'''

_BANDWIDTH_KERNEL = '''
@T.prim_func
def peak_bandwidth(A: T.Buffer(({cores}, {rows}, 4, {lanes}), "float32"),
                   S: T.Buffer(({cores}, 4, {lanes}), "float32")):
    T.func_attr({{"global_symbol": "peak_bandwidth", "tir.noalias": True}})
    for p in T.parallel({cores}):
        for i in range({rows}):
            for a in T.unroll(4):
                for lane in T.vectorized({lanes}):
                    with T.block("sum"):
                        vp, vi, va, vl = T.axis.remap("SRSS", [p, i, a, lane])
                        S[vp, va, vl] = S[vp, va, vl] + A[vp, vi, va, vl]
'''


def _best_seconds(source: str, name: str, arrays, repeat: int = 5) -> float:
    """The fastest of ``repeat`` short timings (other programs only ever slow it down)."""
    lib = mlcbench.build(mlcbench.script.from_source(source))
    args = [mlcbench.nd.array(a) for a in arrays]
    return lib.time_evaluator(name, mlcbench.cpu(), number=1, repeat=repeat,
                              min_repeat_ms=5)(*args).min


def _peak_gflops() -> float:
    """Independent vector multiply-adds in registers on every core (8 chains hide the
    FMA latency)."""
    target = mlcbench.Target("llvm")
    cores, lanes, acc, steps = target.num_cores, target.vector_lanes(32), 8, 32768
    source = _COMPUTE_KERNEL.format(cores=cores, acc=acc, lanes=lanes, steps=steps)
    seconds = _best_seconds(source, "peak_compute", [np.ones((cores, acc, lanes), "float32")])
    return 2 * cores * steps * acc * lanes / seconds / 1e9


def _peak_gbytes_per_s(megabytes: int = 32) -> float:
    """Every core sums its share of a buffer (32 MB: larger than most last-level caches,
    small enough to allocate in a blink)."""
    target = mlcbench.Target("llvm")
    cores, lanes = target.num_cores, target.vector_lanes(32)
    rows = max(1, (megabytes << 20) // (cores * 4 * lanes * 4))
    source = _BANDWIDTH_KERNEL.format(cores=cores, rows=rows, lanes=lanes)
    data = np.empty((cores, rows, 4, lanes), "float32")
    data.fill(1.0)
    seconds = _best_seconds(source, "peak_bandwidth",
                            [data, np.zeros((cores, 4, lanes), "float32")])
    return data.nbytes / seconds / 1e9


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

