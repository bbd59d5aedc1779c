"""LowerWarpMemory: a ``"warp"`` buffer becomes per-lane registers read with shuffles.

A buffer of scope ``"warp"`` is one array per warp that lives in its lanes' registers
(TVM's LowerWarpMemory). Each lane writes its own part; a read of another lane's part
is a warp shuffle (``__shfl_sync``). With ``width`` lanes (the kernel's ``threadIdx.x``
extent, a power of two up to 32) and ``m`` elements per lane (the coefficient of
``threadIdx.x`` in the stores), element ``e`` of the warp array is element
``(e // (m * width)) * m + e % m`` of lane ``(e // m) % width``::

    W = T.allocate([32], "float32", "warp")       # before (tx: threadIdx.x, 32)
    W_1[tx] = A[bx * 32 + tx]
    B[bx * 32 + tx] = W_1[(tx + 1) % 32]

    W = T.allocate([1], "float32", "local")       # after
    W_1[0] = A[bx * 32 + tx]
    B[bx * 32 + tx] = T.tvm_warp_shuffle(T.uint32(0xFFFFFFFF), W_1[0], (tx + 1) % 32, 32, 32)

``tir.tvm_warp_shuffle(mask, value, lane, width, warp_size)`` is the value ``value`` has
in lane ``lane`` of the caller's group of ``width`` lanes (CUDA's ``__shfl_sync(mask,
value, lane, width)``); every lane of the warp executes it together.

Refused with a :class:`~mlcbench.ir.errors.CodegenError` naming the buffer: a kernel
without ``threadIdx.x`` or whose extent is not a power of two up to 32; a store at an
index whose lane is not the storing thread's own (``W[tx + 1] = ...``); stores that
disagree on ``m``; a size that is not a multiple of ``m * width``; a read of another
lane whose position in that lane depends on the thread (a shuffle reads one register,
the same in every lane); a read of another lane under a condition that depends on the
thread (every lane of the warp must take part in a shuffle).
"""
from __future__ import annotations

from ...arith import Analyzer
from ...ir.errors import CodegenError
from ...ir.transform import prim_func_pass
from ..expr import BufferLoad, Call, IntImm, Range, Var
from ..functor import StmtExprMutator, post_order_visit, substitute, uses_var
from ..op import floordiv, floormod
from ..stmt import Allocate, BufferStore, For
from ._common import const_int
from .thread_nest import thread_tag

WARP_SIZE = 32
FULL_MASK = 0xFFFFFFFF
SHUFFLE_OP = "tir.tvm_warp_shuffle"


def _launch(kernel) -> dict:
    """{tag: (loop var, extent)} of the kernel's launch nest."""
    found, body = {}, kernel.body
    while True:
        tag = thread_tag(body)
        if tag:
            found[tag] = (body.loop_var, const_int(body.extent))
        elif not isinstance(body, Allocate):
            return found
        body = body.body


class _WarpBuffer:
    """One warp buffer's layout: ``m`` elements per lane, ``width`` lanes."""

    def __init__(self, kernel_name, buffer, tx, width, analyzer):
        self.where = f"{kernel_name}: warp buffer {buffer.name!r}"
        self.buffer, self.tx, self.width, self.analyzer = buffer, tx, width, analyzer
        self.m = None
        self.local = None

    def lane(self, index):
        return self.analyzer.simplify(floormod(floordiv(index, self.m), self.width))

    def offset(self, index):
        m, width = self.m, self.width
        return self.analyzer.simplify(floordiv(index, m * width) * m + floormod(index, m))

    def set_layout(self, stores) -> None:
        for store in stores:
            index = store.indices[0]
            step = self.analyzer.simplify(substitute(index, {self.tx: self.tx + 1}) - index)
            m = const_int(step)
            if m is None or m <= 0:
                raise CodegenError(
                    f"{self.where}: store at index {index} does not give each lane of "
                    f"threadIdx.x a constant number of elements of its own; a lane writes "
                    "only its own registers")
            if self.m is not None and m != self.m:
                raise CodegenError(f"{self.where}: stores give each lane {self.m} and {m} "
                                   "elements; they must agree")
            self.m = m
        if self.m is None:
            raise CodegenError(f"{self.where} is never stored to; a warp buffer is filled "
                               "by its lanes")
        size = const_int(self.buffer.shape[0]) if len(self.buffer.shape) == 1 else None
        if size is None or size % (self.m * self.width):
            raise CodegenError(
                f"{self.where} has shape {self.buffer.shape}; a warp buffer holds "
                f"{self.m} element(s) per lane for {self.width} lanes: its size must be a "
                f"constant multiple of {self.m * self.width}")
        data = Var(self.buffer.data.name, self.buffer.data.dtype,
                   type_annotation=(self.buffer.dtype, "local"))
        self.local = self.buffer.replace(shape=(IntImm("int32", size // self.width),),
                                         data=data, scope="local")


class _Rewrite(StmtExprMutator):
    def __init__(self, warp: dict, analyzer, thread_vars):
        self.warp = warp               # old data Var -> _WarpBuffer
        self.analyzer, self.thread_vars = analyzer, thread_vars
        self.divergent = []            # enclosing conditions that depend on the thread

    def visit_IfThenElse(self, stmt):
        # Under the condition: `if tx < 16: ... W[tx + 16]` reads lane tx + 16's element 0.
        condition = self.visit(stmt.condition)
        divergent = uses_var(condition, lambda v: v in self.thread_vars)
        self.divergent.append(condition if divergent else None)
        try:
            with self.analyzer.constraint_scope(condition):
                then_case = self.visit(stmt.then_case)
            else_case = self.visit(stmt.else_case) if stmt.else_case is not None else None
        finally:
            self.divergent.pop()
        return stmt.replace(condition=condition, then_case=then_case, else_case=else_case)

    def visit_Allocate(self, alloc):
        info = self.warp.get(alloc.buffer.data)
        alloc = self.generic_visit(alloc)
        return alloc if info is None else alloc.replace(buffer=info.local)

    def visit_DeclBuffer(self, decl):
        info = self.warp.get(decl.buffer.data)
        decl = self.generic_visit(decl)
        return decl if info is None else decl.replace(buffer=info.local)

    def visit_BufferStore(self, store):
        info = self.warp.get(store.buffer.data)
        store = self.generic_visit(store)
        if info is None:
            return store
        index = store.indices[0]
        if not info.analyzer.can_prove_equal(info.lane(index), info.tx):
            raise CodegenError(
                f"{info.where}: store at index {index} writes lane {info.lane(index)}, "
                f"not the storing thread's own lane {info.tx.name}; a lane writes only its "
                "own registers")
        return BufferStore(info.local, store.value, (info.offset(index),))

    def visit_BufferLoad(self, load):
        info = self.warp.get(load.buffer.data)
        load = self.generic_visit(load)
        if info is None:
            return load
        index = load.indices[0]
        lane, offset = info.lane(index), info.offset(index)
        local = BufferLoad(info.local, (offset,))
        if info.analyzer.can_prove_equal(lane, info.tx):
            return local
        conditions = [c for c in self.divergent if c is not None]
        if conditions:
            raise CodegenError(
                f"{info.where}: read at index {index} (lane {lane}) is a warp shuffle under "
                f"the condition `{conditions[-1]}`, which depends on the thread; every lane "
                "of the warp must take part in a shuffle: read it before the `if`")
        if uses_var(offset, lambda v: v is info.tx):
            raise CodegenError(
                f"{info.where}: read at index {index} takes element {offset} of lane "
                f"{lane}; a shuffle reads the same register in every lane, so the element "
                f"may not depend on {info.tx.name}")
        return Call(load.dtype, SHUFFLE_OP, (IntImm("uint32", FULL_MASK), local, lane,
                                             IntImm("int32", info.width),
                                             IntImm("int32", WARP_SIZE)))


def _bound_loops(kernel) -> Analyzer:
    """An analyzer that knows the range of every loop of constant bounds in ``kernel``."""
    analyzer, loops = Analyzer(), []
    post_order_visit(kernel.body, lambda n: loops.append(n) if isinstance(n, For) else None)
    for loop in loops:
        lo, extent = const_int(loop.min), const_int(loop.extent)
        if lo is not None and extent is not None:
            dtype = loop.loop_var.dtype
            analyzer.bind(loop.loop_var, Range(IntImm(dtype, lo), IntImm(dtype, lo + extent)),
                          allow_override=True)
    return analyzer


def lower_warp_memory(kernel):
    """The device kernel with its warp buffers lowered (module docstring)."""
    allocs = []
    post_order_visit(kernel.body, lambda n: allocs.append(n.buffer) if isinstance(n, Allocate)
                     and (n.buffer.scope or "").startswith("warp") else None)
    if not allocs:
        return kernel
    name = kernel.attrs.get("global_symbol", "kernel")
    launch = _launch(kernel)
    if "threadIdx.x" not in launch:
        raise CodegenError(f"{name}: warp buffer {allocs[0].name!r} needs threadIdx.x "
                           "lanes; the kernel launches no threadIdx.x loop")
    tx, width = launch["threadIdx.x"]
    if width > WARP_SIZE or width & (width - 1):
        raise CodegenError(
            f"{name}: warp buffer {allocs[0].name!r} is shared by the lanes of threadIdx.x, "
            f"whose extent {width} is not a power of two up to {WARP_SIZE}; split "
            f"threadIdx.x by {WARP_SIZE} (or fewer) and bind the outer part to threadIdx.y")
    analyzer = _bound_loops(kernel)
    warp = {}
    for buffer in allocs:
        info = _WarpBuffer(name, buffer, tx, width, analyzer)
        stores = []
        post_order_visit(kernel.body, lambda n: stores.append(n) if isinstance(n, BufferStore)
                         and n.buffer.data is buffer.data else None)
        info.set_layout(stores)
        warp[buffer.data] = info
    thread_vars = {var for var, _ in launch.values()}
    return kernel.with_body(_Rewrite(warp, analyzer, thread_vars).visit(kernel.body))


@prim_func_pass(opt_level=0, name="tir.LowerWarpMemory")
def _lower_warp_memory(func, mod, ctx):
    if func.attrs.get("calling_conv") != "device_kernel":
        return func
    return lower_warp_memory(func)


def LowerWarpMemory():
    """Pass: lower ``"warp"`` buffers of device kernels (module docstring)."""
    return _lower_warp_memory
