"""Code generation: lowered TIR to machine code (LLVM through llvmlite)."""
from .llvm import CompiledLLVM, LLVMArtifact, codegen_llvm, generate_ir, symbolic_shape_vars
