"""Index ranges decided by scalar arguments are checked before the machine code runs.

``for i in range(n)`` over a 16-element buffer must refuse ``n=20`` (it wrote past the
buffer) and ``n=10**8`` (it crashed the process), and run every ``n`` that stays inside.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlcbench
from mlcbench.ir.errors import RuntimeError_
from mlcbench.runtime import ArgumentValueError, decode_metadata, encode_metadata, load_module
from mlcbench.runtime.access_checks import AccessCheck, check_accesses, evaluate
from mlcbench.script import from_source

ADD_ONE_PREFIX = """
@T.prim_func
def add_prefix(A: T.Buffer((16,), "float32"), n: T.int32):
    for i in range(n):
        with T.block("A"):
            vi = T.axis.spatial(n, i)
            A[vi] = A[vi] + T.float32(1)
"""

GATHER_ROWS = """
@T.prim_func
def gather_rows(A: T.Buffer((8, 8), "float32"), B: T.Buffer((64,), "float32"),
                n: T.int32, m: T.int32):
    for i, j in T.grid(n, 8):
        with T.block("A"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi, vj] = B[vi * 2 + m]
"""

GUARDED = """
@T.prim_func
def guarded(A: T.Buffer((16,), "float32"), n: T.int32):
    for i in range(n):
        with T.block("A"):
            vi = T.axis.spatial(n, i)
            T.where(i < 16)
            A[vi] = A[vi] + T.float32(1)
"""

COPY_INTO_FIXED = """
@T.prim_func
def copy_into_fixed(a: T.handle, B: T.Buffer((16,), "float32")):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi]
"""

VECTOR_ROWS = """
@T.prim_func
def vector_rows(A: T.Buffer((64,), "float32"), n: T.int32):
    for i in range(n):
        for j in T.vectorized(8):
            with T.block("A"):
                vi = T.axis.spatial(n, i)
                vj = T.axis.spatial(8, j)
                A[vi * 8 + vj] = T.float32(3)
"""


def _build(source):
    lib = mlcbench.build(from_source(source), target="llvm")
    return lib[lib.entry_name]


@pytest.fixture(scope="module")
def add_prefix():
    return _build(ADD_ONE_PREFIX)


def _add_prefix_reference(data: np.ndarray, n: int) -> np.ndarray:
    expected = data.copy()
    expected[:max(n, 0)] += 1
    return expected


@pytest.mark.parametrize("n", [0, 1, 15, 16, -3])
def test_in_range_calls_run_and_match_numpy(add_prefix, n):
    data = np.arange(16, dtype="float32")
    out = data.copy()
    add_prefix(out, n)
    np.testing.assert_array_equal(out, _add_prefix_reference(data, n))


@pytest.mark.parametrize("n, last", [(17, 16), (20, 19), (10 ** 8, 10 ** 8 - 1)])
def test_out_of_range_calls_raise_and_leave_memory_alone(add_prefix, n, last):
    backing = np.zeros(32, "float32")
    with pytest.raises(ArgumentValueError, match=rf"\w+: parameter n={n}: the kernel "
                       rf"writes A at indices \[0, {last}\], but A has 16 elements "
                       r"\(shape \(16,\)\)"):
        add_prefix(backing[:16], n)
    assert not backing.any()


@settings(max_examples=60, deadline=None)
@given(n=st.integers(min_value=-(2 ** 31), max_value=2 ** 31 - 1))
def test_any_n_either_runs_correctly_or_is_refused(add_prefix, n):
    backing = np.zeros(20, "float32")
    if n > 16:
        with pytest.raises(ArgumentValueError, match=f"n={n}"):
            add_prefix(backing[:16], n)
    else:
        add_prefix(backing[:16], n)
    expected = np.zeros(20, "float32")
    expected[:max(n, 0) if n <= 16 else 0] = 1   # a refused call touches nothing
    np.testing.assert_array_equal(backing, expected)


def test_message_names_every_scalar_of_the_range():
    gather = _build(GATHER_ROWS)
    a = np.zeros((8, 8), "float32")
    b = np.arange(64, dtype="float32")
    gather(a, b, 8, 3)
    np.testing.assert_array_equal(a, np.repeat(b[np.arange(8) * 2 + 3][:, None], 8, axis=1))
    with pytest.raises(ArgumentValueError, match=r"parameters n=8, m=50: the kernel reads B "
                       r"at indices \[50, 64\], but B has 64 elements"):
        gather(a, b, 8, 50)
    with pytest.raises(ArgumentValueError, match=r"parameters n=8, m=-1: .* reads B at "
                       r"indices \[-1, 13\]"):
        gather(a, b, 8, -1)
    with pytest.raises(ArgumentValueError, match=r"parameter n=9: the kernel writes A at "
                       r"indices \[0, 71\], but A has 64 elements \(shape \(8, 8\)\)"):
        gather(a, b, 9, 0)


@pytest.mark.parametrize("n", [0, 16, 40])
def test_guarded_access_needs_no_check(n):
    guarded = _build(GUARDED)
    assert guarded.spec.access_checks == ()
    out = np.zeros(16, "float32")
    guarded(out, n)
    np.testing.assert_array_equal(out, (np.arange(16) < n).astype("float32"))


def test_symbolic_dim_of_one_buffer_bounds_another():
    copy = _build(COPY_INTO_FIXED)
    source = np.arange(12, dtype="float32")
    out = np.zeros(16, "float32")
    copy(source, out)
    np.testing.assert_array_equal(out[:12], source)
    with pytest.raises(ArgumentValueError, match=r"parameter n=20: the kernel writes B at "
                       r"indices \[0, 19\], but B has 16 elements"):
        copy(np.zeros(20, "float32"), out)


def test_vector_lanes_count_in_the_range():
    rows = _build(VECTOR_ROWS)
    out = np.zeros(64, "float32")
    rows(out, 8)
    assert (out == 3).all()
    with pytest.raises(ArgumentValueError, match=r"indices \[0, 71\], but A has 64"):
        rows(out, 9)


def test_exported_library_keeps_its_checks(add_prefix, tmp_path):
    lib = mlcbench.build(from_source(ADD_ONE_PREFIX), target="llvm")
    path = str(tmp_path / "add_prefix.so")
    lib.export_library(path)
    loaded = load_module(path)[lib.entry_name]
    assert loaded.spec.access_checks == add_prefix.spec.access_checks != ()
    out = np.zeros(16, "float32")
    loaded(out, 16)
    assert (out == 1).all()
    with pytest.raises(ArgumentValueError, match="n=17"):
        loaded(out, 17)


# -- formulas as data --------------------------------------------------------------------

def test_formulas_evaluate_with_floor_division():
    values = {"n": -7, "m": 2}
    assert evaluate(("+", ("*", "n", 2), ("//", "n", "m")), values) == -14 + -4
    assert evaluate(("%", "n", "m"), values) == 1
    assert evaluate(("max", "n", ("min", "m", 0)), values) == 0
    assert evaluate(("//", "n", 0), values) is None


@pytest.mark.parametrize("bad", [["__import__", "os", 1], ["+", "n"], [1.5], {"op": "+"},
                                 True, ["pow", 2, 3]])
def test_metadata_with_a_foreign_formula_is_refused(bad):
    entry = {"buffer": "A", "kind": "writes", "low": 0, "high": bad, "uses": ["n"]}
    with pytest.raises(RuntimeError_, match="access check"):
        AccessCheck.from_json(entry)


def test_checks_round_trip_through_metadata(add_prefix):
    spec = add_prefix.spec
    assert decode_metadata(encode_metadata([spec])) == [spec]


def test_empty_loops_skip_their_check():
    check = AccessCheck("A", "writes", 0, ("-", ("*", "n", "m"), 1), ("n", "m"), ("n", "m"))
    check_accesses("f", [check], {"A": (4,)}, {"n": 100, "m": 0})
    with pytest.raises(ArgumentValueError, match=r"parameters n=100, m=1: the kernel writes A"):
        check_accesses("f", [check], {"A": (4,)}, {"n": 100, "m": 1})
