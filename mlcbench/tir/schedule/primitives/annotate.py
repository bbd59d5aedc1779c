"""Loop kinds and annotations: parallel, vectorize, unroll, annotate, unannotate.

``parallel``/``vectorize`` require, as TVM does, that every block below binds the loop
only to spatial iter vars: running reduction steps at once would race on the
accumulator. They also require that no iteration writes an element another iteration
reads or writes (see ``loop_overlap``): a block that indexes with the loop variable
directly, or whose "spatial" iter var reads a neighbour's result, carries a dependence
from one iteration to the next.
"""
from __future__ import annotations

from ..errors import fail
from ..ir_utils import block_realizes_under, find_block, find_loop, replace_stmts, uses_any
from .loop_overlap import find_overlap
from ...expr import Range, Var, const
from ...function import PrimFunc
from ...stmt import ForKind, IterType, IterVar


_VERB = {"parallel": "parallelized", "vectorize": "vectorized", "bind": "bound to threads"}


def _check_spatial_only(func, primitive: str, loop) -> None:
    for realize in block_realizes_under(loop.body):
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if iv.iter_type != IterType.DATA_PAR and uses_any(value, [loop.loop_var]):
                fail(primitive, f"loop {loop.loop_var.name!r} is bound to the "
                     f"{iv.iter_type.value} iter var {iv.var.name!r} of block "
                     f"{realize.block.name_hint!r}; only loops bound to spatial iter vars can "
                     f"be {_VERB[primitive]}",
                     func, loops=[loop.loop_var], blocks=[realize.block.name_hint])


def _check_iterations_disjoint(func, primitive: str, located) -> None:
    loop = located.node
    found = find_overlap(loop, located.parents)
    if found is None:
        return
    w, o = found.write, found.other
    name = loop.loop_var.name
    verb = "writes" if o.kind == "writes" else "reads"
    fail(primitive, f"iterations of loop {name!r} overlap on buffer "
         f"{w.declared.buffer.name!r}: block {w.block!r} writes {w.declared} and block "
         f"{o.block!r} {o.kind} {o.declared}; iteration {_where(found.first)} writes "
         f"{found.first_region} and iteration {_where(found.second)} {verb} "
         f"{found.second_region}. Only a loop whose iterations touch disjoint elements "
         f"(or only read the same ones) can be {_VERB[primitive]}",
         func, loops=[loop.loop_var], blocks=sorted({w.block, o.block}))


def _where(values: dict) -> str:
    first, *rest = values.items()
    text = f"{first[0]}={first[1]}"
    return text + (f" ({', '.join(f'{k}={v}' for k, v in rest)})" if rest else "")


def set_loop_kind(func: PrimFunc, loop_var: Var, kind: ForKind, primitive: str) -> PrimFunc:
    """Mark a loop parallel / vectorized / unrolled / serial."""
    located = find_loop(func, loop_var, primitive)
    loop = located.node
    if kind in (ForKind.PARALLEL, ForKind.VECTORIZED):
        _check_spatial_only(func, primitive, loop)
        _check_iterations_disjoint(func, primitive, located)
    if loop.kind not in (ForKind.SERIAL, kind) and kind != ForKind.SERIAL:
        fail(primitive, f"loop {loop_var.name!r} is already {loop.kind.value}", func,
             loops=[loop_var])
    return replace_stmts(func, {loop: loop.replace(kind=kind)})


def _target(func, block_name, loop_var, primitive):
    if block_name is not None:
        realize = find_block(func, block_name, primitive).node
        return realize, realize.block
    loop = find_loop(func, loop_var, primitive).node
    return loop, loop


def annotate(func: PrimFunc, key: str, value, block_name=None, loop_var=None) -> PrimFunc:
    """Set ``annotations[key] = value`` on a block or a loop."""
    holder, node = _target(func, block_name, loop_var, "annotate")
    new_node = node.replace(annotations={**node.annotations, key: value})
    new = holder.replace(block=new_node) if holder is not node else new_node
    return replace_stmts(func, {holder: new})


def unannotate(func: PrimFunc, key: str, block_name=None, loop_var=None) -> PrimFunc:
    """Remove the annotation ``key`` from a block or a loop."""
    holder, node = _target(func, block_name, loop_var, "unannotate")
    if key not in node.annotations:
        what = f"block {block_name!r}" if block_name else f"loop {loop_var.name!r}"
        fail("unannotate", f"{what} has no annotation {key!r}; it has "
             f"{sorted(node.annotations)}", func,
             loops=[loop_var] if loop_var is not None else [],
             blocks=[block_name] if block_name else [])
    new_node = node.replace(annotations={k: v for k, v in node.annotations.items() if k != key})
    new = holder.replace(block=new_node) if holder is not node else new_node
    return replace_stmts(func, {holder: new})


_THREAD_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y",
                "threadIdx.z", "vthread.x", "vthread.y", "vthread.z", "vthread")


def bind(func: PrimFunc, loop_var: Var, thread_axis: str) -> PrimFunc:
    """Bind a loop to a GPU thread axis (``T.thread_binding(n, thread="threadIdx.x")``)."""
    loop = find_loop(func, loop_var, "bind").node
    if thread_axis not in _THREAD_TAGS:
        fail("bind", f"unknown thread axis {thread_axis!r}; expected one of "
             f"{list(_THREAD_TAGS)}", func, loops=[loop_var])
    if loop.kind != ForKind.SERIAL:
        fail("bind", f"loop {loop_var.name!r} is already {loop.kind.value}", func,
             loops=[loop_var])
    if not thread_axis.startswith("vthread"):
        _check_spatial_only(func, "bind", loop)
    axis = IterVar(Range(const(0, loop_var.dtype), loop.extent), Var(thread_axis, loop_var.dtype),
                   IterType.THREAD_INDEX, thread_axis)
    return replace_stmts(func, {loop: loop.replace(kind=ForKind.THREAD_BINDING,
                                                   thread_binding=axis)})
