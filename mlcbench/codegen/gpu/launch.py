"""Reading the GPU lowered form: a kernel's launch nest and the host's launch sequence.

A device kernel's body is a perfect nest of thread-bound loops (blockIdx.* first, then
threadIdx.*) with the block's ``Allocate(scope="shared")`` between the two groups::

    for bx in T.thread_binding(8, thread="blockIdx.x"):
        A_sh = T.allocate([128], "float32", "shared")
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            ... the body every thread runs ...

:func:`launch_nest` splits it into those parts; :func:`launch_sequence` reads the host
function's ``tir.launch_kernel`` calls in order.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ...arith import Analyzer
from ...ir.errors import CodegenError
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.function import PrimFunc
from ...tir.functor import substitute

BLOCK_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
THREAD_TAGS = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
BARRIER_OP = "tir.tvm_storage_sync"
LAUNCH_OP = "tir.launch_kernel"


@dataclass(frozen=True)
class Axis:
    """One launch dimension: the loop variable, its tag and its extent (an int; for a
    blockIdx an expression of the symbolic dimensions until :meth:`LaunchNest.bound`)."""
    var: E.Var
    tag: str
    extent: object


@dataclass(frozen=True)
class LaunchNest:
    """A kernel split into its grid, its block-level wrappers and the per-thread body.

    ``wrappers`` are the ``Allocate``/``DeclBuffer`` statements between the blockIdx and
    threadIdx loops, outermost first (their ``body`` fields are stale: rebuild with
    :meth:`wrap`).
    """
    name: str
    blocks: tuple
    threads: tuple
    wrappers: tuple
    body: S.Stmt

    @property
    def grid(self) -> tuple:
        return tuple(_extent_of(self.blocks, tag) for tag in BLOCK_TAGS)

    @property
    def block_dim(self) -> tuple:
        return tuple(_extent_of(self.threads, tag) for tag in THREAD_TAGS)

    @property
    def num_blocks(self) -> int:
        return math.prod(self.grid)

    @property
    def symbolic(self) -> bool:
        """Whether the grid depends on the arguments (computed at each launch)."""
        return any(not isinstance(a.extent, int) for a in self.blocks)

    def bound(self, bindings: dict) -> "LaunchNest":
        """This nest with its grid computed from ``bindings`` (symbolic dimension ->
        value); ``self`` when the grid is constant."""
        if not self.symbolic:
            return self
        values = {v: E.const(int(x), v.dtype) for v, x in bindings.items()
                  if isinstance(v, E.Var) and not v.dtype.is_handle and np.ndim(x) == 0}
        blocks = []
        for axis in self.blocks:
            extent = axis.extent
            if not isinstance(extent, int):
                extent = Analyzer().simplify(substitute(extent, values))
                if not isinstance(extent, E.IntImm):
                    raise CodegenError(f"kernel {self.name!r}: the grid extent of "
                                       f"{axis.var.name!r} ({axis.tag}) is {axis.extent}, "
                                       "which the arguments do not determine")
                extent = extent.value
            blocks.append(dataclasses.replace(axis, extent=extent))
        return dataclasses.replace(self, blocks=tuple(blocks))

    @property
    def num_threads(self) -> int:
        return math.prod(self.block_dim)

    def wrap(self, body: S.Stmt) -> S.Stmt:
        """``body`` inside this kernel's block-level Allocate/DeclBuffer statements."""
        for wrapper in reversed(self.wrappers):
            body = dataclasses.replace(wrapper, body=body)
        return body

    def shared_buffers(self) -> list:
        return [w.buffer for w in self.wrappers
                if isinstance(w, S.Allocate) and w.buffer.scope.startswith("shared")]


def _extent_of(axes, tag: str) -> int:
    return next((a.extent for a in axes if a.tag == tag), 1)


def is_barrier(stmt) -> bool:
    return (isinstance(stmt, S.Evaluate) and isinstance(stmt.value, E.Call)
            and stmt.value.op == BARRIER_OP)


def launch_nest(kernel: PrimFunc, name: str) -> LaunchNest:
    """Split ``kernel`` (a device kernel in the GPU lowered form) into a LaunchNest."""
    blocks, threads, wrappers = [], [], []
    stmt = kernel.body
    while True:
        if isinstance(stmt, S.For) and stmt.kind == S.ForKind.THREAD_BINDING:
            axis = _axis(name, stmt)
            if axis.tag in BLOCK_TAGS:
                if threads:
                    raise CodegenError(f"kernel {name!r}: loop {axis.var.name!r} bound to "
                                       f"{axis.tag} is inside a threadIdx loop; blockIdx "
                                       "loops must come first")
                blocks.append(axis)
            elif axis.tag in THREAD_TAGS:
                threads.append(axis)
            else:
                raise CodegenError(f"kernel {name!r}: loop {axis.var.name!r} is bound to "
                                   f"{axis.tag!r}; the simulator runs blockIdx.* and "
                                   "threadIdx.* (lower vthread loops first)")
            stmt = stmt.body
        # Allocations between the grid and the threads are per block (shared memory).
        elif isinstance(stmt, (S.Allocate, S.DeclBuffer)) and not threads:
            wrappers.append(stmt)
            stmt = stmt.body
        else:
            break
    _check_unique_tags(name, blocks + threads)
    return LaunchNest(name, tuple(blocks), tuple(threads), tuple(wrappers), stmt)


def _axis(name: str, loop: S.For) -> Axis:
    tag = loop.thread_binding.thread_tag if loop.thread_binding is not None else ""
    # Only the grid may depend on the arguments: the threads are compiled in.
    constant = isinstance(loop.extent, E.IntImm) or tag in BLOCK_TAGS
    if not constant or not (isinstance(loop.min, E.IntImm) and loop.min.value == 0):
        raise CodegenError(f"kernel {name!r}: the launch loop {loop.loop_var.name!r} "
                           f"({tag}) must start at 0 and have a constant extent, found "
                           f"min={loop.min}, extent={loop.extent}")
    extent = loop.extent
    return Axis(loop.loop_var, tag, extent.value if isinstance(extent, E.IntImm) else extent)


def _check_unique_tags(name: str, axes: list) -> None:
    seen = set()
    for axis in axes:
        if axis.tag in seen:
            raise CodegenError(f"kernel {name!r}: {axis.tag} is bound twice in the launch "
                               "nest; deeper loops of a tag must use the tag's variable")
        seen.add(axis.tag)


@dataclass(frozen=True)
class Launch:
    """One ``tir.launch_kernel`` call of the host function: kernel name and argument exprs."""
    kernel: str
    args: tuple


def launch_sequence(host: PrimFunc, name: str) -> tuple:
    """``(launches, allocations)``: the host's kernel launches in order, and the
    ``Allocate(scope="global")`` buffers that carry data between kernels."""
    launches, allocations = [], []

    def walk(stmt):
        if isinstance(stmt, S.SeqStmt):
            for item in stmt.seq:
                walk(item)
        elif isinstance(stmt, (S.Allocate, S.DeclBuffer)):
            if isinstance(stmt, S.Allocate):
                allocations.append(stmt.buffer)
            walk(stmt.body)
        elif (isinstance(stmt, S.Evaluate) and isinstance(stmt.value, E.Call)
              and stmt.value.op == LAUNCH_OP):
            kernel_name, *args = stmt.value.args
            launches.append(Launch(kernel_name.value, tuple(args)))
        # Evaluate(0) is an empty statement; anything else would run on the host.
        elif not (isinstance(stmt, S.Evaluate) and isinstance(stmt.value, E.IntImm)):
            raise CodegenError(f"host function {name!r}: expected only kernel launches "
                               f"(tir.launch_kernel) and global allocations, found "
                               f"{type(stmt).__name__}: {stmt}")
    walk(host.body)
    return launches, allocations
