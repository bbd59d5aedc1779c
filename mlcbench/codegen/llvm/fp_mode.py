"""Denormals flushed to zero while a kernel runs (x86: MXCSR's FTZ and DAZ bits).

A kernel entry and a parallel loop's worker (which runs on OpenMP's threads, each with
its own MXCSR) save the caller's control word, set both bits, and put the saved word back
before every return. With ``-flush-denormals=0`` a worker clears both bits instead: an
OpenMP thread starts with the control word of the thread that created the team, which
may have been inside a flushing kernel::

    entry:  %saved = alloca i32 ; %flushed = alloca i32
    start:  call @llvm.x86.sse.stmxcsr(ptr %saved)
            %word = load i32, ptr %saved ; store (or %word, 0x8040), ptr %flushed
            call @llvm.x86.sse.ldmxcsr(ptr %flushed)
            ...                                  ; the kernel
            call @llvm.x86.sse.ldmxcsr(ptr %saved) ; before each ret

Setting the word costs a few instructions per call; denormal operands cost an Intel core
a microcode assist per multiply-add (see ``Target.flush_denormals`` for what it measured).
"""
from __future__ import annotations

from llvmlite import ir

from . import types as T

FLUSH_TO_ZERO = 1 << 15       # results that would be denormal are written as zero
DENORMALS_ARE_ZERO = 1 << 6   # denormal operands are read as zero


def enter_flush_mode(alloca_builder: ir.IRBuilder, builder: ir.IRBuilder,
                     declare_function, flush: bool = True) -> ir.Value:
    """Save the control word into an entry-block slot, set FTZ and DAZ (clear them with
    ``flush=False``: IEEE gradual underflow), and return the slot for
    :func:`leave_flush_mode`."""
    saved = alloca_builder.alloca(T.I32, name="saved_mxcsr")
    flushed = alloca_builder.alloca(T.I32, name="flushed_mxcsr")
    for slot in (saved, flushed):
        slot.type = T.POINTER
    builder.call(_intrinsic(declare_function, "stmxcsr"), [saved])
    word = builder.load(saved, typ=T.I32)
    bits = FLUSH_TO_ZERO | DENORMALS_ARE_ZERO
    builder.store(builder.or_(word, ir.Constant(T.I32, bits)) if flush else
                  builder.and_(word, ir.Constant(T.I32, ~bits & 0xFFFFFFFF)), flushed)
    builder.call(_intrinsic(declare_function, "ldmxcsr"), [flushed])
    return saved


def leave_flush_mode(builder: ir.IRBuilder, declare_function, saved: ir.Value) -> None:
    """Put back the control word :func:`enter_flush_mode` saved."""
    builder.call(_intrinsic(declare_function, "ldmxcsr"), [saved])


def _intrinsic(declare_function, name: str) -> ir.Function:
    return declare_function(f"llvm.x86.sse.{name}", ir.VoidType(), [T.POINTER])
