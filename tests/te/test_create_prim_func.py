"""create_prim_func: blocks, loops, buffers and attributes as TVM produces them."""
import numpy as np
import pytest

import mlcbench
from mlcbench import te
from mlcbench.ir.errors import IRError
from mlcbench.script import from_source
from mlcbench.script import tir as T


@T.prim_func
def expected_add(A: T.Buffer((4, 5), "float32"), B: T.Buffer((4, 5), "float32"),
                 C: T.Buffer((4, 5), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j in T.grid(4, 5):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j], B[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = A[v_i, v_j] + B[v_i, v_j]


@T.prim_func
def expected_mm_relu(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 5), "float32"),
                     D: T.Buffer((4, 5), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    C = T.alloc_buffer((4, 5))
    for i, j, k in T.grid(4, 5, 6):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
    for i0, i1 in T.grid(4, 5):
        with T.block("D"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.reads(C[v_i0, v_i1])
            T.writes(D[v_i0, v_i1])
            D[v_i0, v_i1] = T.max(C[v_i0, v_i1], T.float32(0))


def _mm_relu():
    A = te.placeholder((4, 6), name="A")
    B = te.placeholder((6, 5), name="B")
    k = te.reduce_axis((0, 6), name="k")
    C = te.compute((4, 5), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((4, 5), lambda *i: te.max(C(*i), 0.0), name="D")
    return A, B, C, D


def test_add_matches_tvm_structure():
    A = te.placeholder((4, 5), name="A")
    B = te.placeholder((4, 5), name="B")
    C = te.compute((4, 5), lambda i, j: A[i, j] + B[i, j], name="C")
    mlcbench.ir.assert_structural_equal(te.create_prim_func([A, B, C]), expected_add)


def test_matmul_relu_intermediate_becomes_alloc_buffer():
    A, B, _, D = _mm_relu()
    func = te.create_prim_func([A, B, D])
    mlcbench.ir.assert_structural_equal(func, expected_mm_relu)
    text = func.script()
    assert "C = T.alloc_buffer((4, 5))" in text
    assert "for i, j, k in T.grid(4, 5, 6):" in text and "v_i0, v_i1 = " in text


def test_listed_intermediate_becomes_parameter():
    A, B, C, D = _mm_relu()
    func = te.create_prim_func([A, B, C, D])
    assert [b.name for _, b in func.buffer_params()] == ["A", "B", "C", "D"]
    assert "alloc_buffer" not in func.script()


def test_printed_function_parses_back():
    A, B, _, D = _mm_relu()
    func = te.create_prim_func([A, B, D])
    mlcbench.ir.assert_structural_equal(from_source(func.script()), func)


def test_matmul_relu_runs(rng=np.random.default_rng(1)):
    A, B, _, D = _mm_relu()
    lib = mlcbench.build(te.create_prim_func([A, B, D]), target="llvm")
    a = rng.standard_normal((4, 6)).astype("float32")
    b = rng.standard_normal((6, 5)).astype("float32")
    d = mlcbench.nd.array(np.zeros((4, 5), "float32"))
    lib["main"](mlcbench.nd.array(a), mlcbench.nd.array(b), d)
    np.testing.assert_allclose(d.numpy(), np.maximum(a @ b, 0), rtol=1e-5, atol=1e-6)


def test_duplicate_op_names_get_unique_blocks():
    A = te.placeholder((3,), name="A")
    B = te.compute((3,), lambda i: A[i] + 1.0)
    C = te.compute((3,), lambda i: B[i] * 2.0)
    text = te.create_prim_func([A, C]).script()
    assert 'T.block("compute")' in text and 'T.block("compute_1")' in text


def test_missing_placeholder_is_reported():
    A = te.placeholder((3,), name="A")
    B = te.compute((3,), lambda i: A[i] + 1.0, name="B")
    with pytest.raises(IRError, match="placeholder 'A'"):
        te.create_prim_func([B])


def test_scalar_var_parameter():
    n = te.var("n", "float32")
    A = te.placeholder((3,), name="A")
    B = te.compute((3,), lambda i: A[i] * n, name="B")
    func = te.create_prim_func([A, n, B])
    assert func.params[1] is n
