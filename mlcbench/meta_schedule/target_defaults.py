"""The default schedule rules, postprocessors and mutators of each target kind, in one table.

``ScheduleRule.create``, ``Postproc.create`` and ``Mutator.create`` read it; a target
kind picks a row (``llvm`` / ``c``: CPU; ``cuda`` / ``nvptx``, which the ``nvidia/...``
tags are: GPU). The values are TVM's defaults for the same kinds::

    [type(r).__name__ for r in ScheduleRule.create("nvidia/geforce-rtx-2080-ti")]
    ['AutoInline', 'MultiLevelTiling', 'AutoInline', 'ParallelizeVectorizeUnroll', 'AutoBind']

The GPU rules leave out TVM's ``CrossThreadReduction`` (reductions without a spatial
axis to tile stay on one thread per output) and its Tensor Core tiling, and unroll at
most 64 steps where TVM also tries 512 and 1024: written-out loops that long make a
candidate's lowering and simulation take seconds to tens of seconds, and the simulated
GPU's counters do not reward them (they count each unrolled load).
"""
from __future__ import annotations

from ..ir.errors import InvalidValueError

__all__ = ["target_family", "default_rules", "default_postprocs", "default_mutators"]

GPU_UNROLL_STEPS = [0, 16, 64]
KIND_FAMILY = {"llvm": "cpu", "c": "cpu", "cuda": "gpu", "nvptx": "gpu"}


def target_family(kind) -> str:
    """``"cpu"`` or ``"gpu"`` for a Target, a target string or a kind name."""
    from ..target import Target
    if isinstance(kind, str) and kind.split()[0] in KIND_FAMILY:
        return KIND_FAMILY[kind.split()[0]]
    try:
        name = (kind if isinstance(kind, Target) else Target(kind)).kind.name
    except Exception as err:     # an unparsable target string: say what was expected
        raise InvalidValueError(f"no default tuning configuration for target {kind!r}: "
                                f"{err}") from None
    if name not in KIND_FAMILY:
        raise InvalidValueError(f"no default tuning configuration for target kind {name!r}; "
                                f"expected one of {sorted(KIND_FAMILY)}")
    return KIND_FAMILY[name]


def _cpu_rules() -> list:
    from .schedule_rule import (AddRFactor, AutoInline, MultiLevelTiling,
                                ParallelizeVectorizeUnroll, RandomComputeLocation, ReuseType)
    return [
        AutoInline(into_producer=False, into_consumer=True, inline_const_tensor=True,
                   disallow_if_then_else=True, require_injective=True,
                   require_ordered=True, disallow_op=["tir.exp"]),
        AddRFactor(max_jobs_per_core=16, max_innermost_factor=64),
        MultiLevelTiling(structure="SSRSRS", tile_binds=None, max_innermost_factor=64,
                         vector_load_lens=None, reuse_read=None,
                         reuse_write=ReuseType(req="may", levels=[1, 2], scope="global"),
                         pack_vector_operand="may"),
        ParallelizeVectorizeUnroll(max_jobs_per_core=16, max_vectorize_extent=64,
                                   unroll_max_steps=[0, 16, 64, 512], unroll_explicit=True),
        RandomComputeLocation(),
    ]


def _gpu_rules() -> list:
    from .schedule_rule import (AutoBind, AutoInline, MultiLevelTiling,
                                ParallelizeVectorizeUnroll, ReuseType)
    return [
        AutoInline(into_producer=True, into_consumer=True, inline_const_tensor=True,
                   disallow_if_then_else=False, require_injective=False,
                   require_ordered=False, disallow_op=None),
        MultiLevelTiling(structure="SSSRRSRS",
                         tile_binds=["blockIdx.x", "vthread.x", "threadIdx.x"],
                         max_innermost_factor=64, vector_load_lens=[1, 2, 3, 4, 8, 16],
                         reuse_read=ReuseType(req="must", levels=[4], scope="shared"),
                         reuse_write=ReuseType(req="must", levels=[3], scope="local")),
        AutoInline(into_producer=False, into_consumer=True, inline_const_tensor=True,
                   disallow_if_then_else=False, require_injective=False,
                   require_ordered=False, disallow_op=None),
        ParallelizeVectorizeUnroll(max_jobs_per_core=-1, max_vectorize_extent=-1,
                                   unroll_max_steps=GPU_UNROLL_STEPS, unroll_explicit=True),
        AutoBind(max_threadblocks=256, thread_extents=[32, 64, 128, 256, 512, 1024]),
    ]


def _cpu_postprocs() -> list:
    from .postproc import (DisallowDynamicLoop, PackVectorOperand,
                           RewriteParallelVectorizeUnroll, RewriteReductionBlock)
    return [DisallowDynamicLoop(), RewriteParallelVectorizeUnroll(), PackVectorOperand(),
            RewriteReductionBlock()]


def _gpu_postprocs() -> list:
    from .postproc import (DisallowDynamicLoop, RewriteCooperativeFetch,
                           RewriteParallelVectorizeUnroll, RewriteReductionBlock,
                           RewriteUnboundBlock, VerifyGPUCode)
    return [DisallowDynamicLoop(), RewriteCooperativeFetch(), RewriteUnboundBlock(),
            RewriteParallelVectorizeUnroll(), RewriteReductionBlock(), VerifyGPUCode()]


def _cpu_mutators() -> dict:
    from .mutator import (MutateComputeLocation, MutateParallel, MutateTileSize,
                          MutateUnroll)
    return {MutateTileSize(): 0.9, MutateComputeLocation(): 0.05, MutateUnroll(): 0.03,
            MutateParallel(max_jobs_per_core=16): 0.02}


def _gpu_mutators() -> dict:
    from .mutator import MutateThreadBinding, MutateTileSize, MutateUnroll
    return {MutateTileSize(): 0.9, MutateUnroll(): 0.08, MutateThreadBinding(): 0.02}


# family -> (schedule rules, postprocessors, mutators with probabilities)
DEFAULTS = {
    "cpu": (_cpu_rules, _cpu_postprocs, _cpu_mutators),
    "gpu": (_gpu_rules, _gpu_postprocs, _gpu_mutators),
}


def default_rules(kind) -> list:
    return DEFAULTS[target_family(kind)][0]()


def default_postprocs(kind) -> list:
    return DEFAULTS[target_family(kind)][1]()


def default_mutators(kind) -> dict:
    return DEFAULTS[target_family(kind)][2]()
