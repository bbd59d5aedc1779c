"""Postprocessors: deterministic rewrites after sampling (``ms.postproc``).

``Postproc.create("llvm")``: ``DisallowDynamicLoop``, ``RewriteParallelVectorizeUnroll``,
``PackVectorOperand``, ``RewriteReductionBlock``; ``VerifyBuild`` checks that a candidate lowers (and
compiles); ``apply_postprocs(sch, postprocs)`` runs a list after an ``enter_postproc``
mark.
"""
from .disallow_dynamic_loop import DisallowDynamicLoop
from .pack_vector_operand import PackVectorOperand
from .postproc import Postproc, apply_postprocs
from .rewrite_parallel_vectorize_unroll import RewriteParallelVectorizeUnroll
from .rewrite_reduction_block import RewriteReductionBlock
from .verify_build import VerifyBuild

__all__ = ["DisallowDynamicLoop", "PackVectorOperand", "Postproc", "RewriteParallelVectorizeUnroll",
           "RewriteReductionBlock", "VerifyBuild", "apply_postprocs"]
