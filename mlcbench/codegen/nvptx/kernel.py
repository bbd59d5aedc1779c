"""One device kernel of the GPU lowered form -> one LLVM function for the NVPTX backend.

The CPU emitters (expressions, loads and stores, loops, intrinsics) do the work; a
kernel differs from a CPU function only in what this subclass overrides:

* it returns ``void`` and has the ``ptx_kernel`` calling convention (LLVM 22's mark of
  an entry point; ``nvvm.annotations`` carry its thread counts as ``maxntid``);
* a thread-bound loop is no loop: its variable reads a special register,
  ``blockIdx.x`` -> ``llvm.nvvm.read.ptx.sreg.ctaid.x``, ``threadIdx.x`` -> ``...tid.x``;
* ``Allocate(scope="shared")`` is a module global in address space 3 (one copy per
  thread block: loads and stores become ``ld.shared``/``st.shared``); ``"local"`` is an
  ``alloca`` (registers once LLVM promotes it, else per-thread local memory);
* ``T.tvm_storage_sync("shared")`` -> ``llvm.nvvm.barrier0`` (``bar.sync 0``);
* ``T.tvm_warp_shuffle`` -> ``llvm.nvvm.shfl.sync.idx.f32/i32`` (``shfl.sync.idx.b32``);
* a contiguous vector access at a multiple of its lanes claims the vector's alignment
  (``ld.global.v4.b32``), as arrays on a GPU start aligned;
* a ``T.parallel`` loop runs serially inside its thread (there is no OpenMP here).
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.dtype import dtype as as_dtype
from ...tir import expr as E
from ...tir.stmt import ForKind
from ..cuda.lanes import aligned_to
from ..llvm import types as T
from ..llvm.function import (FunctionEmitter, StringFunctionAttributes, bind_arguments,
                             param_type, symbolic_shape_vars)

SHARED_ADDRSPACE = 3
_REGISTERS = {"blockIdx": "ctaid", "threadIdx": "tid"}


class KernelEmitter(FunctionEmitter):
    """FunctionEmitter for a device kernel; ``threads`` collects the launch extents."""

    # A thread's strided lanes stay separate loads: memory coalesces across threads, and
    # wider loads than the lanes need would only add traffic.
    max_shuffled_stride = 1

    def __init__(self, ctx, function, symbol: str, noalias: bool = True):
        super().__init__(ctx, function, symbol, noalias=noalias, in_parallel=True,
                         display_name=symbol)
        self.threads: dict = {}

    def _stmt_For(self, op):
        if op.kind != ForKind.THREAD_BINDING:
            super()._stmt_For(op)
            return
        tag = op.thread_binding.thread_tag if op.thread_binding is not None else ""
        kind, _, axis = tag.partition(".")
        if kind not in _REGISTERS or axis not in ("x", "y", "z"):
            self.fail(f"thread tag {tag!r} of loop {op.loop_var.name!r} has no PTX register; "
                      "expected blockIdx.x/y/z or threadIdx.x/y/z (vthread loops become "
                      "serial loops when lowering)", op)
        # A grid may be computed at launch; the threads of a block are its .maxntid.
        if not isinstance(op.extent, E.IntImm) and kind != "blockIdx":
            self.fail(f"the {tag} loop {op.loop_var.name!r} needs a constant extent", op)
        if isinstance(op.extent, E.IntImm):
            self.threads[tag] = op.extent.value
        register = self.declare_function(f"llvm.nvvm.read.ptx.sreg.{_REGISTERS[kind]}.{axis}",
                                          T.I32, [])
        index = self.builder.call(register, [], name=op.loop_var.name)
        value = T.convert(self.builder, index, as_dtype("int32"), op.loop_var.dtype)
        self._with_bound(op.loop_var, value, op.body)

    def _stmt_Allocate(self, op):
        buffer = op.buffer
        count = 1
        for extent in buffer.shape:
            if not isinstance(extent, E.IntImm):
                self.fail(f"array {buffer.name!r} of a device kernel needs a constant size", op)
            count *= extent.value
        array_type = ir.ArrayType(T.memory_type(buffer.dtype), max(count, 1))
        if buffer.scope.startswith("shared"):
            self._with_bound(buffer.data, self._shared_array(buffer.name, array_type), op.body)
        elif buffer.scope.startswith("local"):
            self._with_bound(buffer.data, self.stack_slot(array_type, buffer.name, 16), op.body)
        else:
            self.fail(f"array {buffer.name!r} has storage scope {buffer.scope!r}; a kernel "
                      "allocates only 'shared' or 'local' memory", op)

    def _shared_array(self, name: str, array_type: ir.ArrayType) -> ir.GlobalVariable:
        array = ir.GlobalVariable(self.module, array_type, self.module.get_unique_name(name),
                                  addrspace=SHARED_ADDRSPACE)
        array.linkage = "internal"
        array.initializer = ir.Constant(array_type, ir.Undefined)
        array.align = 16
        array.type = ir.PointerType(addrspace=SHARED_ADDRSPACE)   # opaque, as LLVM 22 wants
        return array

    def vector_alignment(self, buffer, base, lanes: int) -> int:
        """Kernel arrays start aligned (cudaMalloc: 256 bytes, shared: 16), so an access
        at a multiple of ``lanes`` is one ``ld.global.v4``/``st.shared.v4``."""
        whole = buffer.dtype.itemsize * lanes
        if whole <= 16 and whole & (whole - 1) == 0 and aligned_to(base, buffer, lanes):
            return whole
        return buffer.dtype.itemsize

    def emit_call(self, op):
        if op.op in ("tir.tvm_storage_sync", "tvm_storage_sync"):
            barrier = self.declare_function("llvm.nvvm.barrier0", ir.VoidType(), [])
            self.builder.call(barrier, [])
            return ir.Constant(T.I32, 0)
        if op.op == "tir.tvm_warp_shuffle":
            return self._warp_shuffle(op)
        return super().emit_call(op)

    def _warp_shuffle(self, op):
        """``tvm_warp_shuffle(mask, value, lane, width, warp_size)`` -> ``shfl.sync.idx``."""
        mask, value, lane, width = op.args[:4]
        suffix = {"float32": "f32", "int32": "i32"}.get(str(value.dtype))
        if suffix is None or not isinstance(width, E.IntImm):
            self.fail(f"a warp shuffle of {value.dtype} with width {width}: PTX shuffles "
                      "32-bit values (float32, int32) in groups of a constant width")
        vtype = T.scalar_type(value.dtype)
        fn = self.declare_function(f"llvm.nvvm.shfl.sync.idx.{suffix}", vtype,
                                   [T.I32, vtype, T.I32, T.I32])
        lane_value = self.emit_expr(lane)
        if lane_value.type != T.I32:
            lane_value = self.builder.trunc(lane_value, T.I32)
        # The clamp operand: the group's lanes in bits 8-12, the last lane in bits 0-4.
        clamp = ir.Constant(T.I32, ((32 - width.value) << 8) | 0x1F)
        return self.builder.call(fn, [ir.Constant(T.I32, mask.value & 0xFFFFFFFF),
                                      self.emit_expr(value), lane_value, clamp])


def emit_kernel(ctx, symbol: str, func) -> KernelEmitter:
    """Define the ``ptx_kernel`` ``symbol`` in ``ctx.module`` computing ``func``."""
    shape_vars = symbolic_shape_vars(func)
    arg_types = [param_type(p, func) for p in func.params] + [T.I64] * len(shape_vars)
    fn = ir.Function(ctx.module, ir.FunctionType(ir.VoidType(), arg_types), name=symbol)
    fn.calling_convention = "ptx_kernel"
    fn.attributes = StringFunctionAttributes(["nounwind"])
    emitter = KernelEmitter(ctx, fn, symbol, noalias=bool(func.attrs.get("tir.noalias", True)))
    bind_arguments(emitter, func, fn.args, shape_vars)
    emitter.emit_stmt(func.body)
    emitter.finish()
    _annotate(ctx.module, fn, emitter.threads)
    return emitter


def _annotate(module: ir.Module, fn: ir.Function, threads: dict) -> None:
    """``!nvvm.annotations``: the kernel and its threads per block (``maxntidx`` ...),
    which ptxas uses to budget registers (``.maxntid`` in the PTX)."""
    annotations = module.add_named_metadata("nvvm.annotations")
    annotations.add(module.add_metadata([fn, "kernel", ir.Constant(T.I32, 1)]))
    for axis in ("x", "y", "z"):
        count = threads.get(f"threadIdx.{axis}", 1)
        annotations.add(module.add_metadata([fn, f"maxntid{axis}", ir.Constant(T.I32, count)]))
