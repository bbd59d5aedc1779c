"""A machine's peaks, its FMA peak (GFLOPS) and memory bandwidth (GB/s), as figures:
when to trust them, how two measurements merge, and the file that caches them.

A kernel's GFLOPS means little alone; beside the machine's peak it says how much is left.
The figures are measured by compiling and timing kernels, which only the compiler can
do: :mod:`mlcbench.driver.machine_peaks` measures them and decides when
(``machine_peaks()``); this module holds what the runtime and the GPU model share.

A cached figure is measured again (:func:`why_measure_again`) when a kernel ran faster
than it, when it is below one FMA per cycle per core at 1 GHz (a figure no machine with
these vectors gives unless it was busy), or when it was taken under more load than the
machine has now. A new measurement never lowers a figure (:func:`merged`): a peak is the
best this machine has done. Figures are cached per machine in
``$MLCBENCH_CACHE_DIR/machine_peaks.json`` (default ``~/.cache/mlcbench``).
"""
from __future__ import annotations

import json
import os
import pathlib
from dataclasses import asdict, dataclass, field, replace

import numpy as np

__all__ = ["GHZ_FLOOR", "MachinePeaks", "default_cache_path", "merged", "read_cache",
           "why_measure_again", "write_cache"]

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


# -- the cache file -----------------------------------------------------------------------
def default_cache_path() -> pathlib.Path:
    root = os.environ.get("MLCBENCH_CACHE_DIR") or pathlib.Path.home() / ".cache" / "mlcbench"
    return pathlib.Path(root) / "machine_peaks.json"


def read_cache(path: pathlib.Path) -> dict:
    """``{machine key: figures as JSON}`` from the cache file; empty where unreadable."""
    try:
        stored = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


def write_cache(path: pathlib.Path, key: str, peaks: MachinePeaks) -> None:
    """Store ``peaks`` under ``key``, keeping the other machines' figures."""
    stored = read_cache(path)
    stored[key] = peaks.as_json()
    try:                     # a read-only home (Binder, CI) only costs a re-measurement
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.part")
        partial.write_text(json.dumps(stored, indent=1))
        os.replace(partial, path)
    except OSError:
        pass
