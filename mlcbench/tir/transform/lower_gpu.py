"""``lower_gpu(mod, target)``: scheduled TensorIR with thread-bound loops to the GPU
lowered form (host launch functions and device kernels).

The pipeline (:func:`gpu_lowering_pipeline`) is the CPU one (:mod:`.pipeline`) without
``VerifyCPUCompatible``, with a thread-aware ``CompactBufferAllocation``,
``tir.InjectVirtualThread`` after FlattenBuffer (vthread loops interleaved, per-vthread
copies of local buffers: :mod:`.inject_virtual_thread`), and then::

    tir.SplitHostDevice   each top-level thread nest -> a kernel <func>_kernel<i> with one
                          perfect launch nest; the function -> launches (thread_nest.py)
    tir.LowerWarpMemory   "warp" buffers -> per-lane "local" ones read with
                          tvm_warp_shuffle (lower_warp_memory.py)
    tir.ThreadSync        T.tvm_storage_sync("shared") where threads exchange data
    tir.VerifyGPUCode     launch limits of the target (threads, shared/local memory, vectors)

The GPU lowered form
--------------------
The CPU lowered form (read :mod:`.pipeline`'s docstring) with these additions:

* **Device kernels**: PrimFuncs with attrs ``{"global_symbol": "main_kernel0",
  "calling_conv": "device_kernel", "target": <the GPU Target>}``. ``params`` are the
  handle Vars (and scalar Vars) the kernel uses, in the order of the original
  function's params, then the data Vars of the ``"global"`` intermediates it uses;
  ``buffer_map`` keeps the original parameter Buffers (and the flat intermediates).
  The body is a perfect nest of ``For(kind=THREAD_BINDING)`` loops, one per launched
  tag, in the order blockIdx.x/y/z, threadIdx.x/y/z (only the tags used; ``min`` 0,
  ``extent`` = launch extent, a constant for threadIdx, for blockIdx possibly an
  expression of the symbolic dimensions such as ``(n + 255) // 256``, computed at
  launch; ``For.thread_binding.thread_tag`` is the tag).
  ``Allocate(scope="shared")`` sit between the last blockIdx loop and the first
  threadIdx loop (one copy per block). Inside the innermost threadIdx loop: the
  per-thread body, with no thread-bound loops (a loop of the same tag deeper down is
  the tag's loop var, under ``if tx < extent`` when shorter), ``Allocate(scope=
  "local")`` (per thread), no vthread loops (interleaved by InjectVirtualThread; a
  serial loop where one cannot be), and barriers.
* **Barriers**: ``Evaluate(Call("int32", "tir.tvm_storage_sync", (StringImm("shared"),)))``,
  never under a condition that depends on a thread index.
* **Host function**: the original name, attrs ``{"global_symbol": name, "target": the
  host Target ("llvm" unless the GPU target names a host), "calling_conv":
  "host_launch"}``, the original params and buffer_map; body: ``Evaluate(Call("int32",
  "tir.launch_kernel", (StringImm("main_kernel0"), *args)))`` per kernel in launch
  order, possibly inside ``Allocate(scope="global")`` of intermediates passed between
  kernels.
* Vector accesses (Ramp indices, vector dtypes) may appear per thread (vectorized
  cooperative fetch).
"""
from __future__ import annotations

from ...ir.errors import CodegenError, InvalidTypeError
from ...ir.module import IRModule
from ...ir.transform import Sequential, module_pass
from .compact_buffer import CompactBufferAllocation
from .flatten_buffer import FlattenBuffer
from .inject_virtual_thread import InjectVirtualThread
from .lower_init_block import LowerInitBlock
from .lower_opaque_block import ConvertBlocksToOpaque, LowerOpaqueBlock
from .lower_warp_memory import LowerWarpMemory
from .remove_no_op import RemoveNoOp
from .simplify import Simplify
from .storage_align import StorageAlign
from .thread_nest import split_function
from .thread_sync import ThreadSync
from .unroll_loop import UnrollLoop
from .vectorize_loop import VectorizeLoop
from .verify_gpu_code import VerifyGPUCode


def gpu_target(target):
    """``target`` as a Target of kind cuda/nvptx/opencl (a string or tag is converted);
    other kinds are a CodegenError saying what is supported."""
    from ...target import Target
    target = target if isinstance(target, Target) else Target(target)
    if target.kind.name not in ("cuda", "nvptx", "opencl"):
        raise CodegenError(f"lower_gpu: target {str(target)!r} is a {target.kind.name} "
                           "target; GPU lowering supports 'cuda' (and 'nvptx', 'opencl', "
                           "or a tag such as 'nvidia/nvidia-a100')")
    return target


def host_target(target):
    """The host of a GPU target: its ``host`` when given, else ``Target("llvm")``."""
    from ...target import Target
    host = getattr(target, "host", None)
    return host if host is not None else Target("llvm")


def SplitHostDevice(target):
    """Pass: every PrimFunc becomes a host launch function plus its device kernels."""
    host = host_target(target)

    @module_pass(opt_level=0, name="tir.SplitHostDevice")
    def _split(mod, ctx):
        out = IRModule({}, mod.attrs)
        for gv, func in mod.items():
            if getattr(func, "ir_level", None) != "tir":
                out[gv] = func
                continue
            name = func.attrs.get("global_symbol") or gv.name_hint
            host_func, kernels = split_function(func, name, target, host)
            out[gv] = host_func
            for kernel in kernels:
                out[kernel.attrs["global_symbol"]] = kernel
        return out
    return _split


def gpu_lowering_pipeline(target) -> Sequential:
    """The passes that turn scheduled TensorIR into the GPU lowered form for ``target``."""
    target = gpu_target(target)
    return Sequential([
        LowerInitBlock(),
        ConvertBlocksToOpaque(),
        # Thread loops decide who shares an allocation, by its scope.
        CompactBufferAllocation(gpu=True),
        StorageAlign(),
        LowerOpaqueBlock(),
        Simplify(),
        FlattenBuffer(),
        Simplify(),
        # On flat buffers: a virtual thread's copy of a local buffer is an offset.
        InjectVirtualThread(),
        UnrollLoop(),
        VectorizeLoop(),
        Simplify(),
        RemoveNoOp(),
        SplitHostDevice(target),
        # Per kernel: the lanes are the launched threadIdx.x.
        LowerWarpMemory(),
        # Barriers are planned per kernel, so the kernels must exist first.
        ThreadSync(),
        # Last: the limits apply to the kernels as they will be launched.
        VerifyGPUCode(target),
    ], name="tir.lower_gpu")


def lower_gpu(mod_or_func, target="cuda", name: str = "main") -> IRModule:
    """Lower a PrimFunc or IRModule for a GPU ``target`` (module docstring), inside the
    current PassContext. A PrimFunc is wrapped under its ``global_symbol`` (else ``name``).

    >>> lowered = lower_gpu(sch.mod, "cuda")          # doctest: +SKIP
    >>> lowered["main_kernel0"].attrs["calling_conv"]  # doctest: +SKIP
    'device_kernel'
    """
    from ..function import PrimFunc
    if isinstance(mod_or_func, PrimFunc):
        mod_or_func = IRModule.from_expr(mod_or_func,
                                         mod_or_func.attrs.get("global_symbol") or name)
    if not isinstance(mod_or_func, IRModule):
        raise InvalidTypeError(f"lower_gpu expects a PrimFunc or an IRModule, found "
                               f"{type(mod_or_func).__name__}")
    return gpu_lowering_pipeline(target)(mod_or_func)
