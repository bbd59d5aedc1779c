"""What GPU schedule rules and postprocessors read from a target, and from thread-bound loops.

A GPU target (``Target("cuda")``, ``Target("nvidia/geforce-rtx-2080-ti")``) carries the
device limits as attributes; where one is missing the CUDA figure common to every GPU
since sm_50 is used::

    limits = gpu_limits(Target("nvidia/geforce-rtx-2080-ti"))
    limits.max_threads_per_block        # 1024
    limits.max_shared_memory_per_block  # 49152 bytes
"""
from __future__ import annotations

from dataclasses import dataclass

from ..target.tags import BASE_REGISTERS
from ..tir.stmt import For, ForKind

__all__ = ["GPULimits", "gpu_limits", "is_gpu_target", "thread_tag", "thread_extents"]

BLOCK_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
THREAD_TAGS = ("threadIdx.x", "threadIdx.y", "threadIdx.z")


@dataclass(frozen=True)
class GPULimits:
    """The launch limits a candidate must respect (TVM's ``VerifyGPUCode`` reads the same
    four: vthreads and vector width are fixed there as here)."""

    max_threads_per_block: int = 1024
    thread_warp_size: int = 32
    max_shared_memory_per_block: int = 48 * 1024
    max_vthread: int = 8
    max_vector_bytes: int = 16
    registers_per_block: int = 65536
    max_registers_per_thread: int = 255


def register_estimate(words: int) -> int:
    """Registers a thread with ``words`` 4-byte words of local buffers is estimated to
    need: the estimate of lowering's VerifyGPUCode and of the simulator's occupancy, so
    that a candidate the search keeps also lowers."""
    return BASE_REGISTERS + words


def is_gpu_target(target) -> bool:
    """Whether ``target`` (a Target) compiles for a GPU (kind cuda / nvptx, nvidia tags)."""
    return "gpu" in getattr(target, "keys", ()) or target.kind.name in ("cuda", "nvptx")


def gpu_limits(target) -> GPULimits:
    """The limits of ``target``, read from its attributes, CUDA defaults elsewhere."""
    defaults = GPULimits()
    attrs = getattr(target, "attrs", {}) or {}

    def read(name, fallback_name=None):
        value = attrs.get(name, attrs.get(fallback_name) if fallback_name else None)
        return int(value) if value not in (None, True) else getattr(defaults, name)
    return GPULimits(
        max_threads_per_block=read("max_threads_per_block", "max_num_threads"),
        thread_warp_size=read("thread_warp_size"),
        max_shared_memory_per_block=read("max_shared_memory_per_block"),
        max_vector_bytes=read("max_vector_bytes"),
        registers_per_block=read("registers_per_block", "max_registers_per_block"))


def thread_tag(loop: For) -> str | None:
    """The thread tag a loop is bound to (``"threadIdx.x"``), or None."""
    if loop.kind != ForKind.THREAD_BINDING or loop.thread_binding is None:
        return None
    return loop.thread_binding.thread_tag


def thread_extents(loops) -> dict:
    """``{tag: extent}`` of the thread-bound loops among ``loops`` (constant extents;
    a symbolic one reads as None)."""
    from ..tir.expr import IntImm
    out = {}
    for loop in loops:
        tag = thread_tag(loop)
        if tag is not None:
            out[tag] = int(loop.extent.value) if isinstance(loop.extent, IntImm) else None
    return out
