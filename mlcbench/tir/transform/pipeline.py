"""The TIR lowering pipeline and the *lowered form* it produces for the code generator.

``lower(mod_or_func)`` runs :func:`default_lowering_pipeline` (a ``Sequential`` named
``"tir.lower"``) inside the current ``PassContext``, so instruments see every pass::

    tir.VerifyCPUCompatible   GPU-only constructs (thread-bound loops) -> CodegenError
    tir.LowerInitBlock        T.init() -> if <reduce vars at their min>: init
    tir.ConvertBlocksToOpaque block iter vars -> their bindings
    tir.CompactBufferAllocation intermediate buffers -> allocated where used, at the size used
    tir.StorageAlign          storage_align annotations -> padded strides
    tir.LowerOpaqueBlock      blocks -> if (predicate) / Allocate (alloc_buffers)
    tir.Simplify
    tir.FlattenBuffer         A[i, j] -> A_flat[i * n + j]
    tir.Simplify
    tir.UnrollLoop            T.unroll loops with constant extent -> copies
    tir.VectorizeLoop         T.vectorized loops -> Ramp / Broadcast vector code
    tir.InjectPrefetch        pragma_prefetch_ahead loops -> tir.prefetch of their vector loads
    tir.Simplify
    tir.RemoveNoOp

The lowered form
----------------
What the code generator may rely on for every PrimFunc of the result:

* ``params`` are handle ``Var`` s (buffers) or scalar ``Var`` s; ``buffer_map`` keeps the
  *original* parameter Buffers (shapes, strides, dtype) for argument checking.
* The body holds no ``Block``/``BlockRealize``. Statements are:

  - ``For`` of kind ``SERIAL`` or ``PARALLEL``. ``VECTORIZED`` never remains (vector
    loops become vector code, or ``SERIAL`` when they cannot). ``UNROLLED`` never
    remains either: a symbolic-extent unroll loop becomes ``SERIAL`` with the annotation
    ``{"pragma_unroll": 1}`` (LLVM unroll metadata is welcome, not required). Loops
    may carry other annotations, which codegen may ignore. ``THREAD_BINDING`` is
    rejected before lowering on the CPU.
  - ``BufferStore`` / ``BufferLoad`` on one-dimensional buffers. The buffer's ``data``
    Var is a parameter buffer's ``data`` Var or that of an enclosing ``Allocate``.
    The single index is a scalar integer expression or a ``Ramp(base, stride, lanes)``
    (a vector access: the value dtype has the same lanes; the stride is usually 1 and
    may be any scalar: the LLVM code generator loads a small constant stride with vector
    loads and shuffles, and gathers/scatters lane by lane otherwise). Every lane of a
    vector access is in bounds, except in one form: a guard that keeps some lanes out
    is a versioned loop (``VectorizeLoop``), whose border version is the serial loop or,
    for one load of a small constant stride, ``T.if_then_else(mask, A[ramp], other)``
    with a vector ``mask``, a masked load that reads only the lanes the mask keeps.
  - ``Allocate(buffer, body)`` with a flat buffer: shape ``(n,)``, dtype, scope
    ``"global"``, ``"local"``, ``"shared"`` or a named scope like ``"global.A_reg"``.
    Its storage lives for ``body``; codegen places small constant-size ones on the stack.
  - ``IfThenElse``, ``LetStmt``, ``SeqStmt``, ``Evaluate``, ``AssertStmt``.
* Expressions: everything in ``mlcbench.tir.expr``, including ``Ramp``/``Broadcast`` and
  vector-typed arithmetic, comparisons, ``Select``, ``Cast``, ``Let``, lane-wise math
  calls (``Call("tir.exp", ...)`` with a vector dtype), ``Call("tir.if_then_else")``
  (only the taken side is evaluated; with a vector dtype its condition is a scalar, or
  a vector mask over one load of a small constant stride),
  ``Call("tir.call_extern", name, ...)``; ``Evaluate(Call("tir.prefetch", address, rw,
  locality, cache_type))`` with ``address`` a ``tvm_access_ptr`` (a hint: the address
  may lie past the buffer's end).
* Every Var is defined once (params, loop vars, let vars) before its uses.
"""
from __future__ import annotations

from ...ir.errors import InvalidTypeError
from ...ir.module import IRModule
from ...ir.transform import Sequential
from .compact_buffer import CompactBufferAllocation
from .flatten_buffer import FlattenBuffer
from .inject_prefetch import InjectPrefetch
from .lower_init_block import LowerInitBlock
from .lower_opaque_block import ConvertBlocksToOpaque, LowerOpaqueBlock, VerifyCPUCompatible
from .remove_no_op import RemoveNoOp
from .simplify import Simplify
from .storage_align import StorageAlign
from .unroll_loop import UnrollLoop
from .vectorize_loop import VectorizeLoop


def default_lowering_pipeline() -> Sequential:
    """The passes that turn scheduled TensorIR into the lowered form (module docstring)."""
    return Sequential([
        # First, so a GPU schedule fails with its own loop names before any rewriting.
        VerifyCPUCompatible(),
        # Before ConvertBlocksToOpaque: the init condition is on the block's reduce iterators.
        LowerInitBlock(),
        ConvertBlocksToOpaque(),
        # Needs the blocks' alloc_buffers, so it runs before LowerOpaqueBlock removes them.
        CompactBufferAllocation(),
        # After CompactBufferAllocation, which rebuilds the buffers it moves without strides.
        StorageAlign(),
        LowerOpaqueBlock(),
        Simplify(),
        FlattenBuffer(),
        Simplify(),
        UnrollLoop(),
        VectorizeLoop(masked_loads=True),
        InjectPrefetch(),
        Simplify(),
        # Last: simplification can leave empty loops and branches with constant conditions.
        RemoveNoOp(),
    ], name="tir.lower")


def lower(mod_or_func, name: str = "main") -> IRModule:
    """Lower a PrimFunc or IRModule to the lowered form, inside the current PassContext.

    A PrimFunc is wrapped in a module under its ``global_symbol`` (else ``name``).

    >>> lowered = lower(func)            # doctest: +SKIP
    >>> lowered["main"].body             # loops, flat stores, vectors; no blocks
    """
    from ..function import PrimFunc
    if isinstance(mod_or_func, PrimFunc):
        mod_or_func = IRModule.from_expr(mod_or_func, name)
    if not isinstance(mod_or_func, IRModule):
        raise InvalidTypeError(f"lower expects a PrimFunc or an IRModule, found "
                               f"{type(mod_or_func).__name__}")
    return default_lowering_pipeline()(mod_or_func)
