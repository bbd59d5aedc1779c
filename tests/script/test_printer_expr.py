"""Printing TIR expressions: constants, operators, calls, and parenthesisation."""
import ast

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

import mlcbench.script  # noqa: F401  (registers the printer)
from mlcbench import tir
from mlcbench.tir import expr as E

i, j, k = E.Var("i"), E.Var("j"), E.Var("k")
x, y = E.Var("x", "float32"), E.Var("y", "float32")


@pytest.mark.parametrize("expr, text", [
    (tir.const(128), "128"),
    (tir.const(-1), "-1"),
    (tir.const(128, "int64"), "T.int64(128)"),
    (tir.const(1, "int8"), "T.int8(1)"),
    (tir.const(3, "uint8"), "T.uint8(3)"),
    (tir.const(True), "T.bool(True)"),
    (tir.const(False), "T.bool(False)"),
    (tir.const(0.0), "T.float32(0)"),
    (tir.const(0.5), "T.float32(0.5)"),
    (tir.const(0.1), "T.float32(0.10000000000000001)"),
    (tir.const(1e-5), "T.float32(1.0000000000000001e-05)"),
    (tir.const(1.0, "float64"), "T.float64(1)"),
    (tir.const(1.5, "float16"), "T.float16(1.5)"),
    (tir.const(float("inf")), 'T.float32("inf")'),
    (tir.const(float("-inf")), 'T.float32("-inf")'),
    (tir.const(float("nan")), 'T.float32("nan")'),
    (E.StringImm('say "hi"'), '"say \\"hi\\""'),
])
def test_constants(expr, text):
    assert str(expr) == text


@pytest.mark.parametrize("make, text", [
    (lambda: i * 4 + j, "i * 4 + j"),
    (lambda: (i + j) * 4, "(i + j) * 4"),
    (lambda: i - (j - k), "i - (j - k)"),
    (lambda: i - j - k, "i - j - k"),
    (lambda: i // 4 % 8, "i // 4 % 8"),
    (lambda: i // (j * 4), "i // (j * 4)"),
    (lambda: x / y, "x / y"),
    (lambda: tir.truncdiv(i, 4), "T.Div(i, 4)"),
    (lambda: tir.truncmod(i, 4), "T.truncmod(i, 4)"),
    (lambda: tir.min(i, j) + tir.max(i, 1), "T.min(i, j) + T.max(i, 1)"),
    (lambda: (i < j) & (j <= k), "i < j and j <= k"),
    (lambda: (i == j) | (i != k), "i == j or i != k"),
    (lambda: ~((i > j) & (j >= k)), "not (i > j and j >= k)"),
    (lambda: ~(i < j), "not i < j"),
    (lambda: E.LT(E.LT(i, j, "bool"), tir.const(True), "bool"), "(i < j) < T.bool(True)"),
    (lambda: E.Add(tir.const(1), tir.const(2), "int32"), "T.Add(1, 2)"),
    (lambda: i * -1, "i * -1"),
])
def test_operators(make, text):
    assert str(make()) == text


@pytest.mark.parametrize("make, text", [
    (lambda: E.Select(i < j, i, j), "T.Select(i < j, i, j)"),
    (lambda: E.Cast("float32", i), 'T.Cast("float32", i)'),
    (lambda: tir.exp(x), "T.exp(x)"),
    (lambda: tir.sqrt(x) + tir.log(y), "T.sqrt(x) + T.log(y)"),
    (lambda: tir.call_extern("float32", "expf", x), 'T.call_extern("float32", "expf", x)'),
    (lambda: tir.if_then_else(i < 4, x, y), "T.if_then_else(i < 4, x, y)"),
    (lambda: E.Ramp(i * 4, tir.const(1), 4), "T.Ramp(i * 4, 1, 4)"),
    (lambda: E.Broadcast(tir.const(0.0), 16), "T.Broadcast(T.float32(0), 16)"),
    (lambda: E.Cast("float32x16", E.Ramp(i, tir.const(1), 16)),
     'T.Cast("float32x16", T.Ramp(i, 1, 16))'),
    (lambda: E.Let(k, i + 1, k * 2), "T.Let(k, i + 1, k * 2)"),
    (lambda: E.Call("int32", "tir.likely", (i < 4,)), "T.likely(i < 4)"),
])
def test_calls_and_vectors(make, text):
    assert str(make()) == text


def test_buffer_load_and_regions():
    A = tir.decl_buffer((128, 128), "float32", "A")
    assert str(A[i, j * 4]) == "A[i, j * 4]"
    assert str(tir.BufferRegion(A, (E.Range(i, 1), E.Range(0, 128)))) == "A[i, 0:128]"
    assert str(tir.BufferRegion.full_region(A)) == "A[0:128, 0:128]"
    flat = tir.decl_buffer((16,), "float32", "B")
    load = E.BufferLoad(flat, (E.Ramp(i * 4, tir.const(1), 4),))
    assert str(load) == "B[i * 4:i * 4 + 4]"


def test_script_method_and_repr_agree():
    expr = (i + j) * 4
    assert expr.script() == repr(expr) == str(expr) == "(i + j) * 4"


# -- precedence: the printed text parses (as Python) to a tree of the same shape ----------

_PY_BINOP = {ast.Add: "Add", ast.Sub: "Sub", ast.Mult: "Mul", ast.FloorDiv: "FloorDiv",
             ast.Mod: "FloorMod", ast.Div: "Div"}
_PY_CMP = {ast.Eq: "EQ", ast.NotEq: "NE", ast.Lt: "LT", ast.LtE: "LE", ast.Gt: "GT",
           ast.GtE: "GE"}
_T_CALLS = {"min": "Min", "max": "Max", "truncmod": "Mod", "Div": "Div", "Select": "Select"}


def ir_shape(e):
    """("Add", left, right) ... with every leaf (var, constant) as "leaf"."""
    if isinstance(e, E.BinaryOp):
        return (type(e).__name__, ir_shape(e.a), ir_shape(e.b))
    if isinstance(e, E.Not):
        return ("Not", ir_shape(e.a))
    if isinstance(e, E.Select):
        return ("Select", ir_shape(e.condition), ir_shape(e.true_value), ir_shape(e.false_value))
    return "leaf"


def py_shape(node):
    if isinstance(node, ast.BinOp):
        return (_PY_BINOP[type(node.op)], py_shape(node.left), py_shape(node.right))
    if isinstance(node, ast.BoolOp):        # Python flattens `a and b and c`
        name = "And" if isinstance(node.op, ast.And) else "Or"
        shape = py_shape(node.values[0])
        for value in node.values[1:]:
            shape = (name, shape, py_shape(value))
        return shape
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            return ("Not", py_shape(node.operand))
        assert isinstance(node.operand, ast.Constant)     # a negative literal
        return "leaf"
    if isinstance(node, ast.Compare):
        assert len(node.ops) == 1, "a comparison chain reads differently from the IR"
        return (_PY_CMP[type(node.ops[0])], py_shape(node.left), py_shape(node.comparators[0]))
    if isinstance(node, ast.Call):
        name = node.func.attr
        if name in _T_CALLS or name in _PY_CMP.values() or name in _PY_BINOP.values():
            return (_T_CALLS.get(name, name),) + tuple(py_shape(a) for a in node.args)
        return "leaf"                        # T.int64(4), T.bool(True)
    assert isinstance(node, (ast.Name, ast.Constant)), ast.dump(node)
    return "leaf"


_INT_OPS = [E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod, E.Div, E.Mod, E.Min, E.Max]
_CMP_OPS = [E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE]
_VARS = [E.Var(name) for name in "abcd"]

int_leaves = st.one_of(st.sampled_from(_VARS),
                       st.integers(-3, 9).map(lambda v: tir.const(v)))


def _int_node(children):
    binary = st.tuples(st.sampled_from(_INT_OPS), children, children).map(
        lambda t: t[0](t[1], t[2], "int32"))
    return binary


int_exprs = st.recursive(int_leaves, _int_node, max_leaves=12)


def _bool_node(children):
    logic = st.tuples(st.sampled_from([E.And, E.Or]), children, children).map(
        lambda t: t[0](t[1], t[2], "bool"))
    return st.one_of(logic, children.map(E.Not))


bool_leaves = st.tuples(st.sampled_from(_CMP_OPS), int_exprs, int_exprs).map(
    lambda t: t[0](t[1], t[2], "bool"))
bool_exprs = st.recursive(bool_leaves, _bool_node, max_leaves=6)
any_exprs = st.one_of(
    int_exprs, bool_exprs,
    st.tuples(bool_exprs, int_exprs, int_exprs).map(lambda t: E.Select(*t)),
    st.tuples(st.sampled_from(_CMP_OPS), bool_exprs, bool_exprs).map(
        lambda t: t[0](t[1], t[2], "bool")))


@settings(max_examples=300, deadline=None)
@given(any_exprs)
def test_parentheses_preserve_the_tree(expr):
    text = str(expr)
    tree = ast.parse(text, mode="eval").body
    assert py_shape(tree) == ir_shape(expr), text


def test_long_chains_print_without_recursion_errors():
    total = i
    for _ in range(3000):
        total = total + j
    assert str(total) == "i" + " + j" * 3000
