"""Exported shared libraries describe themselves and run like the JIT-compiled code."""
import numpy as np
from helpers.codegen_helpers import compile_kernels, flat, kernel

from mlcbench.runtime import load_module
from mlcbench.tir import BufferStore, For, Var


def _kernels():
    n = Var("n")
    A, out = flat("A", n), flat("out", n)
    i, j = Var("i"), Var("j")
    scale = kernel("scale", [A, out], For(i, 0, n, "parallel", BufferStore(out, A[i] * 3.0, (i,))))
    B = flat("B", 4, "int64")
    bump = kernel("bump", [B], For(j, 0, 4, "serial", BufferStore(B, B[j] + 1, (j,))))
    return scale, bump


def test_export_and_load_round_trip(tmp_path):
    lib = compile_kernels(*_kernels())
    path = tmp_path / "kernels.so"
    lib.export_library(str(path))
    loaded = load_module(str(path))
    assert sorted(loaded.function_names) == ["bump", "scale"]
    assert loaded.kernel_specs == lib.kernel_specs
    a = np.arange(10, dtype="float32")
    out = np.zeros(10, "float32")
    loaded["scale"](a, out)
    np.testing.assert_array_equal(out, 3 * a)
    b = np.arange(4, dtype="int64")
    loaded["bump"](b)
    np.testing.assert_array_equal(b, [1, 2, 3, 4])
