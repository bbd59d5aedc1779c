"""One PrimFunc -> one LLVM function with the kernel C ABI.

ABI (what the runtime calls through ctypes)::

    int32_t symbol(void *buffer_or_scalar_0, ..., int64_t shape_var_0, ...)

Buffers arrive as pointers to their first element, scalars by value (bool as one
byte), then every symbolic dimension that is not already a scalar parameter as
``int64`` in :func:`symbolic_shape_vars` order. The kernel returns 0, or -1 when an
``AssertStmt`` fails or a heap allocation cannot be made.
"""
from __future__ import annotations

import itertools

from llvmlite import ir

from ...ir.dtype import dtype as as_dtype
from ...ir.errors import CodegenError
from ...tir import expr as E
from . import types as T
from .expr import ExprEmitter
from .fp_mode import enter_flush_mode, leave_flush_mode
from .parallel import ParallelLoops
from .stmt import StmtEmitter


class StringFunctionAttributes(ir.FunctionAttributes):
    """Function attributes that also accept LLVM's ``"key"="value"`` string attributes."""

    def add(self, name):
        if name.startswith('"'):
            set.add(self, name)
        else:
            super().add(name)


class ModuleContext:
    """What every function of one LLVM module shares: the module, target and name counters."""

    def __init__(self, module: ir.Module, target):
        self.module = module
        self.target = target
        self.num_threads = max(1, int(getattr(target, "num_cores", 1) or 1))
        self.flush_denormals = bool(getattr(target, "flush_denormals", False))
        # x86 CPU targets: MXCSR (FTZ and DAZ) decides how denormals are treated.
        self.controls_fp_mode = bool(getattr(target, "x86_cpu", False))
        self._counter = itertools.count()

    def unique_symbol(self, prefix: str) -> str:
        return f"{prefix}{next(self._counter)}"


class FunctionEmitter(ExprEmitter, StmtEmitter, ParallelLoops):
    """Emits statements into one LLVM function; kernels and outlined parallel bodies alike."""

    def __init__(self, ctx: ModuleContext, function: ir.Function, symbol: str,
                 noalias: bool = True, in_parallel: bool = False, display_name: str = ""):
        self.ctx, self.module, self.function = ctx, ctx.module, function
        self.display_name = display_name or symbol
        self.symbol, self.noalias, self.in_parallel = symbol, noalias, in_parallel
        # The entry block holds only allocas: LLVM promotes those to registers, and they run once.
        entry = function.append_basic_block("entry")
        self.start_block = function.append_basic_block("start")
        self.alloca_builder = ir.IRBuilder(entry)
        self.builder = ir.IRBuilder(self.start_block)
        self.vars: dict = {}
        self.heap_stack: list = []
        self.stack_bytes = 0
        self.returns_status = isinstance(function.ftype.return_type, ir.IntType)
        self.saved_fp_mode = None     # set by flush_denormals(); restored before each return

    def flush_denormals(self) -> None:
        """Run the rest of the function with denormals flushed to zero (see fp_mode)."""
        self.saved_fp_mode = enter_flush_mode(self.alloca_builder, self.builder,
                                              self.declare_function)

    def restore_fp_mode(self) -> None:
        if self.saved_fp_mode is not None:
            leave_flush_mode(self.builder, self.declare_function, self.saved_fp_mode)

    def fail(self, message: str, node=None):
        where = f"in function {self.display_name!r}: {message}"
        if node is not None:
            text = _describe(node)
            where += f"\n  at: {text}"
        raise CodegenError(where)

    def stack_slot(self, elem_type: ir.Type, name: str = "", align: int | None = None):
        """An ``alloca`` in the entry block (allocated once per call, even inside loops),
        as an opaque ``ptr`` so that stores of any type go through it."""
        slot = self.alloca_builder.alloca(elem_type, name=name)
        slot.align = align
        slot.type = T.POINTER     # llvmlite types allocas as typed pointers; LLVM 22 has only ptr
        return slot

    def mark_pointer_arg(self, arg: ir.Argument) -> None:
        if self.noalias:
            arg.add_attribute("noalias")
        # A kernel never keeps a buffer pointer beyond the call.
        arg.add_attribute("captures(none)")

    def emit_failure_exit(self) -> None:
        """Free live heap buffers and return the error status (-1)."""
        free = self.declare_function("free", ir.VoidType(), [T.POINTER])
        for pointer in reversed(self.heap_stack):
            self.builder.call(free, [pointer])
        self.restore_fp_mode()
        if self.returns_status:
            self.builder.ret(ir.Constant(T.I32, -1))
        else:
            self.builder.ret_void()

    def finish(self) -> None:
        """Close the entry block (allocas only) and return success from the open block."""
        self.alloca_builder.branch(self.start_block)
        if not self.builder.block.is_terminated:
            self.restore_fp_mode()
            if self.returns_status:
                self.builder.ret(ir.Constant(T.I32, 0))
            else:
                self.builder.ret_void()


def symbolic_shape_vars(func) -> list:
    """Vars used as buffer dimensions that are not scalar parameters, in first-use order.

    ``A: T.Buffer((n, 4))``, ``B: T.Buffer((n, m))`` -> ``[n, m]``. These are passed
    after the parameters as ``int64`` (the runtime reads them off the array shapes).
    """
    params = set(func.params)
    found: list = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            continue
        for extent in buffer.shape:
            for var in _free_vars(extent):
                if var not in params and var not in found:
                    found.append(var)
    return found


def _free_vars(expr) -> list:
    from ...tir.functor import post_order_visit
    out: list = []
    post_order_visit(expr, lambda n: out.append(n) if isinstance(n, E.Var) else None)
    if isinstance(expr, E.Var):
        out.append(expr)
    return out


def param_type(param, func) -> ir.Type:
    if param in func.buffer_map or param.dtype.is_handle:
        return T.POINTER
    if param.dtype.is_bool:
        return T.I8
    return T.value_type(param.dtype)


def emit_prim_func(ctx: ModuleContext, symbol: str, func) -> ir.Function:
    """Define ``symbol`` in ``ctx.module`` computing ``func`` (a lowered PrimFunc)."""
    shape_vars = symbolic_shape_vars(func)
    arg_types = [param_type(p, func) for p in func.params] + [T.I64] * len(shape_vars)
    fn = ir.Function(ctx.module, ir.FunctionType(T.I32, arg_types), name=symbol)
    fn.attributes = StringFunctionAttributes(["nounwind"])
    # LLVM prefers 256-bit vectors on AVX-512 CPUs unless a function asks for more.
    if getattr(ctx.target, "vector_width_bits", 0) >= 512:
        fn.attributes.add('"prefer-vector-width"="512"')
    emitter = FunctionEmitter(ctx, fn, symbol, noalias=bool(func.attrs.get("tir.noalias", True)),
                              display_name=func.attrs.get("global_symbol") or symbol)
    bind_arguments(emitter, func, fn.args, shape_vars)
    if ctx.flush_denormals:
        emitter.flush_denormals()
    emitter.emit_stmt(func.body)
    emitter.finish()
    return fn


def bind_arguments(emitter: FunctionEmitter, func, args, shape_vars) -> None:
    """Name ``args`` and bind the parameters, their buffers' data pointers and then the
    symbolic shape variables to them (the ABI of the module docstring)."""
    for param, arg in zip(func.params, args):
        arg.name = param.name
        _bind_param(emitter, func, param, arg)
    for var, arg in zip(shape_vars, args[len(func.params):]):
        arg.name = var.name
        emitter.vars[var] = T.convert(emitter.builder, arg, as_dtype("int64"), var.dtype)


def _bind_param(emitter: FunctionEmitter, func, param, arg) -> None:
    buffer = func.buffer_map.get(param)
    if buffer is not None or param.dtype.is_handle:
        emitter.mark_pointer_arg(arg)
        emitter.vars[param] = arg
        if buffer is not None:
            emitter.vars[buffer.data] = arg
        return
    value = arg
    if param.dtype.is_bool:
        # Any nonzero byte is true, as in C.
        value = emitter.builder.icmp_unsigned("!=", arg, ir.Constant(T.I8, 0))
    emitter.vars[param] = value


def _describe(node) -> str:
    try:
        text = node.script() if hasattr(node, "script") else repr(node)
    except Exception:  # a printer that cannot show a half-lowered node must not hide the error
        text = type(node).__name__
    text = " ".join(text.split())
    return text if len(text) <= 240 else text[:237] + "..."
