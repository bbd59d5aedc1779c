"""Counters of a kernel run on the simulated GPU, and the plain-text report for learners.

>>> prof = rt_mod.profile("main", a_nd, b_nd, c_nd)       # doctest: +SKIP
>>> print(prof)      # course chapter 7's shared-memory matmul, 1024^3   # doctest: +SKIP
main on nvidia/geforce-rtx-2080-ti: modeled 0.581 ms (3.70 TFLOPS at 2147483648 FLOP)
kernel main_kernel0: grid (16, 16, 1) x block (64, 1, 1), 4096 B shared, ~80 registers/thread
  occupancy 0.75 (12 blocks/SM, limited by registers); waves filled 0.94
  modeled 0.5808 ms, memory-bound (memory 0.2724 ms, shared 0.2495 ms, compute 0.1597 ms)
  buffer        scope   access   requests  transactions     ideal  per request       bytes
  A             global  load       131072       2097152   2097152        16.00    67108864
  A_shared      shared  store      131072        524288    524288         4.00    67108864
  ...
  A_shared      shared  load      4194304      16777216   4194304         4.00   536870912
  B_shared      shared  load      4194304       8388608   4194304         2.00   536870912
  C             global  store       32768       1048576    131072        32.00     4194304
  flops 2147483648; bank conflicts 16777216 extra wavefronts

Reading it: A's float4 loads take 16 sectors per warp request, as many as the bytes
need (ideal); the A_shared loads are 4-way bank conflicts (four rows of the tile, 64
words apart, fall in one bank), B_shared's 2-way; C's stores are uncoalesced (a thread
writes its own 8 floats of a row, one per request), 32 sectors where 4 would do.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...target.tags import BASE_REGISTERS
from ...tir import stmt as S
from ...tir.functor import post_order_visit
from .launch import LaunchNest
from .model import GPUSpec, ModeledTime, Occupancy, modeled_time, occupancy
from .trace import KernelTracer


@dataclass(frozen=True)
class KernelProfile:
    """Grid-wide counters and the modeled time of one kernel launch."""
    name: str
    grid: tuple
    block: tuple
    shared_bytes: int
    registers: int
    counts: tuple
    flops: float
    occupancy: Occupancy
    time: ModeledTime

    def _total(self, scope: str, kind: str | None, field: str) -> float:
        return sum(getattr(c, field) for c in self.counts
                   if c.scope == scope and (kind is None or c.kind == kind))

    @property
    def global_loads(self) -> float:
        """Warp-level load instructions to global memory."""
        return self._total("global", "load", "requests")

    @property
    def global_stores(self) -> float:
        return self._total("global", "store", "requests")

    @property
    def global_transactions(self) -> float:
        """32-byte sectors moved between the SMs and memory (loads and stores)."""
        return self._total("global", None, "transactions")

    @property
    def global_bytes(self) -> float:
        """Bytes the threads asked for (the useful part of the transactions)."""
        return self._total("global", None, "bytes")

    @property
    def shared_wavefronts(self) -> float:
        return self._total("shared", None, "transactions")

    @property
    def bank_conflicts(self) -> float:
        """Shared-memory wavefronts beyond the conflict-free count."""
        return sum(c.conflicts for c in self.counts if c.scope == "shared")

    @property
    def seconds(self) -> float:
        return self.time.seconds


def profile_kernel(nest: LaunchNest, globals_: dict, spec: GPUSpec) -> KernelProfile:
    """Trace ``nest`` (raising on races and out-of-bounds accesses) and model its time."""
    tracer = KernelTracer(nest, globals_, spec.warp_size).run()
    shared = sum(_bytes(b) for b in nest.shared_buffers())
    # 255 is the most registers a CUDA thread can address.
    registers = min(255, BASE_REGISTERS + _local_words(nest.body))
    occ = occupancy(spec, nest.name, nest.num_threads, shared, registers)
    counts = tuple(tracer.counts.values())
    sectors = sum(c.transactions for c in counts if c.scope == "global")
    wavefronts = sum(c.transactions for c in counts if c.scope == "shared")
    time = modeled_time(spec, occ, nest.num_blocks, sectors, wavefronts, tracer.flops)
    return KernelProfile(nest.name, nest.grid, nest.block_dim, shared, registers, counts,
                         tracer.flops, occ, time)


def _bytes(buffer) -> int:
    return math.prod(int(d) for d in buffer.shape) * buffer.dtype.itemsize * buffer.dtype.lanes


def _local_words(body) -> int:
    """4-byte words of the per-thread local buffers: the register estimate's variable part."""
    words = []

    def visit(node):
        if isinstance(node, S.Allocate) and node.buffer.scope == "local":
            if all(hasattr(d, "value") for d in node.buffer.shape):
                # Rounded up: a partly used 4-byte register is still a whole register.
                words.append(-(-_bytes(node.buffer) // 4))
    post_order_visit(body, visit)
    return sum(words)


@dataclass(frozen=True)
class GPUProfile:
    """The kernels one call of a host function launches; ``print`` it for the report.

    For a GPU roofline: ``intensity`` (FLOPs per byte moved to and from memory) and
    ``gflops`` (modeled) place the call under ``peaks`` (the target's FP32 rate and
    bandwidth, a :class:`~mlcbench.runtime.machine_peaks.MachinePeaks`).
    """
    function: str
    target: str
    kernels: tuple
    peaks: object = None

    @property
    def seconds(self) -> float:
        """Modeled seconds of the whole call (kernels run one after another)."""
        return sum(k.seconds for k in self.kernels)

    @property
    def flops(self) -> float:
        return sum(k.flops for k in self.kernels)

    @property
    def dram_bytes(self) -> float:
        """Bytes moved by the global-memory transactions (32 per sector)."""
        return sum(k.global_transactions for k in self.kernels) * 32

    @property
    def intensity(self) -> float:
        return self.flops / self.dram_bytes if self.dram_bytes else float("inf")

    @property
    def gflops(self) -> float:
        """Modeled GFLOPS of the call."""
        return self.flops / self.seconds / 1e9 if self.seconds else 0.0

    def __getitem__(self, kernel: str) -> KernelProfile:
        for k in self.kernels:
            if k.name == kernel:
                return k
        raise KeyError(f"{kernel!r}: this call launches {[k.name for k in self.kernels]}")

    def __str__(self) -> str:
        rate = self.flops / self.seconds / 1e12 if self.seconds else 0.0
        lines = [f"{self.function} on {self.target}: modeled {self.seconds * 1e3:.3f} ms "
                 f"({rate:.2f} TFLOPS at {self.flops:.0f} FLOP)"]
        for kernel in self.kernels:
            lines += _kernel_lines(kernel)
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self))


_HEADER = (f"  {'buffer':<14}{'scope':<8}{'access':<7}{'requests':>10}{'transactions':>14}"
           f"{'ideal':>10}{'per request':>13}{'bytes':>12}")


def _kernel_lines(k: KernelProfile) -> list:
    occ, t = k.occupancy, k.time
    lines = [f"kernel {k.name}: grid {k.grid} x block {k.block}, {k.shared_bytes} B shared, "
             f"~{k.registers} registers/thread",
             f"  occupancy {occ.fraction:.2f} ({occ.blocks_per_sm} blocks/SM, limited by "
             f"{occ.limiter}); waves filled {t.fill:.2f}",
             f"  modeled {t.seconds * 1e3:.4f} ms, {t.bound}-bound (memory "
             f"{t.global_seconds * 1e3:.4f} ms, shared {t.shared_seconds * 1e3:.4f} ms, "
             f"compute {t.compute_seconds * 1e3:.4f} ms)",
             _HEADER]
    for c in k.counts:
        per = c.transactions / c.requests if c.requests else 0.0
        lines.append(f"  {c.buffer:<14}{c.scope:<8}{c.kind:<7}{c.requests:>10.0f}"
                     f"{c.transactions:>14.0f}{c.ideal:>10.0f}{per:>13.2f}{c.bytes:>12.0f}")
    lines.append(f"  flops {k.flops:.0f}; bank conflicts {k.bank_conflicts:.0f} extra wavefronts")
    return lines

