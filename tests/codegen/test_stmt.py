"""Statements: branches, bindings, assertions, loops with offsets, scalar parameters,
stack and heap allocations. All kernels share one compiled module."""
import numpy as np
import pytest
from helpers.codegen_helpers import compile_kernels, flat, kernel

from mlcbench import tir
from mlcbench.ir.errors import RuntimeError_
from mlcbench.tir import (Allocate, AssertStmt, BufferStore, Evaluate, For, IfThenElse,
                          LetStmt, Var, call_extern, const, seq)

N = 16


def _if_then_else():
    A, out = flat("A", N), flat("out", N)
    i = Var("i")
    body = IfThenElse(i < 5, BufferStore(out, A[i], (i,)), BufferStore(out, -A[i], (i,)))
    return kernel("branch", [A, out], For(i, 0, N, "serial", body))


def _if_without_else():
    A, out = flat("A", N), flat("out", N)
    i = Var("i")
    body = IfThenElse(i % 2 == 0, BufferStore(out, A[i] * 2.0, (i,)))
    return kernel("branch_no_else", [A, out], For(i, 0, N, "serial", body))


def _let_and_offset_loop():
    A, out = flat("A", N), flat("out", N)
    i, twice = Var("i"), Var("twice", "float32")
    store = LetStmt(twice, A[i] * 2.0, BufferStore(out, twice + 1.0, (i,)))
    return kernel("let_offset", [A, out], For(i, 3, N - 6, "serial", store))


def _scalar_params():
    A, out = flat("A", N), flat("out", N)
    alpha, shift, flip = Var("alpha", "float32"), Var("shift", "int64"), Var("flip", "bool")
    i = Var("i")
    value = tir.if_then_else(flip, -A[i], A[i]) * alpha + tir.cast("float32", shift)
    return kernel("scalars", [A, alpha, shift, flip, out],
                  For(i, 0, N, "serial", BufferStore(out, value, (i,))))


def _assert_positive():
    A = flat("A", N)
    alpha = Var("alpha", "float32")
    i = Var("i")
    body = AssertStmt(alpha > 0.0, "alpha must be positive",
                      For(i, 0, N, "serial", BufferStore(A, A[i] * alpha, (i,))))
    return kernel("scale_checked", [A, alpha], body)


def _allocate(name, size, scope="global"):
    """out[i] = 3 * A[i] through a temporary of ``size`` elements (a constant or a Var)."""
    A, out = flat("A", N), flat("out", N)
    tmp = flat("tmp", size)
    tmp = tmp.replace(scope=scope)
    i, j = Var("i"), Var("j")
    fill = For(i, 0, N, "serial", BufferStore(tmp, A[i] * 3.0, (i + size - N,)))
    copy = For(j, 0, N, "serial", BufferStore(out, tmp[j + size - N], (j,)))
    params = [A, out] + ([size] if isinstance(size, Var) else [])
    return kernel(name, params, Allocate(tmp, seq(fill, copy)))


def _evaluate_call():
    A = flat("A", N)
    i = Var("i")
    body = seq(Evaluate(call_extern("int32", "abs", const(-3))),
               For(i, 0, N, "serial", BufferStore(A, A[i] + 1.0, (i,))))
    return kernel("evaluate", [A], body)


@pytest.fixture(scope="module")
def lib():
    return compile_kernels(_if_then_else(), _if_without_else(), _let_and_offset_loop(),
                           _scalar_params(), _assert_positive(), _evaluate_call(),
                           _allocate("stack_alloc", 64, "local"),
                           _allocate("heap_alloc", 100_000),
                           _allocate("symbolic_alloc", Var("size", "int32")))


def _data():
    return np.linspace(-2, 2, N, dtype="float32"), np.zeros(N, "float32")


def test_if_then_else(lib):
    a, out = _data()
    lib["branch"](a, out)
    np.testing.assert_array_equal(out, np.where(np.arange(N) < 5, a, -a))


def test_if_without_else_leaves_other_elements(lib):
    a, out = _data()
    lib["branch_no_else"](a, out)
    np.testing.assert_array_equal(out, np.where(np.arange(N) % 2 == 0, a * 2, 0))


def test_let_and_loop_with_nonzero_min(lib):
    a, out = _data()
    lib["let_offset"](a, out)
    expected = np.zeros(N, "float32")
    expected[3:N - 3] = a[3:N - 3] * 2 + 1
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("flip", [False, True])
def test_scalar_parameters(lib, flip):
    a, out = _data()
    lib["scalars"](a, 1.5, 7, flip, out)
    np.testing.assert_allclose(out, (-a if flip else a) * 1.5 + 7)


def test_assert_failure_reports_error_status(lib):
    a, _ = _data()
    lib["scale_checked"](a, 2.0)
    np.testing.assert_allclose(a, np.linspace(-4, 4, N, dtype="float32"))
    with pytest.raises(RuntimeError_, match="status -1"):
        lib["scale_checked"](a, -1.0)


def test_evaluate_runs_calls(lib):
    a, _ = _data()
    lib["evaluate"](a)
    np.testing.assert_allclose(a, np.linspace(-2, 2, N, dtype="float32") + 1)


@pytest.mark.parametrize("name", ["stack_alloc", "heap_alloc"])
def test_allocate(lib, name):
    a, out = _data()
    lib[name](a, out)
    np.testing.assert_allclose(out, 3 * a)


def test_symbolic_allocate_uses_heap(lib):
    a, out = _data()
    lib["symbolic_alloc"](a, out, 5000)
    np.testing.assert_allclose(out, 3 * a)


def test_small_allocation_is_on_stack_large_on_heap(lib):
    ir_text = lib.get_source("ll")
    stack_fn = ir_text.split("@mlc_stack_alloc(")[1].split("\n}\n")[0]
    heap_fn = ir_text.split("@mlc_heap_alloc(")[1].split("\n}\n")[0]
    assert "aligned_alloc" not in stack_fn
    assert "aligned_alloc" in heap_fn and "@free" in heap_fn
