"""What this machine can do: its FMA peak (GFLOPS) and memory bandwidth (GB/s).

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

A cached figure is measured again (:func:`why_measure_again`) when a kernel ran faster
than it (``machine_peaks(kernel_gflops=...)``), when it is below one FMA per cycle per
core at 1 GHz (a figure no machine with these vectors gives unless it was busy), or when
it was taken under more load than the machine has now. A new measurement never lowers a
figure: a peak is the best this machine has done::

    peaks = machine_peaks()
    print(f"{gflops:.1f} GFLOPS ({peaks.share(gflops)} of peak)")
"""
from __future__ import annotations

import json
import os
import pathlib
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np

__all__ = ["MachinePeaks", "cpu_model", "default_cache_path", "machine_key", "machine_peaks",
           "why_measure_again"]

GHZ_FLOOR = 1.0           # no machine with FMA runs its cores slower than this


@dataclass(frozen=True)
class MachinePeaks:
    """Measured peak compute (GFLOPS, all cores) and memory bandwidth (GB/s).

    ``by_width`` holds ``(lanes, chains, GFLOPS)`` of the best chain count at each vector
    width; ``load`` the 1-minute load average when the figures were measured (None:
    not measured here); ``measured_at`` seconds since the epoch.
    """

    gflops: float
    gbytes_per_s: float
    machine: str = ""
    by_width: tuple = ()
    load: float | None = None
    measured_at: float = field(default=0.0, compare=False)

    def roof(self, intensity):
        """Attainable GFLOPS at ``intensity`` FLOPs per byte."""
        return np.minimum(self.gflops, np.asarray(intensity) * self.gbytes_per_s)

    @property
    def ridge(self) -> float:
        """The intensity where memory stops limiting compute."""
        return self.gflops / self.gbytes_per_s

    def share(self, gflops: float) -> str:
        """``gflops`` as a percentage of the FMA peak, e.g. ``"92%"``."""
        return f"{gflops / self.gflops:.0%}" if self.gflops > 0 else "n/a"

    def describe(self) -> str:
        widths = ", ".join(f"{lanes} lanes x {chains} chains {g:.0f}"
                           for lanes, chains, g in self.by_width)
        return (f"FMA peak {self.gflops:.0f} GFLOPS ({widths or 'not measured here'}), "
                f"memory {self.gbytes_per_s:.1f} GB/s")

    def as_json(self) -> dict:
        return {**asdict(self), "by_width": [list(w) for w in self.by_width]}

    @staticmethod
    def from_json(obj: dict) -> "MachinePeaks":
        return MachinePeaks(float(obj["gflops"]), float(obj["gbytes_per_s"]),
                            str(obj.get("machine", "")),
                            tuple(tuple(w) for w in obj.get("by_width", ())),
                            obj.get("load"), float(obj.get("measured_at", 0.0)))


# -- which machine ------------------------------------------------------------------------
def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else LLVM's name of the host CPU."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    from ..target import host_cpu_name
    return host_cpu_name()


def host_lanes() -> tuple[int, ...]:
    """Float lanes of the vector widths the host runs natively: (8,) or (8, 16)."""
    from ..target import host_cpu_features
    return (8, 16) if "avx512f" in host_cpu_features() else (8,)


def machine_key() -> str:
    """The cache key: CPU model, LLVM's CPU name, cores and vector widths."""
    from ..target import Target, host_cpu_name
    cores = Target("llvm").num_cores
    lanes = "/".join(str(32 * n) for n in host_lanes())
    return f"{cpu_model()} ({host_cpu_name()}), {cores} cores, {lanes}-bit"


def default_cache_path() -> pathlib.Path:
    root = os.environ.get("MLCBENCH_CACHE_DIR") or pathlib.Path.home() / ".cache" / "mlcbench"
    return pathlib.Path(root) / "machine_peaks.json"


# -- when to measure again ----------------------------------------------------------------
def why_measure_again(stored: MachinePeaks | None, cores: int, lanes: int,
                      load_now: float, kernel_gflops: float | None = None) -> str | None:
    """Why the ``stored`` figures cannot be trusted as they are, or None.

    ``lanes`` is the widest vector width's float lanes, ``load_now`` the machine's
    1-minute load average now, ``kernel_gflops`` the rate a kernel just reached.
    """
    if stored is None:
        return "no figure for this machine yet"
    if kernel_gflops is not None and kernel_gflops > stored.gflops:
        return (f"a kernel ran at {kernel_gflops:.1f} GFLOPS, above the cached peak "
                f"{stored.gflops:.1f}")
    floor = cores * lanes * 2 * GHZ_FLOOR
    if stored.gflops < floor:
        return (f"the cached peak {stored.gflops:.1f} GFLOPS is below one {lanes}-lane FMA "
                f"per cycle on {cores} cores at {GHZ_FLOOR:g} GHz ({floor:.0f} GFLOPS): it "
                f"was measured while the machine was busy")
    if stored.load is not None and stored.load >= 1.0 and load_now <= stored.load - 1.0:
        return (f"the cached figures were measured at load {stored.load:.1f}; the load is "
                f"{load_now:.1f} now")
    return None


def merged(stored: MachinePeaks | None, new: MachinePeaks,
           kernel_gflops: float | None = None) -> MachinePeaks:
    """The better of ``stored`` and ``new`` figure by figure, and the lower load: a
    peak is the best the machine has done, and a kernel that beat the probe has done
    it (``kernel_gflops``)."""
    gflops = max(new.gflops, kernel_gflops or 0.0, stored.gflops if stored else 0.0)
    if stored is None:
        return replace(new, gflops=gflops)
    widths = {w[0]: w for w in stored.by_width}
    for w in new.by_width:
        if w[0] not in widths or w[2] > widths[w[0]][2]:
            widths[w[0]] = w
    loads = [x for x in (stored.load, new.load) if x is not None]
    return replace(new, gflops=gflops,
                   gbytes_per_s=max(new.gbytes_per_s, stored.gbytes_per_s),
                   by_width=tuple(sorted(widths.values())), load=min(loads, default=None))


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
    from ..target import Target
    key = machine_key()
    path = pathlib.Path(cache_path) if cache_path is not None else default_cache_path()
    stored = _PEAKS.get(key)
    if stored is not None and not refresh and (kernel_gflops or 0.0) <= stored.gflops:
        return stored         # checked when it was read or measured by this process
    if stored is None:
        entry = _read_cache(path).get(key)
        stored = MachinePeaks.from_json(entry) if isinstance(entry, dict) else None
    reason = "asked to" if refresh else why_measure_again(
        stored, Target("llvm").num_cores, max(host_lanes()), os.getloadavg()[0],
        kernel_gflops)
    if reason is not None:
        new = (measure or measure_peaks)()
        stored = merged(stored, replace(new, machine=key), kernel_gflops)
        _write_cache(path, key, stored)
    _PEAKS[key] = stored
    return stored


def _read_cache(path: pathlib.Path) -> dict:
    try:
        stored = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


def _write_cache(path: pathlib.Path, key: str, peaks: MachinePeaks) -> None:
    stored = _read_cache(path)
    stored[key] = peaks.as_json()
    try:                     # a read-only home (Binder, CI) only costs a re-measurement
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.part")
        partial.write_text(json.dumps(stored, indent=1))
        os.replace(partial, path)
    except OSError:
        pass


# -- the measurements ---------------------------------------------------------------------
def measure_peaks(runs: int = 5) -> MachinePeaks:
    """Measure both peaks now, each the best of ``runs`` runs (see the module docstring)."""
    from ..target import Target
    target = Target("llvm")
    load = os.getloadavg()[0]
    widths = []
    for lanes in host_lanes():
        tried = [(fma_gflops(target, lanes, chains, runs), chains)
                 for chains in chain_counts(target.vector_registers)]
        best, chains = max(tried)
        widths.append((lanes, chains, best))
    return MachinePeaks(max(g for _, _, g in widths), memory_gbytes_per_s(target, runs), "",
                        tuple(widths), load, time.time())


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
    from ..driver.build import build
    from ..script import from_source
    from .device import cpu
    from .ndarray import array
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
