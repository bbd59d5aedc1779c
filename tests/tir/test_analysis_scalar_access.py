"""scalar_access_checks: the index ranges of a lowered PrimFunc that scalar arguments decide."""
import mlcbench
from mlcbench.driver.build import kernel_spec
from mlcbench.runtime.access_checks import AccessCheck
from mlcbench.script import from_source


def _checks(source):
    lowered = mlcbench.lower(from_source(source))
    return kernel_spec("f", "mlc_f", lowered["main"]).access_checks


def test_loop_bound_from_a_scalar_gives_one_write_check():
    assert _checks("""
@T.prim_func
def f(A: T.Buffer((16,), "float32"), n: T.int32):
    for i in range(n):
        A[i] = A[i] + T.float32(1)
""") == (AccessCheck("A", "writes", 0, ("-", "n", 1), ("n",), ("n",)),)


def test_static_shapes_need_no_check():
    assert _checks("""
@T.prim_func
def f(A: T.Buffer((16,), "float32"), n: T.float32):
    for i in range(16):
        A[i] = A[i] * n
""") == ()


def test_condition_on_the_loop_variable_narrows_its_range():
    assert _checks("""
@T.prim_func
def f(A: T.Buffer((16,), "float32"), n: T.int32, m: T.int32):
    for i in range(n):
        if i < 16:
            A[i] = T.float32(0)
        if i < m:
            A[i] = T.float32(1)
""") == (AccessCheck("A", "writes", 0, ("min", ("-", "n", 1), ("-", "m", 1)), ("n", "m"),
                     ("n",)),)


def test_scalar_condition_travels_with_the_check():
    (check,) = _checks("""
@T.prim_func
def f(A: T.Buffer((16,), "float32"), n: T.int32):
    if n <= 16:
        for i in range(n):
            A[i] = T.float32(0)
""")
    assert check.nonempty == ("n", ("+", ("-", 16, "n"), 1))


def test_range_provable_from_a_symbolic_shape_needs_no_check():
    assert _checks("""
@T.prim_func
def f(a: T.handle, B: T.Buffer((16,), "float32")):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    for i in range(n):
        A[i] = B[0]
""") == ()


def test_index_read_from_memory_gets_no_check():
    assert _checks("""
@T.prim_func
def f(A: T.Buffer((16,), "float32"), I: T.Buffer((4,), "int32"), n: T.int32):
    for i in range(n):
        A[I[i % 4]] = T.float32(0)
""") == ()  # I[i % 4] stays in [0, 3]; A's index is data
