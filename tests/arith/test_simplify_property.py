"""The simplifier's contract: same value at every point of the bound ranges, never larger."""
from hypothesis import given, settings, strategies as st

from mlcbench import tir
from mlcbench.arith import Analyzer
from mlcbench.arith.linear_form import expr_size
from mlcbench.tir import expr as E

RANGES = [(0, 16), (0, 4), (-5, 7)]


def evaluate(expr, env):
    """Reference semantics of integer TIR in plain Python (floor division)."""
    cls = type(expr)
    if cls is E.IntImm:
        return expr.value
    if cls is E.Var:
        return env[expr]
    if isinstance(expr, E.BinaryOp):
        return cls.py_op(evaluate(expr.a, env), evaluate(expr.b, env))
    if cls is E.Not:
        return not evaluate(expr.a, env)
    if cls is E.Select:
        return evaluate(expr.true_value if evaluate(expr.condition, env) else expr.false_value,
                        env)
    if cls is E.Cast:
        return evaluate(expr.value, env)
    raise AssertionError(f"no reference semantics for {cls.__name__}")


def expressions(variables):
    leaves = st.one_of(st.sampled_from(variables),
                       st.integers(-9, 9).map(lambda c: E.const(c, variables[0].dtype)))

    def extend(children):
        divisor = st.integers(1, 9)
        return st.one_of(
            st.tuples(children, children).map(lambda ab: ab[0] + ab[1]),
            st.tuples(children, children).map(lambda ab: ab[0] - ab[1]),
            st.tuples(children, st.integers(-4, 4)).map(lambda ab: ab[0] * ab[1]),
            st.tuples(children, children).map(lambda ab: ab[0] * ab[1]),
            st.tuples(children, divisor).map(lambda ab: ab[0] // ab[1]),
            st.tuples(children, divisor).map(lambda ab: ab[0] % ab[1]),
            st.tuples(children, divisor).map(lambda ab: tir.truncdiv(*ab)),
            st.tuples(children, divisor).map(lambda ab: tir.truncmod(*ab)),
            st.tuples(children, children).map(lambda ab: tir.min(*ab)),
            st.tuples(children, children).map(lambda ab: tir.max(*ab)),
            st.tuples(st.sampled_from([E.LT, E.LE, E.EQ, E.NE]), children, children, children,
                      children).map(lambda t: E.Select(E.binary(t[0], t[1], t[2]), t[3], t[4])),
        )

    return st.recursive(leaves, extend, max_leaves=12)


def _setup(dtype):
    variables = [tir.Var(name, dtype) for name in "xyz"]
    analyzer = Analyzer()
    for var, (lo, hi) in zip(variables, RANGES):
        analyzer.bind(var, tir.Range(E.const(lo, dtype), E.const(hi - lo, dtype)))
    return variables, analyzer


def _points(draw_values, variables):
    return [dict(zip(variables, values)) for values in draw_values]


VALUES = st.lists(st.tuples(*[st.integers(lo, hi - 1) for lo, hi in RANGES]), min_size=1,
                  max_size=8)


def check(data, dtype):
    variables, analyzer = _setup(dtype)
    expr = data.draw(expressions(variables))
    points = _points(data.draw(VALUES), variables)
    simplified = analyzer.simplify(expr)
    assert simplified.dtype == expr.dtype
    assert expr_size(simplified) <= expr_size(expr), (expr, simplified)
    for env in points:
        assert evaluate(simplified, env) == evaluate(expr, env), (expr, simplified, env)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_simplify_preserves_value_int32(data):
    check(data, "int32")


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_simplify_preserves_value_int64(data):
    check(data, "int64")


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_comparisons_and_logic_preserve_value(data):
    variables, analyzer = _setup("int32")
    a, b, c = (data.draw(expressions(variables)) for _ in range(3))
    cond = (a < b) & ~(b == c) | (a >= c)
    points = _points(data.draw(VALUES), variables)
    simplified = analyzer.simplify(cond)
    assert expr_size(simplified) <= expr_size(cond)
    for env in points:
        assert bool(evaluate(simplified, env)) == bool(evaluate(cond, env)), (cond, simplified)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_mixed_dtypes_keep_operand_dtypes(data):
    variables, analyzer = _setup("int32")
    wide = tir.Var("w", "int64")
    analyzer.bind(wide, tir.Range(E.const(0, "int64"), E.const(10, "int64")))
    expr = tir.cast("int64", data.draw(expressions(variables))) * 3 + wide
    values_list = data.draw(VALUES)
    simplified = analyzer.simplify(expr)
    assert simplified.dtype == "int64"

    def check_node(node):
        if isinstance(node, E.BinaryOp) and not node.result_bool:
            assert node.a.dtype == node.b.dtype == node.dtype, node
    tir.post_order_visit(simplified, check_node)
    for values in values_list:
        env = dict(zip(variables, values)) | {wide: values[0] % 10}
        assert evaluate(simplified, env) == evaluate(expr, env)
