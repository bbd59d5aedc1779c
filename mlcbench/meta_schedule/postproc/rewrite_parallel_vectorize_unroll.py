"""RewriteParallelVectorizeUnroll: turn the root block's annotations into loop kinds.

``ParallelizeVectorizeUnroll`` left ``meta_schedule.parallel`` (a thread-work limit),
``meta_schedule.vectorize`` (a lane limit) and ``meta_schedule.unroll_explicit`` (a step
count) on the root block. For each block directly under the root, with its loops as
the other rules left them:

* **parallel**: the leading loops that every block below uses only spatially, with
  constant extents, are fused and made ``T.parallel``, adding loops until their product
  exceeds the limit or a loop holds more than one statement;
* **vectorize**: the trailing spatial loops whose accesses stay contiguous (TVM's stride
  test) are fused and made ``T.vectorized`` while their product fits the lane limit;
* **unroll**: the outermost loop of a non-spatial block gets
  ``pragma_auto_unroll_max_step`` (honoured by ``tir.transform.UnrollLoop``: inner loops
  of at most that many steps are written out) and ``pragma_unroll_explicit``.

Matmul tiled as ``i_0 j_0 i_1 j_1 k_0 i_2 j_2 k_1 i_3 j_3`` with ``i_0 = j_0 = 1`` and a
limit of 32 becomes ``for i_0_j_0_i_1_fused in T.parallel(...)``, ``j_3`` vectorized.
"""
from __future__ import annotations

from ...arith import Analyzer
from ...ir.errors import ScheduleError
from ...tir.function import PrimFunc
from ...tir.stmt import BlockRealize, ForKind, SeqStmt
from ..block_analysis import (access_strides, const_extent, is_spatial_block,
                              is_spatial_for_every_block, locate_block)
from ..schedule_rule.parallel_vectorize_unroll import (PARALLEL, UNROLL_EXPLICIT,
                                                       UNROLL_IMPLICIT, VECTORIZE)
from .postproc import Postproc

AUTO_UNROLL_MAX_STEP = "pragma_auto_unroll_max_step"
UNROLL_EXPLICIT_PRAGMA = "pragma_unroll_explicit"


class RewriteParallelVectorizeUnroll(Postproc):
    """Rewrite the loops of every function whose root block carries the annotations.

    >>> RewriteParallelVectorizeUnroll().apply(sch)      # doctest: +SKIP
    True
    """

    def apply(self, sch) -> bool:
        try:
            # A candidate whose loops refuse the rewrite fails here and is dropped by the search.
            for func_name, root_name in _annotated_roots(sch):
                root = sch.get_block(root_name, func_name=func_name)
                limits = dict(sch.get(root).annotations)
                for key in (PARALLEL, VECTORIZE, UNROLL_EXPLICIT, UNROLL_IMPLICIT):
                    if key in limits:
                        # Consumed here: a second application must not rewrite the loops again.
                        sch.unannotate(root, key)
                for block in sch.get_child_blocks(root):
                    _rewrite_block(sch, block, limits)
        except ScheduleError:
            return False
        return True


def _annotated_roots(sch) -> list:
    out = []
    for gv, func in sch.mod.functions.items():
        if isinstance(func, PrimFunc) and isinstance(func.body, BlockRealize):
            annotations = func.body.block.annotations
            if any(k in annotations for k in (PARALLEL, VECTORIZE, UNROLL_EXPLICIT,
                                               UNROLL_IMPLICIT)):
                out.append((gv.name_hint, func.body.block.name_hint))
    return out


def _rewrite_block(sch, block, limits) -> None:
    loops = sch.get_loops(block)
    if not loops:
        return
    n_parallel, n_vectorize = plan_loops(sch, block, limits.get(PARALLEL, -1),
                                         limits.get(VECTORIZE, -1))
    if n_parallel:
        fused = sch.fuse(*loops[:n_parallel]) if n_parallel > 1 else loops[0]
        sch.parallel(fused)
        # The list is kept in step with the schedule, so the vector tail is found below.
        loops = [fused] + loops[n_parallel:]
    if n_vectorize:
        tail = loops[-n_vectorize:]
        fused = sch.fuse(*tail) if n_vectorize > 1 else tail[0]
        sch.vectorize(fused)
        loops = loops[:-n_vectorize] + [fused]
    explicit = UNROLL_EXPLICIT in limits
    max_step = int(limits.get(UNROLL_EXPLICIT, limits.get(UNROLL_IMPLICIT, 0)))
    _, hit = locate_block(sch, block)
    if max_step > 0 and not is_spatial_block(hit.node.block):
        sch.annotate(loops[0], AUTO_UNROLL_MAX_STEP, max_step)
        sch.annotate(loops[0], UNROLL_EXPLICIT_PRAGMA, int(explicit))


def plan_loops(sch, block, max_parallel: int, max_vectorize: int) -> tuple[int, int]:
    """``(leading loops to parallelize, trailing loops to vectorize)`` of ``block``."""
    _, hit = locate_block(sch, block)
    loops = hit.loops()
    n_parallel = parallel_loop_count(parallel_extents(sch, block), max_parallel) \
        if max_parallel != -1 else 0
    n_vectorize = _vectorize_count(hit, loops, max_vectorize) if max_vectorize != -1 else 0
    # A loop cannot be both: the vector loops keep theirs, parallel gets the rest.
    if n_parallel + n_vectorize > len(loops):
        n_parallel = len(loops) - n_vectorize
    return n_parallel, n_vectorize


def _free(loop) -> bool:
    """A serial loop with a constant extent and no annotation yet."""
    return loop.kind == ForKind.SERIAL and not loop.annotations and \
        const_extent(loop) is not None


def parallel_extents(sch, block) -> list[int]:
    """Products of the extents of the leading loops that may run in parallel: ``[a,
    a*b, ...]`` up to the first loop that holds more than one statement."""
    _, hit = locate_block(sch, block)
    products, product = [], 1
    for loop in hit.loops():
        if not _free(loop) or not is_spatial_for_every_block(loop):
            break
        product *= const_extent(loop)
        products.append(product)
        # The loops below hold only some of the statements: fusing stops here.
        if isinstance(loop.body, SeqStmt):
            break
    return products


def parallel_loop_count(products: list, limit: int) -> int:
    """How many leading loops to fuse: add loops until the product exceeds ``limit``
    (that last loop included, as in TVM)."""
    for n, product in enumerate(products):
        if product > limit:
            return n + 1
    return len(products)


def _vectorize_count(hit, loops, max_vectorize: int) -> int:
    # Something between the innermost loop and the block (an if): nothing to vectorize.
    if not loops or loops[-1].body is not hit.node:
        return 0
    limit = _contiguous_inner_loops(hit.node, loops)
    count, product = 0, 1
    for n in range(len(loops) - 1, -1, -1):
        loop = loops[n]
        if count >= limit or not _free(loop) or not is_spatial_for_every_block(loop):
            break
        # Only a perfect nest fuses.
        if n + 1 < len(loops) and loop.body is not loops[n + 1]:
            break
        if product * const_extent(loop) > max_vectorize:
            break
        product *= const_extent(loop)
        count += 1
    return count


def _contiguous_inner_loops(realize, loops) -> int:
    """How many innermost loops fuse into one contiguous walk over every buffer the
    block touches (TVM's check): each loop outward must step by the previous loop's
    stride times its extent, or not touch the buffer."""
    analyzer = Analyzer()
    best = len(loops)
    for region in realize.block.reads + realize.block.writes:
        strides = access_strides(realize, loops, region, analyzer)
        fusible, previous = 0, None
        for n in range(len(loops) - 1, -1, -1):
            stride = strides[n]
            # A loop that does not move through this buffer does not break contiguity.
            if stride == 0:
                fusible += 1
                continue
            if stride is None:
                break
            if previous is None:
                if stride != 1 and fusible:
                    break
            elif const_extent(loops[previous]) is None or \
                    stride != strides[previous] * const_extent(loops[previous]):
                break
            fusible += 1
            previous = n
        best = min(best, fusible)
    return best
