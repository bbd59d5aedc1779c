"""What schedule rules, postprocessors and mutators ask about a block and its loops.

Everything here reads the schedule's current IR and changes nothing. For a matmul
``C[i, j] += A[i, k] * B[k, j]`` under loops ``i, j, k``::

    loop_iter_types(sch, block)         # ["S", "S", "R"]
    needs_multi_level_tiling(sch, block)  # True: A does not depend on j, B not on i
    is_output_block(sch, block)         # True: it writes the parameter C
"""
from __future__ import annotations

from ..ir.errors import ScheduleError
from ..ir.structural import structural_equal
from ..arith.linear_form import to_sum
from ..tir.expr import IntImm, Var
from ..tir.function import PrimFunc
from ..tir.functor import substitute, uses_var
from ..tir.schedule.ir_utils import Located, block_realizes_under, find_all
from ..tir.stmt import Block, BlockRealize, For, IterType
from .access_pattern import index_variables

SPATIAL, REDUCE, OTHER = "S", "R", "O"
# set by MultiLevelTiling on the blocks it tiled: other rules leave those alone
TILING_STRUCTURE_ANNOTATION = "meta_schedule.tiling_structure"
# set by MultiLevelTiling on blocks whose vector operand PackVectorOperand packs
PACK_ANNOTATION = "meta_schedule.pack_vector_operand"


def locate_block(sch, block_rv) -> tuple[str, Located]:
    """``(function name, Located BlockRealize)`` of a block handle."""
    block = sch.get(block_rv)
    for gv, func in sch.mod.functions.items():
        if not isinstance(func, PrimFunc):
            continue
        # By identity: two blocks may be structurally equal, but a handle names one.
        hits = find_all(func, lambda n: isinstance(n, BlockRealize) and n.block is block)
        if hits:
            return gv.name_hint, hits[0]
    raise ScheduleError(f"block {block.name_hint!r} is not in the schedule's module")


def has_block(sch, block_rv) -> bool:
    """Whether the handle still names a block (an inlined block is gone)."""
    try:
        sch.get(block_rv)
    except ScheduleError:
        return False
    return True


def is_root_block(sch, block_rv) -> bool:
    _, hit = locate_block(sch, block_rv)
    return not any(isinstance(p, Block) for p in hit.parents)


def _uses(expr, var) -> bool:
    return uses_var(expr, lambda v: v is var)


def iter_type_letter(iter_type) -> str:
    return {IterType.DATA_PAR: SPATIAL, IterType.COMM_REDUCE: REDUCE}.get(iter_type, OTHER)


def loop_iter_types(sch, block_rv) -> list[str]:
    """For each loop above the block: "S" / "R" when it drives only spatial / only
    reduction iter vars of the block, "O" when it drives none or a mix."""
    _, hit = locate_block(sch, block_rv)
    realize = hit.node
    out = []
    for loop in hit.loops():
        kinds = {iter_type_letter(iv.iter_type)
                 for iv, value in zip(realize.block.iter_vars, realize.iter_values)
                 if _uses(value, loop.loop_var)}
        # A loop driving no iterator, or both kinds (after a fuse), counts as neither.
        out.append(kinds.pop() if len(kinds) == 1 else OTHER)
    return out


def is_spatial_for_every_block(loop: For) -> bool:
    """Every block under ``loop`` uses it, and only in spatial iter vars: its iterations
    then write disjoint elements, so it may run in parallel or as vector lanes. (A block
    that ignores the loop would redo, and race on, the same elements.)"""
    for realize in block_realizes_under(loop.body):
        pairs = list(zip(realize.block.iter_vars, realize.iter_values))
        kinds = {iv.iter_type for iv, value in pairs if _uses(value, loop.loop_var)}
        if kinds != {IterType.DATA_PAR}:
            return False
    return True


def block_kinds(block: Block) -> str:
    """``"SSR"`` for a matmul block: one letter per iter var."""
    return "".join(iter_type_letter(iv.iter_type) for iv in block.iter_vars)


def is_spatial_block(block: Block) -> bool:
    # A block with an init accumulates, even if every iterator is spatial.
    return set(block_kinds(block)) <= {SPATIAL} and block.init is None


def is_reduction_block(block: Block) -> bool:
    kinds = set(block_kinds(block))
    return REDUCE in kinds and kinds <= {SPATIAL, REDUCE} and block.init is not None


def is_output_block(sch, block_rv) -> bool:
    """Whether the block writes a parameter of its function."""
    func_name, hit = locate_block(sch, block_rv)
    # By identity: a parameter's Buffer object is the one its blocks write.
    params = {id(buf) for _, buf in sch.mod[func_name].buffer_params()}
    return any(id(region.buffer) in params for region in hit.node.block.writes)


def has_trivial_binding(sch, block_rv) -> bool:
    """Iter var ``n`` is bound to exactly the ``n``-th enclosing loop (as ``te`` writes
    blocks): each loop then tiles exactly one iter var."""
    _, hit = locate_block(sch, block_rv)
    loops = hit.loops()
    values = hit.node.iter_values
    return len(loops) == len(values) and all(
        value is loop.loop_var for value, loop in zip(values, loops))


def const_extent(loop: For):
    return loop.extent.value if isinstance(loop.extent, IntImm) else None


def needs_multi_level_tiling(sch, block_rv) -> bool:
    """TVM's test: a reduction block with trivial bindings writing one buffer, where some
    read does not depend on some spatial iter var -- so a tile reuses data. Matmul and
    conv2d pass; a row reduction such as softmax's max does not."""
    _, hit = locate_block(sch, block_rv)
    block = hit.node.block
    if len(block.writes) != 1 or not block.reads or is_spatial_block(block) or \
            not has_trivial_binding(sch, block_rv):
        return False
    spatial = [iv.var for iv in block.iter_vars if iv.iter_type == IterType.DATA_PAR
               and not _unit_domain(iv)]
    written, seen, unused = block.writes[0].buffer, set(), 0
    for region in block.reads:
        if id(region.buffer) in seen:
            return False
        seen.add(id(region.buffer))
        # The output read back by the reduction update is no input to reuse.
        if region.buffer is written:
            continue
        # A symbolic read region cannot be tiled with sampled constant sizes.
        if any(not isinstance(r.extent, IntImm) for r in region.region):
            return False
        unused += sum(not any(_uses(r.min, v) for r in region.region) for v in spatial)
    return unused >= 1


def _unit_domain(iv) -> bool:
    return isinstance(iv.dom.min, IntImm) and iv.dom.min.value == 0 and \
        isinstance(iv.dom.extent, IntImm) and iv.dom.extent.value == 1


def spatial_and_reduce_lengths(sch, block_rv):
    """``(product of spatial loop extents, product of reduction loop extents)`` of the
    loops above the block, or None when one is symbolic or drives both kinds."""
    _, hit = locate_block(sch, block_rv)
    space, reduce = 1, 1
    for loop, kind in zip(hit.loops(), loop_iter_types(sch, block_rv)):
        extent = const_extent(loop)
        if extent is None or kind == OTHER:
            return None
        if kind == SPATIAL:
            space *= extent
        else:
            reduce *= extent
    return space, reduce


def access_strides(realize: BlockRealize, loops: list, region, analyzer) -> list:
    """For each loop: the flat-index stride of one step of the loop in ``region``'s
    buffer (0 when unused, None when not a constant), as TVM's vectorization check
    reads it: the innermost buffer dimension that uses the loop decides.

    A loop that appears in an index only as a linear term ``c * loop`` steps it by
    ``c``, read off the index's linear form; one under ``//``, ``%`` or another
    non-linear operation is stepped by simplifying ``index(loop + 1) - index(loop)``."""
    bind = {iv.var: value for iv, value in zip(realize.block.iter_vars, realize.iter_values)}
    shape = [dim.value if isinstance(dim, IntImm) else None for dim in region.buffer.shape]
    dims = []                                   # innermost dimension first
    for rng, dim in zip(reversed(region.region), reversed(shape)):
        index = substitute(rng.min, bind)
        linear, nested = {}, set()
        for atom, coeff in to_sum(index, {}, {}).terms.values():
            if isinstance(atom, Var):
                linear[id(atom)] = coeff
            else:
                nested |= {id(v) for v in index_variables(atom)}
        dims.append((index, dim, linear, nested))
    out = []
    for loop in loops:
        var, stride, inner = loop.loop_var, 0, 1
        for index, dim, linear, nested in dims:
            # Under // or % the step is not a coefficient: take the difference one iteration makes.
            if id(var) in nested:
                step = analyzer.simplify(substitute(index, {var: var + 1}) - index)
                coef = step.value if isinstance(step, IntImm) else None
            elif id(var) in linear:
                coef = linear[id(var)]
            else:
                # Not in this dimension: one step of the next one out spans this dimension's size.
                inner = None if dim is None or inner is None else inner * dim
                continue
            stride = None if coef is None or inner is None else coef * inner
            break
        out.append(stride)
    return out


def vector_operand_reads(block: Block) -> list[int]:
    """Indices of the block's reads (other than its output) whose last index is the
    output's last index, with at least two dimensions: the operands a vectorized
    innermost output loop walks contiguously (matmul's ``B[k, j]``)."""
    if len(block.writes) != 1:
        return []
    out = block.writes[0]
    return [n for n, region in enumerate(block.reads)
            if not region.buffer.same_as(out.buffer) and len(region.region) >= 2
            and structural_equal(region.region[-1].min, out.region[-1].min)]


def sibling_consumers(sch, block_rv) -> list[str]:
    """Names of the blocks of the same scope that read what the block writes (a query
    that, unlike ``sch.get_consumers``, leaves no instruction in the trace)."""
    from ..tir.schedule.ir_utils import child_block_realizes
    _, hit = locate_block(sch, block_rv)
    written = {id(r.buffer) for r in hit.node.block.writes}
    return [r.block.name_hint for r in child_block_realizes(hit.scope_block().body)
            if r is not hit.node and written & {id(x.buffer) for x in r.block.reads}]
