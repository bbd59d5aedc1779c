"""Relax passes: each one an instrumentable :class:`~mlcbench.ir.transform.Pass`.

``relax.transform.LegalizeOps()(mod)`` runs one pass; a ``tvm.transform.Sequential`` of
them, under a ``PassContext(instruments=[...])``, lets instruments see the IR before and
after each (the pass viewer, ``PrintAfterAll`` and timing reports use that hook).
"""
# -- lowering high-level ops and fusing kernels ------------------------------------------
from .legalize_ops import LegalizeOps
from .annotate_tir_op_pattern import AnnotateTIROpPattern
from .fuse_ops import FuseOps
from .fuse_tir import FuseTIR
from .fusion_report import FusionEdge, FusionReport, fusion_report

# -- graph clean-up and simplification -----------------------------------------------------
from .normalize import Normalize
from .bind_params import BindParams
from .fold_constant import FoldConstant
from .fold_batchnorm_to_conv2d import FoldBatchnormToConv2D
from .convert_layout import ConvertLayout, ConvertLayoutForTarget
from .split_weight_packing import PrepackWeights, SplitWeightPacking
from .dead_code_elimination import DeadCodeElimination
from .canonicalize_bindings import CanonicalizeBindings
from .combine_parallel_matmul import CombineParallelMatmul
from .fuse_transpose_matmul import FuseTransposeMatmul

# -- lowering towards the virtual machine -------------------------------------------------
from .to_non_dataflow import ToNonDataflow
from .call_tir_rewrite import CallTIRRewrite
from .static_plan_block_memory import StaticPlanBlockMemory
