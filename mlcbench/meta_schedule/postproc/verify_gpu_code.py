"""VerifyGPUCode: reject a candidate that breaks the GPU's launch limits before it is built.

Random tile sizes often ask for more threads per block than the GPU has (``[1, 1, 64,
1, 16] x [1, 1, 32, 1, 32]`` is 2048 threads) or more shared memory than a block may
hold; building and measuring such a candidate only to see it fail costs seconds. The
checks, per kernel (a nest of ``blockIdx`` loops):

* threads per block (the product of the ``threadIdx.*`` extents) within
  ``max_threads_per_block``, and within the bounds ``MultiLevelTiling`` annotated on
  the tiled block (at least a warp when the block has work for two);
* virtual threads (``vthread``) at most ``max_vthread``;
* shared memory per block within ``max_shared_memory_per_block``: each shared buffer
  counts the region its producer writes for one thread block;
* vector accesses of at most ``max_vector_bytes``;
* local buffers of a thread within its registers (255 at most, fewer when
  ``registers_per_block`` is shared by many threads).

These are read from the scheduled program, before lowering (lowering a candidate costs
a second; the search checks hundreds). ``VerifyGPUCode(lower=True)`` also lowers it with
``tir.transform.lower_gpu``, whose own check of the lowered kernels is exact; the
builder does that anyway, so a candidate that slips through fails its build.

``last_error`` says which limit a rejected candidate broke::

    VerifyGPUCode().apply(sch)   # False
    "threads per block 2048 exceed max_threads_per_block=1024 (blockIdx.x kernel ...)"
"""
from __future__ import annotations

import math

from ...arith import Analyzer
from ...tir.expr import IntImm, Range
from ...tir.function import PrimFunc
from ...tir.functor import substitute
from ...tir.schedule.ir_utils import walk
from ...tir.stmt import Block, BlockRealize, For, ForKind, SeqStmt
from ..gpu_target import BLOCK_TAGS, gpu_limits, register_estimate, thread_tag
from ..schedule_rule.gpu_tiling import THREAD_EXTENT_HIGH, THREAD_EXTENT_LOW
from .postproc import Postproc


class VerifyGPUCode(Postproc):
    """True when every kernel of the schedule respects the target's limits.

    >>> VerifyGPUCode().apply(sch)           # doctest: +SKIP
    True
    """

    def __init__(self, lower: bool = False):
        self.lower = lower
        self.last_error: str | None = None

    def apply(self, sch) -> bool:
        limits = gpu_limits(self.target)
        self.last_error = None
        for func in sch.mod.functions.values():
            if not isinstance(func, PrimFunc):
                continue
            for kernel in _kernels(func.body):
                self.last_error = check_kernel(kernel, limits)
                if self.last_error:
                    return False
        if self.lower:
            self.last_error = _lowering_problem(sch.mod, self.target)
        return self.last_error is None

    def __repr__(self) -> str:
        return f"VerifyGPUCode(lower={self.lower})"


def _lowering_problem(mod, target) -> str | None:
    """What ``lower_gpu`` (with its exact per-kernel limits check) refuses, or None."""
    from ...ir.errors import MLCBenchError
    from ...tir.transform import lower_gpu
    try:
        lower_gpu(mod, target)
    except MLCBenchError as err:
        return f"{type(err).__name__}: {err}"
    return None


def _kernels(body) -> list:
    """The outermost blockIdx-bound loops: one kernel launch each."""
    found = []

    def visit(node, parents):
        if isinstance(node, For) and thread_tag(node) in BLOCK_TAGS and not any(
                isinstance(p, For) and thread_tag(p) in BLOCK_TAGS for p in parents):
            found.append(node)
    walk(body, visit)
    return found


def check_kernel(kernel: For, limits) -> str | None:
    """What ``kernel`` breaks (a sentence), or None."""
    loops, realizes = [], []
    walk(kernel, lambda n, ps: loops.append(n) if isinstance(n, For) else
         realizes.append((n, ps)) if isinstance(n, BlockRealize) else None)
    extents = {}
    for loop in loops:
        tag = thread_tag(loop)
        if tag is not None:
            extent = loop.extent.value if isinstance(loop.extent, IntImm) else None
            if extent is None:
                return f"the loop bound to {tag} has a symbolic extent"
            extents[tag] = max(extents.get(tag, 0), extent)
    threads = math.prod(v for k, v in extents.items() if k.startswith("threadIdx"))
    vthreads = math.prod(v for k, v in extents.items() if k.startswith("vthread"))
    where = f"(kernel of the loop {kernel.loop_var.name!r})"
    if threads > limits.max_threads_per_block:
        return (f"threads per block {threads} exceed max_threads_per_block="
                f"{limits.max_threads_per_block} {where}")
    if vthreads > limits.max_vthread:
        return f"virtual threads {vthreads} exceed max_vthread={limits.max_vthread} {where}"
    return (_annotated_bounds(realizes, threads, where)
            or _vector_width(loops, realizes, limits, where)
            or _shared_memory(realizes, limits, where)
            or _registers(realizes, limits, threads, where))


def _annotated_bounds(realizes, threads: int, where: str) -> str | None:
    for realize, _ in realizes:
        ann = realize.block.annotations
        low, high = ann.get(THREAD_EXTENT_LOW), ann.get(THREAD_EXTENT_HIGH)
        if low is not None and threads < int(low) or high is not None and threads > int(high):
            return (f"threads per block {threads} outside [{low}, {high}] annotated on "
                    f"block {realize.block.name_hint!r} {where}")
    return None


def _vector_width(loops, realizes, limits, where: str) -> str | None:
    for realize, parents in realizes:
        for loop in (p for p in parents if isinstance(p, For)):
            if loop.kind != ForKind.VECTORIZED or not isinstance(loop.extent, IntImm):
                continue
            for region in realize.block.reads + realize.block.writes:
                width = loop.extent.value * region.buffer.dtype.bits // 8
                if width > limits.max_vector_bytes:
                    return (f"vector access of {width} bytes to {region.buffer.name!r} "
                            f"exceeds max_vector_bytes={limits.max_vector_bytes} {where}")
    return None


def _footprints(realizes, scope: str) -> dict:
    """``{buffer name: bytes}`` of the ``scope`` buffers the blocks write: per thread
    block for shared memory, per thread for local memory."""
    sizes = {}
    for realize, parents in realizes:
        for region in realize.block.writes:
            if region.buffer.scope == scope:
                size = _block_footprint(realize, parents, region, scope == "shared")
                sizes[region.buffer.name] = max(sizes.get(region.buffer.name, 0), size)
    return sizes


def _shared_memory(realizes, limits, where: str) -> str | None:
    sizes = _footprints(realizes, "shared")
    total = sum(sizes.values())
    if total > limits.max_shared_memory_per_block:
        return (f"shared memory {total} bytes ({', '.join(sorted(sizes))}) exceeds "
                f"max_shared_memory_per_block={limits.max_shared_memory_per_block} {where}")
    return None


def _registers(realizes, limits, threads: int, where: str) -> str | None:
    """Local buffers are meant to live in registers: a thread whose local buffers need
    more than it may have would spill them to (slow, off-chip) local memory, which the
    modeled time does not see, so such candidates are rejected."""
    sizes = _footprints(realizes, "local")
    words = sum(sizes.values()) // 4
    allowed = min(limits.max_registers_per_thread,
                  limits.registers_per_block // max(threads, 1))
    if register_estimate(words) > allowed:
        return (f"local buffers of {words} words ({', '.join(sorted(sizes))}), an estimated "
                f"{register_estimate(words)} registers, exceed the {allowed} registers a "
                f"thread may have with {threads} threads per block {where}")
    return None


def _block_footprint(realize, parents, region, per_block: bool) -> int:
    """Bytes of ``region`` the block writes for one thread (one thread block with
    ``per_block``): the region with the block's own loops (those around it alone) and,
    per block, the thread-bound loops relaxed."""
    analyzer = Analyzer()
    loops = [p for p in parents if isinstance(p, For)]
    relaxed = {loop.loop_var: Range(loop.min, loop.extent) for loop in _own_loops(parents)}
    if per_block:       # a thread block's shared buffer holds the parts of all threads
        relaxed.update({loop.loop_var: Range(loop.min, loop.extent) for loop in loops
                        if (thread_tag(loop) or "").startswith(("threadIdx", "vthread"))})
    if per_block and not _is_true(realize.predicate):
        # lowering keeps the whole buffer for a guarded copy (it cannot bound the region
        # through the guard): count it as lowering will
        return math.prod(d.value if isinstance(d, IntImm) else 1
                         for d in region.buffer.shape) * region.buffer.dtype.bits // 8
    binding = dict(zip((iv.var for iv in realize.block.iter_vars), realize.iter_values))
    # a thread runs its vthreads one after another, each with its own part of a local
    # buffer (their parts are not adjacent: count them, not the span between them)
    elements = 1 if per_block else math.prod(
        loop.extent.value for loop in loops if (thread_tag(loop) or "").startswith("vthread")
        and isinstance(loop.extent, IntImm))
    for dim, rng in zip(region.buffer.shape, region.region):
        lo = analyzer.int_set(substitute(rng.min, binding), relaxed)
        hi = analyzer.int_set(substitute(rng.min + rng.extent - 1, binding), relaxed)
        extent = analyzer.simplify(hi.max - lo.min + 1) if lo.min is not None and \
            hi.max is not None else None
        full = dim.value if isinstance(dim, IntImm) else 1
        elements *= min(extent.value, full) if isinstance(extent, IntImm) else full
    return elements * region.buffer.dtype.bits // 8


def _is_true(predicate) -> bool:
    return predicate is None or (isinstance(predicate, IntImm) and bool(predicate.value))


def _own_loops(parents) -> list:
    """The loops right above the block that hold nothing else."""
    own = []
    for node in reversed(parents):
        if isinstance(node, (SeqStmt, Block)):
            break
        if isinstance(node, For):
            own.append(node)
    return own
