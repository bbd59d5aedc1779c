"""TIR lowering passes: from scheduled TensorIR to the lowered form codegen consumes.

Each pass is a ``Pass`` (``mod = LowerInitBlock()(mod)``) named as in TVM; ``lower``
runs them all (see :mod:`mlcbench.tir.transform.pipeline` for the lowered form).
"""
from .compact_buffer import CompactBufferAllocation
from .flatten_buffer import FlattenBuffer
from .lower_gpu import SplitHostDevice, gpu_lowering_pipeline, lower_gpu
from .lower_init_block import LowerInitBlock
from .inject_prefetch import InjectPrefetch
from .lower_opaque_block import ConvertBlocksToOpaque, LowerOpaqueBlock, VerifyCPUCompatible
from .pipeline import default_lowering_pipeline, lower
from .remove_no_op import RemoveNoOp
from .unroll_loop import UnrollLoop
from .vectorize_loop import VectorizeLoop
from .simplify import Simplify
from .storage_align import StorageAlign
from .thread_sync import ThreadSync
from .verify_gpu_code import GPULimitError, VerifyGPUCode, gpu_limit_problems, verify_gpu_code
