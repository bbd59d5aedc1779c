"""Pipelines: the named lists of passes ``relax.build`` runs, written out in full.

``get_pipeline(name)`` returns a ``Sequential`` (a Pass) so it runs under a
``PassContext`` and instruments see every pass inside it:

=================  ==========================================================
``"zero"``         graph level: FoldConstant, FoldBatchnormToConv2D,
                   ConvertLayoutForTarget, FuseTransposeMatmul, LegalizeOps,
                   AnnotateTIROpPattern, FuseOps, FuseTIR
``"vm_lowering"``  towards the VM: ToNonDataflow, CallTIRRewrite, StaticPlanBlockMemory
``"default"``      ``zero``, PrepackWeights, then ``vm_lowering`` (what ``relax.build``
                   runs by default; also ``"default_build"`` and
                   :func:`default_build_pipeline`)
=================  ==========================================================

>>> mod = relax.get_pipeline("zero")(mod)      # fused kernels, still call_tir  # doctest: +SKIP
>>> ex = relax.build(mod, "llvm", pipeline="vm_lowering")                        # doctest: +SKIP
"""
from __future__ import annotations

from ..ir.errors import MLCBenchError
from ..ir.transform import Sequential


def zero_pipeline() -> Sequential:
    """What depends only on constants (an imported model's weights) is computed once, at
    build time; the high-level ops left become PrimFuncs, and chains of them are fused
    into one kernel. Without the folding, the 784-128-10 MLP from ``from_fx``
    transposes both weights on every call: 110 us per call at batch 1 against 44 us
    folded (``benchmarks/fold_weights.py``). A batch norm after a convolution with
    constant weights is folded into the convolution's weight and bias (after FoldConstant,
    which makes constants of the bias reshapes and of weights computed from weights):
    ResNet-50 from the onnx wheel runs 1.24x faster than with its batch norms kept.
    On a CPU, the convolutions of a large enough model run channels last
    (ConvertLayoutForTarget, see ``transform.convert_layout``): ResNet-50 from the onnx
    wheel 39.7 -> 38.2 ms; LegalizeOps then computes their large 3x3 stride-1 layers by
    Winograd (``relax.op.winograd``): 38.8 -> 33.2 ms. A weight taken as an argument is read in place by its matmul
    (FuseTransposeMatmul) instead of transposed on every call."""
    # The passes are imported here, on first use: at the top they would add about 0.7 s
    # (topi, the default schedules, the TIR build) to every `import mlcbench.relax`.
    from .transform.annotate_tir_op_pattern import AnnotateTIROpPattern
    from .transform.convert_layout import ConvertLayoutForTarget
    from .transform.fold_batchnorm_to_conv2d import FoldBatchnormToConv2D
    from .transform.fold_constant import FoldConstant
    from .transform.fuse_ops import FuseOps
    from .transform.fuse_tir import FuseTIR
    from .transform.fuse_transpose_matmul import FuseTransposeMatmul
    from .transform.legalize_ops import LegalizeOps
    return Sequential([FoldConstant(), FoldBatchnormToConv2D(), ConvertLayoutForTarget(),
                       FuseTransposeMatmul(),
                       LegalizeOps(),
                       AnnotateTIROpPattern(), FuseOps(), FuseTIR()], name="relax.zero")


def vm_lowering_pipeline() -> Sequential:
    """Explicit allocations, planned memory and plain binding blocks: what the VM runs."""
    from .transform.call_tir_rewrite import CallTIRRewrite
    from .transform.static_plan_block_memory import StaticPlanBlockMemory
    from .transform.to_non_dataflow import ToNonDataflow
    return Sequential([ToNonDataflow(), CallTIRRewrite(), StaticPlanBlockMemory()],
                      name="relax.vm_lowering")


def default_build_pipeline() -> Sequential:
    """``zero_pipeline``, then PrepackWeights (kernels that pack a constant weight into
    panels on every call get it packed once, here: ResNet-50 from the onnx wheel runs
    1.2-1.5x faster, a 16x1024x1024 dense 3.2x), then ``vm_lowering_pipeline``:
    ``relax.build``'s default. Figures: ``benchmarks/fold_weights.py``, znver1."""
    from .transform.split_weight_packing import PrepackWeights
    return Sequential([*zero_pipeline().passes, PrepackWeights(),
                       *vm_lowering_pipeline().passes], name="relax.default_build")


PIPELINES = {"zero": zero_pipeline, "vm_lowering": vm_lowering_pipeline,
             "default": default_build_pipeline, "default_build": default_build_pipeline}


def get_pipeline(name: str = "default") -> Sequential:
    """The pipeline called ``name`` (see the module docstring)."""
    if name not in PIPELINES:
        raise MLCBenchError(f"get_pipeline: no pipeline named {name!r}; known: "
                            f"{sorted(PIPELINES)}")
    return PIPELINES[name]()


__all__ = ["default_build_pipeline", "get_pipeline", "vm_lowering_pipeline", "zero_pipeline"]
