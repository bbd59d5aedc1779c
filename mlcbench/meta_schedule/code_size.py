"""How much straight-line code a scheduled candidate hands to LLVM once unrolled.

LLVM's instruction schedulers grow faster than linearly with a basic block's size: a
candidate whose unrolled and vectorized body holds tens of thousands of statements (a
64-wide vectorized loop inside a 16x unroll inside another unroll) compiles for 20-40 s
and is never the fast one. TVM's RewriteParallelVectorizeUnroll bounds the unrolling
it asks for (``max_unroll_steps``); here the builder counts the result before compiling
and refuses a candidate over the target's limit (:func:`statement_limit`) with the
reason::

    unrolled_statements(sch.mod)    # a 4-row unroll around 16 lanes, init and update: 128
    statement_limit(Target("llvm -mcpu=znver3"))    # 512

The count is that of ``tir.transform.UnrollLoop``: leaf statements (stores, calls)
multiplied through loops that are written out -- ``T.unroll`` and vectorized loops,
and serial loops small enough for the ``pragma_auto_unroll_max_step`` in force -- while
a loop that stays a loop counts its body once.
"""
from __future__ import annotations

from ..target import Target
from ..tir.function import PrimFunc
from ..tir.stmt import Block, BlockRealize, For, ForKind, SeqStmt
from ..tir.transform._common import const_int
from ..tir.transform.unroll_loop import AUTO_STEP_ANNOTATION, loop_steps

__all__ = ["GPU_STATEMENT_LIMIT", "oversized_reason", "statement_limit",
           "unrolled_statements"]

# GPU kernels: unrolling there is bounded by registers per thread, checked elsewhere.
GPU_STATEMENT_LIMIT = 8192


def statement_limit(target) -> int:
    """Four statements per fp32 lane of the vector register file (16 registers, 32 with
    AVX-512): twice what a register tile's init and update need when every register is
    an accumulator. On a 2-core Zen host, AVX2 bodies of 544 statements took LLVM 15 s,
    of 1024 25 s, while those up to 160 took 0.5-1.5 s."""
    target = target if isinstance(target, Target) else Target(str(target))
    if target.is_gpu:
        return GPU_STATEMENT_LIMIT
    width = target.vector_width_bits
    registers = 32 if width >= 512 else 16
    return 4 * registers * max(1, width // 32)


def unrolled_statements(mod) -> int:
    """The largest count of leaf statements after unrolling among ``mod``'s PrimFuncs."""
    funcs = [f for f in mod.functions.values() if isinstance(f, PrimFunc)]
    return max((_count(f.body, 0) for f in funcs), default=0)


def oversized_reason(mod, limit: int) -> str | None:
    """Why ``mod`` is too large to compile in reasonable time, or None when it is not."""
    size = unrolled_statements(mod)
    if size <= limit:
        return None
    return (f"the unrolled and vectorized body holds {size} statements, over the limit of "
            f"{limit}; compiling it would take LLVM tens of seconds (unroll or vectorize "
            f"less)")


def _count(stmt, auto_max_step: int) -> float:
    if isinstance(stmt, SeqStmt):
        return sum(_count(s, auto_max_step) for s in stmt.seq)
    if isinstance(stmt, For):
        return _count_loop(stmt, auto_max_step)
    if isinstance(stmt, BlockRealize):
        return _count(stmt.block, auto_max_step)
    if isinstance(stmt, Block):
        init = _count(stmt.init, auto_max_step) if stmt.init is not None else 0
        return init + _count(stmt.body, auto_max_step)
    inner = [getattr(stmt, name, None) for name in ("body", "then_case", "else_case")]
    inner = [s for s in inner if s is not None]
    return sum(_count(s, auto_max_step) for s in inner) if inner else 1


def _count_loop(loop: For, auto_max_step: int) -> float:
    annotations = loop.annotations or {}
    if AUTO_STEP_ANNOTATION in annotations:
        auto_max_step = int(annotations[AUTO_STEP_ANNOTATION])
    body = _count(loop.body, auto_max_step)
    extent = const_int(loop.extent)
    if extent is None:
        return body
    # The same decision UnrollLoop takes for a serial loop under an auto-unroll limit.
    written_out = loop.kind in (ForKind.UNROLLED, ForKind.VECTORIZED) or (
        loop.kind == ForKind.SERIAL and auto_max_step > 0
        and extent * loop_steps(loop.body) <= auto_max_step)
    return extent * body if written_out else body
