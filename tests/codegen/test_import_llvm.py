"""pragma_import_llvm: LLVM IR text a loop carries is linked into the built module."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench.ir import CodegenError
from mlcbench.script import tir as T
from mlcbench.tir import Schedule

TWICE_LL = """
define float @twice(float %x) {
  %y = fmul float %x, 2.0
  ret float %y
}
"""


@T.prim_func
def scale(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.call_extern("float32", "twice", A[vi])


def _annotated(text):
    sch = Schedule(scale)
    (i,) = sch.get_loops("B")
    sch.annotate(i, "pragma_import_llvm", text)
    return sch.mod


def test_extern_function_defined_by_imported_llvm_ir_runs():
    lib = tvm.build(_annotated(TWICE_LL), target="llvm")
    a = np.arange(8, dtype="float32")
    b = tvm.nd.empty((8,), "float32")
    lib["main"](tvm.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), 2 * a)


def test_unparsable_imported_llvm_ir_is_a_codegen_error():
    with pytest.raises(CodegenError, match="pragma_import_llvm #1 cannot be parsed"):
        tvm.build(_annotated("define float* @bad("), target="llvm")
