"""Target tags: named GPUs with their device limits and the figures of the GPU model.

``Target("nvidia/geforce-rtx-2080-ti")`` is a ``cuda`` target whose ``attrs`` hold the
tag's entries; ``Target("cuda")`` holds those of :data:`DEFAULT_CUDA_TAG` (the GPU that
course chapter 7 tunes for); options after the kind or tag replace single entries
(``Target("cuda -arch=sm_80 -max_threads_per_block=512")``).

Entries, read as ``target.attrs["max_threads_per_block"]``:

* limits that lowering verifies (the names of TVM's CUDA tags): ``arch``,
  ``max_threads_per_block``, ``max_shared_memory_per_block``, ``registers_per_block``,
  ``thread_warp_size``, ``max_num_threads`` (TVM's older name of the threads limit);
  ``max_thread_x/y/z`` (block dimensions), ``max_vector_bytes`` (widest load per
  thread), ``max_local_memory_per_thread``;
* figures of the simulated GPU's model: ``multiprocessor_count``, ``clock_mhz`` (boost),
  ``memory_bandwidth_gbps`` (GB/s), ``fp32_gflops`` (peak FMA rate, counting 2 FLOP per
  FMA), ``shared_memory_banks``, ``l2_cache_bytes`` and, for occupancy,
  ``max_threads_per_sm``, ``max_blocks_per_sm``, ``max_shared_memory_per_sm``,
  ``registers_per_sm``.

``max_shared_memory_per_block`` is 48 KiB on every tag, as TVM's tags have it: it is
the limit of statically sized ``__shared__`` arrays, which the CUDA C printer emits
(more needs dynamic shared memory and an opt-in, which this compiler does not do).
"""
from __future__ import annotations

from .llvm_check import TargetError

# Registers a thread is estimated to need besides its local buffers (indices, addresses,
# loop counters): lowering's VerifyGPUCode, the tuner's tile sampler and the simulated
# GPU's occupancy share this estimate, so a candidate the search keeps also lowers.
BASE_REGISTERS = 16

# Per compute capability, from the CUDA C++ Programming Guide, appendix "Compute
# Capabilities", table "Technical Specifications per Compute Capability".
_COMMON = {
    "max_threads_per_block": 1024, "max_num_threads": 1024, "thread_warp_size": 32,
    "max_thread_x": 1024, "max_thread_y": 1024, "max_thread_z": 64,
    "max_shared_memory_per_block": 48 * 1024, "registers_per_block": 65536,
    "registers_per_sm": 65536, "max_local_memory_per_thread": 512 * 1024,
    "max_vector_bytes": 16, "shared_memory_banks": 32,
}
_SM75 = dict(_COMMON, arch="sm_75", max_threads_per_sm=1024, max_blocks_per_sm=16,
             max_shared_memory_per_sm=64 * 1024)
_SM80 = dict(_COMMON, arch="sm_80", max_threads_per_sm=2048, max_blocks_per_sm=32,
             max_shared_memory_per_sm=164 * 1024)
_SM90 = dict(_COMMON, arch="sm_90", max_threads_per_sm=2048, max_blocks_per_sm=32,
             max_shared_memory_per_sm=228 * 1024)

CUDA_TAGS = {
    # NVIDIA Turing GPU Architecture whitepaper (2018), table 1, reference card: 68 SMs,
    # 4352 cores at 1545 MHz boost = 13.4 TFLOPS, 352-bit GDDR6 at 14 Gbps = 616 GB/s,
    # 5.5 MB L2.
    "nvidia/geforce-rtx-2080-ti": dict(_SM75, multiprocessor_count=68, clock_mhz=1545,
                                       memory_bandwidth_gbps=616, fp32_gflops=13448,
                                       l2_cache_bytes=5632 * 1024),
    # NVIDIA T4 Tensor Core GPU datasheet: 40 SMs (2560 cores) at 1590 MHz boost =
    # 8.1 TFLOPS, 320 GB/s GDDR6, 4 MB L2 (Turing whitepaper, TU104).
    "nvidia/nvidia-t4": dict(_SM75, multiprocessor_count=40, clock_mhz=1590,
                             memory_bandwidth_gbps=320, fp32_gflops=8141,
                             l2_cache_bytes=4096 * 1024),
    # NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020), A100 SXM4 40 GB:
    # 108 SMs at 1410 MHz boost, 19.5 TFLOPS FP32, 1555 GB/s HBM2, 40 MB L2.
    "nvidia/nvidia-a100": dict(_SM80, multiprocessor_count=108, clock_mhz=1410,
                               memory_bandwidth_gbps=1555, fp32_gflops=19500,
                               l2_cache_bytes=40 * 1024 * 1024),
    # NVIDIA H100 Tensor Core GPU datasheet and Hopper architecture whitepaper (2022),
    # H100 SXM5 80 GB: 132 SMs (16896 cores) at 1980 MHz boost = 67 TFLOPS FP32,
    # 3.35 TB/s HBM3, 50 MB L2.
    "nvidia/nvidia-h100": dict(_SM90, multiprocessor_count=132, clock_mhz=1980,
                               memory_bandwidth_gbps=3350, fp32_gflops=66900,
                               l2_cache_bytes=50 * 1024 * 1024),
}

DEFAULT_CUDA_TAG = "nvidia/geforce-rtx-2080-ti"

# Entries whose option text (``-max_threads_per_block=512``) is read as an integer.
INT_ATTRS = frozenset(k for tag in CUDA_TAGS.values() for k, v in tag.items()
                      if isinstance(v, int))


def list_tags() -> dict:
    """{tag name: its attributes} of every known tag (TVM's ``list_tags``)."""
    return {name: dict(attrs) for name, attrs in CUDA_TAGS.items()}


def is_tag(word: str) -> bool:
    """Whether a target string's first word names a tag (``vendor/model``)."""
    return "/" in word


def tag_attrs(name: str) -> dict:
    """The attributes of tag ``name``; an unknown tag is a TargetError listing the known."""
    attrs = CUDA_TAGS.get(name)
    if attrs is None:
        raise TargetError(f"unknown target tag {name!r}: expected one of {sorted(CUDA_TAGS)}")
    return dict(attrs)


def cuda_defaults() -> dict:
    """What ``Target("cuda")`` holds before its options: the default tag's attributes."""
    return tag_attrs(DEFAULT_CUDA_TAG)
