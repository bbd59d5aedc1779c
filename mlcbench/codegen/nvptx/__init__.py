"""Device kernels -> LLVM IR (llvmlite) -> PTX through LLVM's NVPTX backend (sm_75 to sm_90)."""
from .kernel import KernelEmitter, emit_kernel
from .module import gpu_arch, nvptx_ir, ptx_source

__all__ = ["KernelEmitter", "emit_kernel", "gpu_arch", "nvptx_ir", "ptx_source"]
