"""Postprocessors: deterministic rewrites after sampling (``ms.postproc``).

``Postproc.create("llvm")``: ``DisallowDynamicLoop``, ``RewriteParallelVectorizeUnroll``,
``PackVectorOperand``, ``RewriteReductionBlock``; ``Postproc.create("cuda")``:
``DisallowDynamicLoop``, ``RewriteCooperativeFetch``, ``RewriteUnboundBlock``,
``RewriteParallelVectorizeUnroll``, ``RewriteReductionBlock``, ``VerifyGPUCode``.
``VerifyBuild`` checks that a candidate lowers (and compiles); ``apply_postprocs(sch,
postprocs)`` runs a list after an ``enter_postproc`` mark.
"""
from .disallow_dynamic_loop import DisallowDynamicLoop
from .pack_vector_operand import PackVectorOperand
from .postproc import Postproc, apply_postprocs
from .rewrite_cooperative_fetch import RewriteCooperativeFetch
from .rewrite_parallel_vectorize_unroll import RewriteParallelVectorizeUnroll
from .rewrite_reduction_block import RewriteReductionBlock
from .rewrite_unbound_block import RewriteUnboundBlock
from .verify_build import VerifyBuild
from .verify_gpu_code import VerifyGPUCode

__all__ = ["DisallowDynamicLoop", "PackVectorOperand", "Postproc", "RewriteCooperativeFetch",
           "RewriteParallelVectorizeUnroll", "RewriteReductionBlock", "RewriteUnboundBlock",
           "VerifyBuild", "VerifyGPUCode", "apply_postprocs"]
