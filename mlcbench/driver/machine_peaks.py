"""What this machine can do, measured: its FMA peak (GFLOPS) and memory bandwidth (GB/s).

A kernel's GFLOPS means little alone; beside the machine's peak it says how much is left.
The peak is measured by mlcbench kernels, honestly:

- **FMA peak**: every core runs independent chains of vector multiply-adds held in
  registers. An FMA has a latency of 4 to 5 cycles and a core has up to 2 FMA pipes, so
  fewer than about 10 chains leave pipes idle: several chain counts are tried, up to
  three quarters of the register file, at every vector width the host has (8 float lanes
  with AVX2, also 16 with AVX-512), and the best counts.
- **Bandwidth**: every core sums its share of a buffer several times larger than the
  last-level cache.
- Each figure is the best of several runs (other programs only ever slow a run down),
  and is cached per CPU model in ``$MLCBENCH_CACHE_DIR/machine_peaks.json`` (default
  ``~/.cache/mlcbench``).

The figures, the cache file and when a cached figure is measured again (a kernel ran
faster than it: ``machine_peaks(kernel_gflops=...)``, a busy machine, more load than now)
are :mod:`mlcbench.runtime.machine_peaks`; this module, above the compiler it measures
with, names the machine and runs the kernels::

    peaks = machine_peaks()
    print(f"{gflops:.1f} GFLOPS ({peaks.share(gflops)} of peak)")
"""
from __future__ import annotations

import os
import pathlib
import time
from dataclasses import replace

import numpy as np

from ..runtime.device import cpu
from ..runtime.machine_peaks import (MachinePeaks, default_cache_path, merged, read_cache,
                                     why_measure_again, write_cache)
from ..runtime.ndarray import array
from ..script import from_source
from ..target import Target, host_cpu_features, host_cpu_name
from ..target.target import host_cpu_model
from .build import build

__all__ = ["MachinePeaks", "cpu_model", "default_cache_path", "machine_key", "machine_peaks",
           "measure_peaks"]


# -- which machine ------------------------------------------------------------------------
def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else LLVM's name of the host CPU."""
    return host_cpu_model()


def host_lanes() -> tuple[int, ...]:
    """Float lanes of the vector widths the host runs natively: (8,) or (8, 16)."""
    return (8, 16) if "avx512f" in host_cpu_features() else (8,)


def machine_key() -> str:
    """The cache key: CPU model, LLVM's CPU name, cores and vector widths."""
    cores = Target("llvm").num_cores
    lanes = "/".join(str(32 * n) for n in host_lanes())
    return f"{cpu_model()} ({host_cpu_name()}), {cores} cores, {lanes}-bit"


# -- the cache ----------------------------------------------------------------------------
_PEAKS: dict[str, MachinePeaks] = {}


def machine_peaks(cache_path=None, refresh: bool = False,
                  kernel_gflops: float | None = None, measure=None) -> MachinePeaks:
    """This machine's peaks: from memory or the cache file, measured (a few seconds)
    when the file has no trusted figure (:func:`why_measure_again`) or with
    ``refresh``; once in memory, only a faster kernel or ``refresh`` measures again.

    ``kernel_gflops``: a rate a kernel just reached; a cached peak below it is measured
    again. ``measure`` replaces the measurement (a function returning MachinePeaks).
    """
    key = machine_key()
    path = pathlib.Path(cache_path) if cache_path is not None else default_cache_path()
    stored = _PEAKS.get(key)
    if stored is not None and not refresh and (kernel_gflops or 0.0) <= stored.gflops:
        return stored         # checked when it was read or measured by this process
    if stored is None:
        entry = read_cache(path).get(key)
        stored = MachinePeaks.from_json(entry) if isinstance(entry, dict) else None
    reason = "asked to" if refresh else why_measure_again(
        stored, Target("llvm").num_cores, max(host_lanes()), os.getloadavg()[0],
        kernel_gflops)
    if reason is not None:
        new = (measure or measure_peaks)()
        stored = merged(stored, replace(new, machine=key), kernel_gflops)
        write_cache(path, key, stored)
    _PEAKS[key] = stored
    return stored


# -- the measurements ---------------------------------------------------------------------
def measure_peaks(runs: int = 5) -> MachinePeaks:
    """Measure both peaks now, each the best of ``runs`` runs (see the module docstring)."""
    target = Target("llvm")
    load = os.getloadavg()[0]
    widths = []
    for lanes in host_lanes():
        tried = [(fma_gflops(target, lanes, chains, runs), chains)
                 for chains in chain_counts(target.vector_registers)]
        best, chains = max(tried)
        widths.append((lanes, chains, best))
    bandwidth = memory_gbytes_per_s(target, runs)
    # The load before or after, whichever is higher: a job that starts during the
    # measurement slows it as much as one that was running before.
    load = max(load, os.getloadavg()[0])
    return MachinePeaks(max(g for _, _, g in widths), bandwidth, "", tuple(widths), load,
                        time.time())


def chain_counts(registers: int) -> tuple[int, ...]:
    """Independent FMA chains to try: 8 (two pipes of latency 4), and up to three
    quarters of the register file (the rest holds the operands)."""
    return tuple(sorted({8, registers // 2, registers * 3 // 4}))


_FMA_KERNEL = '''
@T.prim_func
def fma_peak(X: T.Buffer((2, {lanes}), "float32"),
             Out: T.Buffer(({cores}, {chains}, {lanes}), "float32")):
    T.func_attr({{"global_symbol": "fma_peak", "tir.noalias": True}})
    for p in T.parallel({cores}):
        with T.block("core"):
            acc = T.alloc_buffer(({chains}, {lanes}), scope="local")
            for r in T.unroll({chains}):
                for l in T.vectorized({lanes}):
                    acc[r, l] = X[1, l] + T.float32(r)
            for it in range({steps}):
                for r in T.unroll({chains}):
                    for l in T.vectorized({lanes}):
                        acc[r, l] = acc[r, l] * X[0, l] + X[1, l]
            for r in T.unroll({chains}):
                for l in T.vectorized({lanes}):
                    Out[p, r, l] = acc[r, l]
'''

_SUM_KERNEL = '''
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

_FMA_STEPS = 200_000      # a call of a few milliseconds: thread start-up is lost in it


def _best_seconds(source: str, name: str, target, arrays, runs: int) -> float:
    """The fastest of ``runs`` timings of at least 20 ms each."""
    lib = build(from_source(source), target=target)
    args = [array(a) for a in arrays]
    return lib.time_evaluator(name, cpu(), number=1, repeat=runs,
                              min_repeat_ms=20)(*args).min


def fma_gflops(target, lanes: int, chains: int, runs: int = 5) -> float:
    """GFLOPS of ``chains`` independent ``lanes``-wide FMA chains on every core."""
    cores = target.num_cores
    source = _FMA_KERNEL.format(cores=cores, chains=chains, lanes=lanes, steps=_FMA_STEPS)
    operands = np.stack([np.full(lanes, 0.999999, "float32"), np.full(lanes, 1e-6, "float32")])
    seconds = _best_seconds(source, "fma_peak", target,
                            [operands, np.zeros((cores, chains, lanes), "float32")], runs)
    return 2 * cores * chains * lanes * _FMA_STEPS / seconds / 1e9


def memory_gbytes_per_s(target, runs: int = 5) -> float:
    """Every core sums its share of a buffer four times the last-level cache (at least
    64 MB), ``lanes``-wide in 4 independent sums."""
    cores, lanes = target.num_cores, target.vector_lanes(32)
    megabytes = max(64, 4 * _last_level_cache_bytes() >> 20)
    rows = max(1, (megabytes << 20) // (cores * 4 * lanes * 4))
    data = np.ones((cores, rows, 4, lanes), "float32")
    source = _SUM_KERNEL.format(cores=cores, rows=rows, lanes=lanes)
    seconds = _best_seconds(source, "peak_bandwidth", target,
                            [data, np.zeros((cores, 4, lanes), "float32")], runs)
    return data.nbytes / seconds / 1e9


def _last_level_cache_bytes() -> int:
    """The largest cache of cpu0 (sysfs), 0 where unreadable."""
    root = pathlib.Path("/sys/devices/system/cpu/cpu0/cache")
    sizes = [0]
    for size in root.glob("index*/size"):
        try:
            text = size.read_text().strip().upper()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes.append(int(digits) * scale)
    return max(sizes)
