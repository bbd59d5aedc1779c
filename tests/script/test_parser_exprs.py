"""Expressions: operators, typed literals, intrinsics, casts, vectors, let expressions."""
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench.ir import IRError, ParseError, assert_structural_equal, structural_equal
from mlcbench.script import from_source
from mlcbench.script import tir as T
from mlcbench import tir
from mlcbench.tir import (EQ, LT, And, Broadcast, Call, Cast, Div, FloatImm, FloorDiv,
                          FloorMod, IntImm, Let, Max, Min, Mod, Not, Or, Ramp, Select, Var)


def _value(expr_text: str, params: str = "x: T.int32, y: T.int32, f: T.float32"):
    """Parse ``expr_text`` as the stored value of a tiny function; return it and params."""
    func = from_source(f"""
@T.prim_func
def g(A: T.Buffer((4,), "float32"), {params}):
    T.evaluate({expr_text})
""")
    return func.body.value, func.params[1:]


def test_arithmetic_operators_build_tir_nodes():
    value, (x, y, _) = _value("(x + y) * 2 - x / y + x // y + x % y")
    expected = (x + y) * 2 - tir.Div(x, y, x.dtype) + FloorDiv(x, y, x.dtype) \
        + FloorMod(x, y, x.dtype)
    assert_structural_equal(value, expected)


@pytest.mark.parametrize("text, cls", [("T.floordiv(x, y)", FloorDiv),
                                       ("T.floormod(x, y)", FloorMod),
                                       ("T.truncdiv(x, y)", Div), ("T.truncmod(x, y)", Mod),
                                       ("T.max(x, y)", Max), ("T.min(x, y)", Min),
                                       ("x < y", LT), ("x == y", EQ),
                                       ("x < y and y < 3", And), ("x < y or y < 3", Or),
                                       ("not x < y", Not)])
def test_named_operations(text, cls):
    value, _ = _value(text)
    assert type(value) is cls


def test_unary_minus_and_comparison_dtypes():
    value, (x, _, f) = _value("-x")
    assert value.dtype == "int32" and value.b is x
    value, _ = _value("f >= T.float32(0.5)")
    assert value.dtype == "bool" and value.b == FloatImm("float32", 0.5)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sigmoid", "erf", "floor",
                                  "ceil", "abs"])
def test_math_intrinsics(name):
    value, (_, _, f) = _value(f"T.{name}(f)")
    assert isinstance(value, Call) and value.dtype == "float32"
    assert value.op in (f"tir.{name}", "tir.fabs") and value.args[0] is f


def test_pow_and_power_operator():
    value, (_, _, f) = _value("T.pow(f, T.float32(2))")
    other, _ = _value("f ** T.float32(2)")
    assert value.op == "tir.pow" and structural_equal(value, other, map_free_vars=True)


def test_typed_literals():
    assert _value("T.float32(0)")[0] == FloatImm("float32", 0.0)
    assert _value("T.int64(4)")[0].dtype == "int64"
    assert _value("T.bool(True)")[0].dtype == "bool"
    assert _value("T.float16(1.5)")[0].dtype == "float16"
    assert _value("T.uint8(255)")[0].value == 255
    assert _value("T.float32('inf')")[0].value == float("inf")
    assert _value("7")[0] == IntImm("int32", 7)
    assert _value("2.5 + f")[0].a.dtype == "float32"


def test_casts():
    value, (x, _, _) = _value('T.Cast("float32", x)')
    assert isinstance(value, Cast) and value.dtype == "float32" and value.value is x
    value, _ = _value('T.cast(x, "int64")')
    assert isinstance(value, Cast) and value.dtype == "int64"
    value, _ = _value("T.float32(x)")
    assert isinstance(value, Cast)
    assert _value('T.cast(3, "float32")')[0] == FloatImm("float32", 3.0)


def test_select_if_then_else_and_extern():
    value, (x, y, f) = _value("T.Select(x < y, f, T.float32(0))")
    assert isinstance(value, Select) and value.true_value is f
    value, _ = _value("T.if_then_else(x < y, f, T.float32(0))")
    assert value.op == "tir.if_then_else"
    value, _ = _value('T.call_extern("float32", "expf", f)')
    assert value.op == "tir.call_extern" and value.args[0].value == "expf"


def test_reinterpret_and_shifts():
    value, (x, _, f) = _value('T.reinterpret("float32", T.shift_left(x, 23))')
    assert value.op == "tir.reinterpret" and value.dtype == "float32"
    assert value.args[0].op == "tir.shift_left" and value.args[0].args[0] is x
    value, (x, y, _) = _value("T.shift_right(x, y)")
    assert value.op == "tir.shift_right" and value.dtype == "int32"
    with pytest.raises(ParseError, match="reinterpret: float32 has 32-bit lanes, int64 has 64"):
        _value('T.reinterpret("int64", f)')

def test_vectors_and_let():
    value, (x, _, _) = _value("T.Ramp(x, 1, 4)")
    assert isinstance(value, Ramp) and value.dtype == "int32x4" and value.lanes == 4
    value, (_, _, f) = _value("T.Broadcast(f, 16)")
    assert isinstance(value, Broadcast) and value.dtype == "float32x16"
    value, (x, _, _) = _value("T.Let(x + 1, where={x: 2})")
    assert isinstance(value, Let) and value.var is x and value.value == IntImm("int32", 2)


def test_min_max_value():
    assert _value('T.max_value("float32")')[0].value == float("inf")
    assert _value('T.min_value("int32")')[0].value == -2**31


def test_vector_buffer_access():
    func = from_source("""
@T.prim_func
def g(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)] + T.Broadcast(T.float32(1), 4)
""")
    store = func.body.body
    assert store.value.dtype == "float32x4" and isinstance(store.indices[0], Ramp)


def test_python_values_fold_before_becoming_ir():
    n = 6

    @T.prim_func
    def g(A: T.Buffer((n * 2 + 1,), "float32")):
        A[n // 2] = T.float32(n ** 2)

    assert int(g.buffer_map[g.params[0]].shape[0]) == 13
    assert g.body.indices[0] == IntImm("int32", 3) and g.body.value.value == 36.0


def test_old_tir_max_spelling():
    func = from_source("""
@T.prim_func
def g(A: T.Buffer((4,), "float32")):
    A[0] = tir.max(A[1], T.float32(0))
""")
    assert isinstance(func.body.value, Max)


_OPS = ["+", "-", "*", "//", "%"]


@st.composite
def _int_expressions(draw, depth=3):
    """(text, builder) pairs where builder(x, y) makes the same expression by hand."""
    if depth == 0 or draw(st.booleans()):
        leaf = draw(st.sampled_from(["x", "y", "int"]))
        if leaf == "int":
            value = draw(st.integers(1, 9))
            return str(value), lambda x, y, v=value: IntImm("int32", v)
        return leaf, (lambda x, y: x) if leaf == "x" else (lambda x, y: y)
    op = draw(st.sampled_from(_OPS))
    lt, lb = draw(_int_expressions(depth=depth - 1))
    rt, rb = draw(_int_expressions(depth=depth - 1))
    builders = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
                "//": lambda a, b: a // b, "%": lambda a, b: a % b}
    fn = builders[op]
    return f"({lt} {op} {rt})", lambda x, y: fn(_as_expr(lb(x, y)), _as_expr(rb(x, y)))


def _as_expr(value):
    return tir.convert(value)


@settings(max_examples=60, deadline=None)
@given(_int_expressions())
def test_random_integer_expressions_match_operator_construction(case):
    text, build = case
    try:
        build(Var("x"), Var("y"))
    except IRError:                         # a constant division by zero
        with pytest.raises(ParseError, match="division"):
            _value(text)
        return
    value, (x, y, _) = _value(text)
    expected = tir.convert(build(x, y))
    assert_structural_equal(value, expected)


def test_chained_comparison_is_an_error():
    with pytest.raises(ParseError, match="chained comparisons"):
        _value("0 < x < y")
