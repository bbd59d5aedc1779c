"""Math functions in device kernels: the PTX LLVM's NVPTX backend can print, and a
CodegenError naming the function where it cannot (no libdevice is linked).

A function the backend cannot select would abort the whole process inside LLVM, so
the refusal must come before the backend runs.
"""
import re

import pytest

from mlcbench.codegen.nvptx import ptx_source
from mlcbench.ir.errors import CodegenError
from mlcbench.script import tir as T

UNARY = {
    "exp": T.exp, "log": T.log, "sqrt": T.sqrt, "rsqrt": T.rsqrt, "tanh": T.tanh,
    "sigmoid": T.sigmoid, "fabs": T.fabs, "floor": T.floor,
    "fmax": lambda x: T.max(x, x * x), "fmin": lambda x: T.min(x, x * x),
}


def _kernel(fn, dtype: str):
    @T.prim_func
    def kernel(A: T.Buffer((256,), dtype), B: T.Buffer((256,), dtype)):
        T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                B[bx * 128 + tx] = fn(A[bx * 128 + tx])
    return kernel


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_math_functions_become_ptx_instructions_not_calls(name, dtype):
    ptx = ptx_source(_kernel(UNARY[name], dtype), "cuda")
    assert ".visible .entry main_kernel0(" in ptx
    # Nothing left to link: every function is computed inline.
    assert not re.search(r"\bcall(\.uni)?\b", ptx), ptx


def test_erf_float32_is_inline():
    ptx = ptx_source(_kernel(T.erf, "float32"), "cuda")
    assert not re.search(r"\bcall(\.uni)?\b", ptx)


@pytest.mark.parametrize("fn, dtype, named", [
    (lambda x: T.pow(x, x), "float32", r"'pow' \(llvm\.pow\.f32\)"),
    (T.cos, "float32", r"'cos' \(llvm\.cos\.f32\)"),
    (T.tan, "float64", r"'tan'"),
    (T.erf, "float64", r"'erf'"),
])
def test_a_function_without_gpu_code_is_refused_naming_it(fn, dtype, named):
    with pytest.raises(CodegenError, match=r"device kernel 'main_kernel0' calls " + named):
        ptx_source(_kernel(fn, dtype), "cuda")
