"""What a GPU would take: occupancy from the target's limits and a roofline time.

The model, per kernel (figures from the target tag: ``memory_bandwidth_gbps``,
``fp32_gflops``, ``multiprocessor_count``, ``clock_mhz`` and the per-SM limits)::

    t_global  = global sectors * 32 B / memory bandwidth     (no caches: every sector
                                                               counted comes from DRAM)
    t_shared  = shared wavefronts / (SMs * clock)             (one wavefront per SM and cycle)
    t_compute = flops / fp32 FLOP rate                        (an FMA counts 2)
    blocks/SM = min(max blocks, threads, shared memory, registers allow)
    occupancy = resident warps / max warps per SM, with min(blocks/SM, ceil(blocks / SMs))
                blocks resident (a small grid leaves SMs half empty)
    fill      = blocks / (ceil(blocks / SMs) * SMs)           (SMs without work, last round)
    hiding    = min(1, occupancy / 0.5)                       (half occupancy hides latency)
    time      = max(t_global, t_shared, t_compute) / (fill * hiding) + 2 us launch

How far to trust it: it ranks schedules by the traffic they cause, which is what the
course's schedules change (coalescing, reuse through shared memory and registers). It
knows no caches (a kernel that rereads data through L1/L2 looks slower than it is), no
instruction issue limits, no latency of dependent loads, and registers are estimated
(16 + the words of a thread's local buffers). Compare schedules with it; do not quote
its GFLOPS as a measurement.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .access import GPUSimulationError

LAUNCH_SECONDS = 2e-6
OCCUPANCY_FOR_FULL_SPEED = 0.5

# A GeForce RTX 2080 Ti (sm_75): the figures used where a target lacks one.
_DEFAULTS = {
    "multiprocessor_count": 68, "clock_mhz": 1545, "memory_bandwidth_gbps": 616,
    "fp32_gflops": 13448, "max_threads_per_block": 1024, "max_threads_per_sm": 1024,
    "max_blocks_per_sm": 16, "max_shared_memory_per_block": 49152,
    "max_shared_memory_per_sm": 65536, "registers_per_sm": 65536, "thread_warp_size": 32,
}


@dataclass(frozen=True)
class GPUSpec:
    """The figures of one GPU the model needs, read from a Target's attributes."""
    name: str
    sm_count: int
    clock_mhz: float
    bandwidth_gbps: float
    fp32_gflops: float
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    max_shared_per_block: int
    max_shared_per_sm: int
    registers_per_sm: int
    warp_size: int

    @classmethod
    def from_target(cls, target) -> "GPUSpec":
        attrs = dict(_DEFAULTS)
        attrs.update({k: v for k, v in getattr(target, "attrs", {}).items() if v is not None})
        return cls(str(target), int(attrs["multiprocessor_count"]), float(attrs["clock_mhz"]),
                   float(attrs["memory_bandwidth_gbps"]), float(attrs["fp32_gflops"]),
                   int(attrs["max_threads_per_block"]), int(attrs["max_threads_per_sm"]),
                   int(attrs["max_blocks_per_sm"]), int(attrs["max_shared_memory_per_block"]),
                   int(attrs["max_shared_memory_per_sm"]), int(attrs["registers_per_sm"]),
                   int(attrs["thread_warp_size"]))


def machine_peaks(spec: GPUSpec):
    """The GPU's roof (FP32 GFLOPS and GB/s) as the roofline plots take it."""
    from ...runtime.machine_peaks import MachinePeaks
    return MachinePeaks(spec.fp32_gflops, spec.bandwidth_gbps, machine=spec.name)


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    warps_per_sm: int
    max_warps_per_sm: int
    limiter: str

    @property
    def fraction(self) -> float:
        return self.warps_per_sm / self.max_warps_per_sm


def occupancy(spec: GPUSpec, kernel: str, threads: int, shared_bytes: int,
              registers: int) -> Occupancy:
    """Resident blocks per SM and what limits them; a block that cannot fit is an error."""
    if threads > spec.max_threads_per_block:
        raise GPUSimulationError(f"kernel {kernel!r}: {threads} threads per block exceed "
                                 f"max_threads_per_block={spec.max_threads_per_block} of "
                                 f"{spec.name}")
    if shared_bytes > spec.max_shared_per_block:
        raise GPUSimulationError(f"kernel {kernel!r}: {shared_bytes} bytes of shared memory "
                                 "per block exceed max_shared_memory_per_block="
                                 f"{spec.max_shared_per_block} of {spec.name}")
    # A partial warp still occupies a whole warp's slots.
    warps = -(-threads // spec.warp_size)
    limits = {"blocks": spec.max_blocks_per_sm,
              "threads": spec.max_threads_per_sm // (warps * spec.warp_size),
              "registers": spec.registers_per_sm // (registers * warps * spec.warp_size)}
    if shared_bytes:
        limits["shared memory"] = spec.max_shared_per_sm // shared_bytes
    limiter = min(limits, key=limits.get)
    # One block at least, even where the register estimate says none would fit.
    blocks = max(1, limits[limiter])
    max_warps = spec.max_threads_per_sm // spec.warp_size
    return Occupancy(blocks, min(blocks * warps, max_warps), max_warps, limiter)


@dataclass(frozen=True)
class ModeledTime:
    """The roofline terms and the modeled seconds of one kernel launch."""
    global_seconds: float
    shared_seconds: float
    compute_seconds: float
    fill: float
    hiding: float
    seconds: float

    @property
    def bound(self) -> str:
        terms = {"memory": self.global_seconds, "shared memory": self.shared_seconds,
                 "compute": self.compute_seconds}
        return max(terms, key=terms.get)


def modeled_time(spec: GPUSpec, occ: Occupancy, num_blocks: int, global_sectors: float,
                 shared_wavefronts: float, flops: float) -> ModeledTime:
    """The module docstring's formula."""
    t_global = global_sectors * 32 / (spec.bandwidth_gbps * 1e9)
    t_shared = shared_wavefronts / (spec.sm_count * spec.clock_mhz * 1e6)
    t_compute = flops / (spec.fp32_gflops * 1e9)
    if num_blocks == 0:
        # An empty grid (ceildiv(n, 256) blocks for n = 0) is not launched.
        return ModeledTime(t_global, t_shared, t_compute, 1.0, 1.0, 0.0)
    rounds = math.ceil(num_blocks / spec.sm_count)
    fill = num_blocks / (rounds * spec.sm_count)
    # A grid smaller than the SMs' capacity leaves them partly empty.
    resident = min(occ.blocks_per_sm, rounds) / occ.blocks_per_sm
    hiding = min(1.0, occ.fraction * resident / OCCUPANCY_FOR_FULL_SPEED)
    seconds = max(t_global, t_shared, t_compute) / (fill * hiding) + LAUNCH_SECONDS
    return ModeledTime(t_global, t_shared, t_compute, fill, hiding, seconds)
