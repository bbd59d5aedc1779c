"""VerifyGPUCode: a kernel must fit the launch limits of its GPU target.

Checked on every device kernel of ``lower_gpu``, against ``target.attrs`` (the target
tag's figures, :mod:`mlcbench.target.tags`):

* threads per block (the product of the threadIdx launch extents) against
  ``max_threads_per_block``, and each threadIdx extent against ``max_thread_x/y/z``;
* blocks along blockIdx.y / blockIdx.z against CUDA's grid limit (65535), blockIdx.x
  against 2**31 - 1;
* shared memory per block (the sum of its ``"shared"`` allocations) against
  ``max_shared_memory_per_block``;
* local memory per thread (the sum of its ``"local"`` allocations) against
  ``max_local_memory_per_thread``;
* the widest vector load or store against ``max_vector_bytes`` (16: ``float32x4``);
* registers per thread, an *estimate*: a fixed 16 (indices, addresses, loop counters)
  plus one per 4-byte word of the thread's ``"local"`` buffers (meant to live in
  registers), against ``max_registers_per_thread`` (255, the most a CUDA thread can
  address) and ``registers_per_block`` divided by the threads per block. The compiler
  that turns PTX into machine code decides the real count (it may need more, or spill
  to local memory instead); the simulator's occupancy uses the same estimate;
* warp memory: no ``"warp"`` buffer left unlowered, shuffles over groups of a power of
  two up to 32 lanes.

A violation raises :class:`GPULimitError` (a ``CodegenError``) naming the loops or the
buffer, the amount and the limit. :func:`gpu_limit_problems` lists them all instead,
for a tuner that wants to skip a candidate (TVM's ``verify_gpu_code`` returns False).
"""
from __future__ import annotations

from ...ir.dtype import dtype as as_dtype
from ...ir.errors import CodegenError
from ...ir.transform import prim_func_pass
from ...target.tags import BASE_REGISTERS
from ..expr import BufferLoad, Call
from ..functor import pre_order_visit
from ..stmt import Allocate, BufferStore
from ._common import const_int
from .thread_nest import thread_tag

# CUDA's grid dimensions (CUDA C++ Programming Guide, "Technical Specifications per
# Compute Capability": the same for every architecture since sm_30).
MAX_GRID = {"blockIdx.x": 2 ** 31 - 1, "blockIdx.y": 65535, "blockIdx.z": 65535}


class GPULimitError(CodegenError):
    """A kernel exceeds a launch limit of its GPU target."""


def _launch_loops(body) -> list:
    loops = []
    while True:
        if thread_tag(body):
            loops.append(body)
        elif not isinstance(body, Allocate):
            return loops
        body = body.body


def _bytes(buffer) -> int | None:
    count = 1
    for extent in buffer.shape:
        value = const_int(extent)
        if value is None:
            return None
        count *= value
    return count * as_dtype(buffer.dtype).bits * as_dtype(buffer.dtype).lanes // 8


def _limit(attrs, key, default):
    value = attrs.get(key)
    # A target without the figure (or with a non-integer one) gets the default limit.
    return value if isinstance(value, int) else default


def _thread_problems(name, loops, attrs, target_text) -> list:
    problems = []
    threads = [lp for lp in loops if thread_tag(lp).startswith("threadIdx")]
    total = 1
    for loop in threads:
        total *= const_int(loop.extent)
        tag = thread_tag(loop)
        key = "max_thread_" + tag[-1]
        limit = _limit(attrs, key, None)
        if limit is not None and const_int(loop.extent) > limit:
            problems.append(f"{name}: loop {loop.loop_var.name!r} launches {loop.extent} "
                            f"threads along {tag}, more than {key} = {limit} of target "
                            f"{target_text!r}")
    limit = _limit(attrs, "max_threads_per_block", 1024)
    if total > limit:
        spelled = " x ".join(f"{lp.loop_var.name!r} ({thread_tag(lp)}, {lp.extent})"
                             for lp in threads)
        problems.append(f"{name}: {total} threads per block (loops {spelled}) exceed "
                        f"max_threads_per_block = {limit} of target {target_text!r}; "
                        "split the thread loops smaller")
    for loop in loops:
        tag = thread_tag(loop)
        # A grid computed at launch (a symbolic extent) is checked by the driver then.
        if tag in MAX_GRID and (const_int(loop.extent) or 0) > MAX_GRID[tag]:
            problems.append(f"{name}: loop {loop.loop_var.name!r} launches {loop.extent} "
                            f"blocks along {tag}, more than CUDA's {MAX_GRID[tag]}")
    return problems


def _memory_problems(name, kernel, attrs, target_text) -> list:
    problems, sizes = [], {"shared": [], "local": []}
    vector_limit = _limit(attrs, "max_vector_bytes", 16)

    def visit(node):
        if isinstance(node, Allocate):
            scope = (node.buffer.scope or "global").split(".")[0]
            if scope in sizes:
                sizes[scope].append(node.buffer)
        elif isinstance(node, (BufferLoad, BufferStore)):
            dtype = as_dtype(node.value.dtype if isinstance(node, BufferStore) else node.dtype)
            width = dtype.bits * dtype.lanes // 8
            if dtype.lanes > 1 and width > vector_limit:
                kind = "store to" if isinstance(node, BufferStore) else "load of"
                problems.append(f"{name}: a {dtype} {kind} buffer {node.buffer.name!r} moves "
                                f"{width} bytes at once, more than max_vector_bytes = "
                                f"{vector_limit} of target {target_text!r}; vectorize by "
                                f"{max(1, vector_limit * 8 // dtype.bits)} lanes or fewer")
    pre_order_visit(kernel.body, visit)      # allocations in program order
    for scope, key, default, unit in (
            ("shared", "max_shared_memory_per_block", 48 * 1024, "per block"),
            ("local", "max_local_memory_per_thread", 512 * 1024, "per thread")):
        problems += _scope_problems(name, sizes[scope], scope, key, _limit(attrs, key, default),
                                    unit, target_text)
    return problems


def _scope_problems(name, buffers, scope, key, limit, unit, target_text) -> list:
    sized = [(b, _bytes(b)) for b in buffers]
    unknown = [b.name for b, size in sized if size is None]
    if unknown:
        return [f"{name}: {scope} buffer {unknown[0]!r} has a size that is not a constant; "
                f"a kernel's {scope} memory must have a constant size"]
    total = sum(size for _, size in sized)
    if total <= limit:
        return []
    spelled = ", ".join(f"{b.name!r} {size} bytes" for b, size in sized)
    return [f"{name}: {total} bytes of {scope} memory {unit} ({spelled}) exceed {key} = "
            f"{limit} of target {target_text!r}; use smaller tiles"]


def _register_problems(name, kernel, loops, attrs, target_text) -> list:
    local = []
    pre_order_visit(kernel.body, lambda n: local.append(n.buffer) if isinstance(n, Allocate)
                    and (n.buffer.scope or "").startswith("local") else None)
    words = [(b, -(-(_bytes(b) or 0) // 4)) for b in local]      # a partial word is a whole one
    estimate = BASE_REGISTERS + sum(w for _, w in words)
    threads = [lp for lp in loops if thread_tag(lp).startswith("threadIdx")]
    count = 1
    for loop in threads:
        count *= const_int(loop.extent)
    per_thread = _limit(attrs, "max_registers_per_thread", 255)
    per_block = _limit(attrs, "registers_per_block", 65536)
    allowed = min(per_thread, per_block // count)
    if estimate <= allowed:
        return []
    spelled = ", ".join(f"{b.name!r} {w}" for b, w in words)
    loops_text = " x ".join(f"{lp.loop_var.name!r} ({thread_tag(lp)}, {lp.extent})"
                            for lp in threads) or "none"
    return [f"{name}: an estimated {estimate} registers per thread ({BASE_REGISTERS} + the "
            f"words of local buffers {spelled}) exceed the {allowed} a thread may have: "
            f"max_registers_per_thread = {per_thread}, registers_per_block = {per_block} "
            f"over {count} threads per block (loops {loops_text}) of target "
            f"{target_text!r}; use smaller local tiles or fewer threads"]


def _warp_problems(name, kernel) -> list:
    """What the GPU cannot run of warp memory: a ``"warp"`` buffer LowerWarpMemory did not
    lower, a shuffle over a group that is not a power of two up to a warp."""
    problems = []

    def visit(node):
        if isinstance(node, Allocate) and (node.buffer.scope or "").startswith("warp"):
            problems.append(f"{name}: buffer {node.buffer.name!r} of scope 'warp' is not "
                            "lowered; lower the kernel with lower_gpu (LowerWarpMemory)")
        elif isinstance(node, Call) and node.op == "tir.tvm_warp_shuffle":
            width = const_int(node.args[3])
            if width is None or width > 32 or width < 1 or width & (width - 1):
                problems.append(f"{name}: a warp shuffle over groups of {node.args[3]} "
                                "lanes; the width must be a power of two up to 32")
    pre_order_visit(kernel.body, visit)
    return problems


def gpu_limit_problems(kernel, target) -> list:
    """Every limit of ``target`` that the device kernel ``kernel`` exceeds, as messages
    (an empty list when it fits)."""
    name = kernel.attrs.get("global_symbol", "kernel")
    attrs, target_text = getattr(target, "attrs", {}) or {}, str(target)
    loops = _launch_loops(kernel.body)
    return (_thread_problems(name, loops, attrs, target_text)
            + _memory_problems(name, kernel, attrs, target_text)
            + _register_problems(name, kernel, loops, attrs, target_text)
            + _warp_problems(name, kernel))


def verify_gpu_code(kernel, target) -> bool:
    """TVM's ``tir.analysis.verify_gpu_code``: whether the kernel fits ``target``."""
    return not gpu_limit_problems(kernel, target)


def VerifyGPUCode(target=None):
    """Pass: raise :class:`GPULimitError` for the first limit a device kernel exceeds
    (``target``: the kernel's own ``"target"`` attribute when not given)."""
    @prim_func_pass(opt_level=0, name="tir.VerifyGPUCode")
    def _verify(func, mod, ctx):
        if func.attrs.get("calling_conv") != "device_kernel":
            return func
        problems = gpu_limit_problems(func, target or func.attrs.get("target"))
        if problems:
            raise GPULimitError(problems[0] if len(problems) == 1 else
                                problems[0] + f" (and {len(problems) - 1} more: "
                                + "; ".join(problems[1:]) + ")")
        return func
    return _verify
