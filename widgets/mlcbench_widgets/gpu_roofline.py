"""The GPU roofline of the ScheduleExplorer: for a GPU target, each run step is built for
the (simulated) GPU and placed by its own counters, not by the kernel's static count.

On a GPU the schedule decides the memory traffic (coalescing, reuse through shared
memory and registers), so each step has its own arithmetic intensity: FLOPs per byte of
the global-memory transactions it makes (``GPUProfile.intensity``), at its modeled
GFLOPS (``GPUProfile.gflops``), under the roof of the target tag's FP32 rate and
bandwidth (``GPUProfile.peaks``). ::

    explorer = ScheduleExplorer(Matmul, target="nvidia/geforce-rtx-2080-ti")
    ...bind loops to blockIdx / threadIdx...
    explorer.run()
    explorer.roofline()          # the GPU roof, one point per run step
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlcbench.runtime.machine_peaks import MachinePeaks
from mlcbench import Target

__all__ = ["GPUPoint", "gpu_peaks", "gpu_points", "is_gpu_target", "plot_gpu_roofline"]


def is_gpu_target(target) -> bool:
    """Whether ``target`` (a Target or its string) builds for a GPU."""
    return _target(target).is_gpu


def gpu_peaks(target) -> MachinePeaks:
    """The roof of ``target``'s tag: the FP32 GFLOPS and memory GB/s the simulated GPU's
    model uses (the same figures as ``GPUProfile.peaks``)."""
    target = _target(target)
    return MachinePeaks(float(target.attrs["fp32_gflops"]),
                        float(target.attrs["memory_bandwidth_gbps"]), machine=str(target))


def _target(target) -> Target:
    return target if isinstance(target, Target) else Target(target)


@dataclass(frozen=True)
class GPUPoint:
    """One run step on the GPU roofline."""
    label: str
    intensity: float
    gflops: float


def gpu_points(measurements) -> list[GPUPoint]:
    """``GPUPoint`` of every ``(label, measurement)`` that carries a GPU profile."""
    return [GPUPoint(label, m.profile.intensity, m.profile.gflops)
            for label, m in measurements if getattr(m, "profile", None) is not None]


def intensity_span(points, peaks: MachinePeaks) -> tuple[float, float]:
    """The x range of the plot: every point and the ridge, with room on both sides."""
    finite = [p.intensity for p in points if np.isfinite(p.intensity) and p.intensity > 0]
    low = min(finite + [peaks.ridge])
    high = max(finite + [peaks.ridge])
    return low / 16, high * 16


def plot_gpu_roofline(points, peaks: MachinePeaks, ax=None, title: str = "GPU roofline"):
    """The roof of ``peaks`` and each :class:`GPUPoint` at its own intensity; returns the
    matplotlib Figure (a new one, without pyplot, when ``ax`` is None)."""
    if ax is None:
        from matplotlib.figure import Figure
        fig = Figure(figsize=(5.5, 3.6), layout="constrained")
        ax = fig.add_subplot()
    xs = np.geomspace(*intensity_span(points, peaks), 200)
    name = f"{peaks.machine}: " if peaks.machine else ""
    ax.loglog(xs, peaks.roof(xs), color="black", linewidth=1.5,
              label=f"{name}{peaks.gflops:.0f} GFLOPS, {peaks.gbytes_per_s:.0f} GB/s")
    if points:
        ax.scatter([p.intensity for p in points], [p.gflops for p in points], zorder=3,
                   color="tab:green", label="modeled steps")
        for p in points:
            ax.annotate(p.label, (p.intensity, p.gflops), textcoords="offset points",
                        xytext=(6, 0), fontsize=8, va="center")
    ax.set_xlabel("arithmetic intensity (FLOP / byte of global memory traffic)")
    ax.set_ylabel("modeled GFLOPS")
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize=8)
    return ax.figure
