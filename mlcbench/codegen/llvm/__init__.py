"""TIR -> LLVM IR (through llvmlite) -> JIT-compiled machine code or PIC objects."""
from .engine import LLVMArtifact, compile_ir, initialize_llvm, jit_link, target_machine
from .function import emit_prim_func, symbolic_shape_vars
from .module import CompiledLLVM, codegen_llvm, generate_ir
from .parallel import load_openmp_runtime
