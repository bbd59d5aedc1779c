"""``T.parallel`` loops: outline the body and run it on libgomp's thread team.

For ``for i in T.parallel(n): body`` inside kernel ``k`` we emit::

    k_par0_body(captured..., lo, hi)     ; for i in [lo, hi): body   (pointers noalias)
    k_par0(ptr frame)                    ; unpack frame; claim chunks, call body on each
    k:  frame = {captured..., min, extent, next = 0}; GOMP_parallel(k_par0, frame, num_cores, 0)

Chunking is guided, as OpenMP's ``schedule(guided)``: a thread takes the next
``ceil(remaining / (2 * n))`` iterations from the frame's shared counter (a
compare-and-swap) until none remain. The first chunks are large contiguous ranges, the
last ones single iterations, so the threads finish together. With fixed halves, a
thread that lost its core for a while (another process, the hypervisor) held the whole
kernel back; now the other thread takes over what is left. A parallel loop nested
inside another runs serially.
The body function keeps ``noalias`` on its buffer pointers: loaded from a frame, the
pointers would lose it, and the vectorizer would give up on the loop (measured: half
speed for an i-k-j matmul).
"""
from __future__ import annotations

import ctypes.util
import functools
import os
from functools import lru_cache

from llvmlite import ir

from ...ir.errors import CodegenError
from . import types as T
from .fp_mode import enter_flush_mode, leave_flush_mode
from .loop_hints import divides_loop_var_in_an_index


@lru_cache(maxsize=None)
def load_openmp_runtime() -> str:
    """Load libgomp into the process once so JIT-compiled code can call ``GOMP_parallel``.

    ``GOMP_SPINCOUNT`` is lowered first: on few cores, spinning workers slow down the
    next numpy (OpenBLAS) call by milliseconds.
    """
    import llvmlite.binding as llvm
    os.environ.setdefault("GOMP_SPINCOUNT", "10000")
    name = ctypes.util.find_library("gomp") or "libgomp.so.1"
    try:
        llvm.load_library_permanently(name)
    except RuntimeError as err:
        raise CodegenError(f"parallel loops need the OpenMP runtime libgomp, which could not be "
                           f"loaded ({name}): {err}") from None
    os.register_at_fork(after_in_child=functools.partial(_one_thread_after_fork, name))
    return name


def _one_thread_after_fork(library_name: str) -> None:
    """A forked child inherits libgomp's record of the parent's thread team but not its
    threads: its first parallel region would wait for them forever. Kernels take
    ``min(num_cores, omp_get_max_threads())`` threads, so one thread here keeps every
    parallel loop of the child (already built or built later) serial and correct."""
    ctypes.CDLL(library_name).omp_set_num_threads(1)


class ParallelLoops:
    """Mixin of FunctionEmitter: ``emit_parallel_for``."""

    def emit_parallel_for(self, loop) -> None:
        load_openmp_runtime()
        captured = self._distinct_captures()
        begin = self.emit_expr(loop.min)
        extent = self.emit_expr(loop.extent)
        frame_type = ir.LiteralStructType([v.type for _, v in captured] + [begin.type] * 3)
        frame = self.stack_slot(frame_type, "parallel_frame")
        # The shared counter counts from 0; each chunk adds the loop's min back.
        next_chunk = ir.Constant(begin.type, 0)
        for k, value in enumerate([v for _, v in captured] + [begin, extent, next_chunk]):
            slot = self.builder.gep(frame, [ir.Constant(T.I32, 0), ir.Constant(T.I32, k)],
                                    inbounds=True, source_etype=frame_type)
            self.builder.store(value, slot)
        symbol = self.ctx.unique_symbol(f"{self.symbol}_par")
        body_fn = self._emit_parallel_body(symbol + "_body", loop, captured, begin.type)
        worker = self._emit_parallel_worker(symbol, body_fn, frame_type, len(captured))
        gomp = self.declare_function("GOMP_parallel", ir.VoidType(),
                                     [T.POINTER, T.POINTER, T.I32, T.I32])
        self.builder.call(gomp, [worker, frame, self._thread_count(), ir.Constant(T.I32, 0)])

    def _thread_count(self) -> ir.Value:
        """``min(num_cores, omp_get_max_threads())``: the target's threads, fewer where the
        OpenMP runtime allows fewer (OMP_NUM_THREADS, or one in a forked child)."""
        allowed = self.builder.call(self.declare_function("omp_get_max_threads", T.I32, []), [])
        wanted = ir.Constant(T.I32, self.ctx.num_threads)
        return self.builder.select(self.builder.icmp_signed("<", allowed, wanted), allowed,
                                   wanted)

    def _distinct_captures(self) -> list:
        """[(vars sharing the value, value)] for every value in scope, each value once
        (a handle and its buffer's ``data`` share a pointer; two noalias parameters
        for one pointer would be a lie)."""
        groups: dict[int, tuple[list, ir.Value]] = {}
        for var, value in self.vars.items():
            groups.setdefault(id(value), ([], value))[0].append(var)
        return list(groups.values())

    def _emit_parallel_body(self, name, loop, captured, index_type) -> ir.Function:
        from .function import FunctionEmitter
        arg_types = [v.type for _, v in captured] + [index_type, index_type]
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), arg_types), name=name)
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        # Inlined into the worker, its pointers would come from the frame and lose noalias.
        fn.attributes.add("noinline")
        inner = FunctionEmitter(self.ctx, fn, self.symbol, noalias=self.noalias,
                                in_parallel=True, display_name=self.display_name)
        for (variables, value), arg in zip(captured, fn.args):
            if isinstance(value.type, ir.PointerType):
                inner.mark_pointer_arg(arg)
            for var in variables:
                inner.vars[var] = arg
        lo, hi = fn.args[-2], fn.args[-1]
        inner.emit_loop(loop.loop_var, lo, hi, lambda: inner.emit_stmt(loop.body),
                        not divides_loop_var_in_an_index(loop.loop_var, loop.body))
        inner.finish()
        return fn

    def _emit_parallel_worker(self, name, body_fn, frame_type, n_captured) -> ir.Function:
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [T.POINTER]), name=name)
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        builder = ir.IRBuilder(fn.append_basic_block("entry"))
        # OpenMP's threads each have their own floating-point mode, inherited from the
        # thread that created the team (perhaps in a flushing kernel): set it either way.
        saved = enter_flush_mode(builder, builder, self.declare_function,
                                 flush=self.ctx.flush_denormals) \
            if self.ctx.controls_fp_mode else None
        frame = fn.args[0]
        slots = [builder.gep(frame, [ir.Constant(T.I32, 0), ir.Constant(T.I32, k)],
                             inbounds=True, source_etype=frame_type)
                 for k in range(len(frame_type.elements))]
        fields = [builder.load(slot, typ=elem_type)
                  for slot, elem_type in zip(slots[:-1], frame_type.elements[:-1])]
        begin, extent, counter = fields[-2], fields[-1], slots[-1]
        ty = extent.type
        nthreads = builder.call(self.declare_function("omp_get_num_threads", T.I32, []), [])
        nthreads = builder.sext(nthreads, ty) if ty != T.I32 else nthreads
        pieces = builder.mul(nthreads, ir.Constant(ty, 2))
        align = ty.width // 8
        # Monotonic is enough: the counter only hands out ranges; the team's join orders the data.
        first = builder.load_atomic(counter, "monotonic", align, typ=ty)
        entry = builder.block
        head, claim, run, done = (fn.append_basic_block(n) for n in ("head", "claim", "run", "done"))
        builder.branch(head)
        builder.position_at_end(head)
        lo = builder.phi(ty, name="lo")
        lo.add_incoming(first, entry)
        builder.cbranch(builder.icmp_signed("<", lo, extent), claim, done)
        builder.position_at_end(claim)
        remaining = builder.sub(extent, lo)
        size = builder.sdiv(builder.sub(builder.add(remaining, pieces), ir.Constant(ty, 1)), pieces)
        hi = builder.add(lo, size)
        # Another thread may have claimed first: on failure, retry from the value it left.
        swap = builder.cmpxchg(counter, lo, hi, "monotonic", "monotonic")
        seen = builder.extract_value(swap, 0)
        lo.add_incoming(seen, claim)
        builder.cbranch(builder.extract_value(swap, 1), run, head)
        builder.position_at_end(run)
        builder.call(body_fn, fields[:n_captured] + [builder.add(begin, lo), builder.add(begin, hi)])
        lo.add_incoming(builder.load_atomic(counter, "monotonic", align, typ=ty), run)
        builder.branch(head)
        builder.position_at_end(done)
        if saved is not None:
            leave_flush_mode(builder, self.declare_function, saved)
        builder.ret_void()
        return fn
