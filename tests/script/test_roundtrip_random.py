"""Random well-formed TIR statements print and parse back to themselves.

The generator builds what the project's passes build: loops of every kind (from 0 or
from a bound, with annotations or not), if/else, ``LetStmt``, ``AssertStmt``,
allocations with or without a ``DeclBuffer``, and stores whose indices are random
integer expressions over the variables in scope. Expressions are made with
``E.binary``, which folds constants as the parser does, so the IR is the IR a pass or
the parser would produce. Names repeat on purpose (every let variable is ``x``, every
allocation ``tmp``): the printer must rename shadowed binders.
"""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcbench.ir import assert_structural_equal
from mlcbench.script import from_source
from mlcbench.tir import expr as E
from mlcbench.tir import stmt as S
from mlcbench.tir.buffer import decl_buffer
from mlcbench.tir.function import PrimFunc

OUT = decl_buffer((64,), "float32", "A")
OUT_HANDLE, N = E.Var("a", "handle"), E.Var("n", "int32")
INDEX_OPS = (E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod, E.Min, E.Max)
CMP_OPS = (E.LT, E.LE, E.GT, E.GE, E.EQ, E.NE)
THREADS = ("threadIdx.x", "blockIdx.x")


@st.composite
def index_expr(draw, scope, depth=2):
    """An int32 expression over the variables in ``scope``."""
    leaves = [st.integers(-8, 40).map(lambda v: E.IntImm("int32", v))]
    if scope:
        leaves.append(st.sampled_from(scope))
    if depth == 0 or draw(st.booleans()):
        return draw(st.one_of(*leaves))
    op = draw(st.sampled_from(INDEX_OPS))
    a = draw(index_expr(scope, depth - 1))
    b = draw(index_expr(scope, depth - 1))
    if op in (E.FloorDiv, E.FloorMod) and isinstance(b, E.IntImm) and b.value == 0:
        b = E.IntImm("int32", 3)
    return E.binary(op, a, b)


@st.composite
def condition(draw, scope):
    cmp = E.binary(draw(st.sampled_from(CMP_OPS)), draw(index_expr(scope, 1)),
                   draw(index_expr(scope, 1)))
    if isinstance(cmp, E.IntImm) or not draw(st.booleans()):
        return cmp
    other = E.binary(E.LT, draw(st.sampled_from(scope or [N])), E.IntImm("int32", 7))
    return E.binary(draw(st.sampled_from((E.And, E.Or))), cmp, other)


@st.composite
def store(draw, scope, buffers):
    buffer = draw(st.sampled_from(buffers))
    index = draw(index_expr(scope))
    return S.BufferStore(buffer, draw(float_value(scope, buffers)), (index,))


@st.composite
def float_value(draw, scope, buffers):
    """A float32 value: a constant, a cast index, a load, or a select between them."""
    value = E.FloatImm("float32", draw(st.sampled_from((0.0, 1.5, -2.0))))
    kind = draw(st.sampled_from(("const", "cast", "load", "select")))
    if kind == "cast":
        value = E.binary(E.Add, E.Cast("float32", draw(index_expr(scope, 1))), value)
    elif kind == "load":
        source = draw(st.sampled_from(buffers))
        value = E.binary(E.Mul, E.BufferLoad(source, (draw(index_expr(scope, 1)),)), value)
    elif kind == "select":
        value = E.Select(draw(condition(scope)), value, E.FloatImm("float32", 4.0))
    return value


@st.composite
def loop(draw, scope, buffers, depth):
    var = E.Var(draw(st.sampled_from(("i", "j"))), "int32")
    kind = draw(st.sampled_from(list(S.ForKind)))
    start = E.IntImm("int32", 0) if draw(st.booleans()) else draw(index_expr(scope, 1))
    extent = draw(st.sampled_from((N, E.binary(E.Mul, N, E.IntImm("int32", 2)))
                                  + tuple(E.IntImm("int32", v) for v in range(1, 10))))
    body = draw(statement([*scope, var], buffers, depth - 1))
    binding = None
    if kind == S.ForKind.THREAD_BINDING:
        thread = draw(st.sampled_from(THREADS))
        binding = S.IterVar(E.Range(start, extent), E.Var(thread, "int32"),
                            S.IterType.THREAD_INDEX, thread)
    annotations = draw(st.sampled_from(({}, {"pragma_unroll_explicit": 1})))
    return S.For(var, start, extent, kind, body, binding, annotations)


@st.composite
def binding_stmt(draw, scope, buffers, depth):
    """LetStmt, AssertStmt or Allocate (optionally with a DeclBuffer) around a body."""
    what = draw(st.sampled_from(("let", "assert", "allocate", "decl")))
    if what == "let" and draw(st.booleans()):       # a float binding, used by a store
        var = E.Var("x", "float32")
        value = draw(float_value(scope, buffers))
        stored = S.BufferStore(buffers[-1], var, (draw(index_expr(scope, 1)),))
        return S.LetStmt(var, value, S.seq(stored, draw(statement(scope, buffers, depth - 1))))
    if what == "let":
        var = E.Var("x", "int32")
        value = draw(index_expr(scope))
        return S.LetStmt(var, value, draw(statement([*scope, var], buffers, depth - 1)))
    if what == "assert":
        message = draw(st.sampled_from(("", "index out of range", 'say "no"')))
        return S.AssertStmt(draw(condition(scope)), message,
                            draw(statement(scope, buffers, depth - 1)))
    tmp = decl_buffer((draw(st.integers(1, 8)),), "float32", "tmp",
                      scope=draw(st.sampled_from(("global", "local"))))
    body = draw(statement(scope, [*buffers, tmp], depth - 1))
    if what == "decl":
        body = S.DeclBuffer(tmp, body)
    return S.Allocate(tmp, body)


@st.composite
def statement(draw, scope, buffers, depth=3):
    simple = [store(scope, buffers),
              st.just(S.Evaluate(E.IntImm("int32", 0)))]
    if depth <= 0:
        return draw(st.one_of(*simple))
    kind = draw(st.sampled_from(("simple", "loop", "if", "bind", "seq", "seq")))
    if kind == "simple":
        return draw(st.one_of(*simple))
    if kind == "loop":
        return draw(loop(scope, buffers, depth))
    if kind == "bind":
        return draw(binding_stmt(scope, buffers, depth))
    if kind == "if":
        then_case = draw(statement(scope, buffers, depth - 1))
        else_case = draw(st.none() | statement(scope, buffers, depth - 1))
        return S.IfThenElse(draw(condition(scope)), then_case, else_case)
    items = draw(st.lists(statement(scope, buffers, depth - 1), min_size=2, max_size=3))
    return S.seq(*items)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(statement([N], [OUT]))
def test_random_statements_round_trip(body):
    func = PrimFunc((OUT_HANDLE, N), body, {OUT_HANDLE: OUT}, {})
    text = func.script()
    again = from_source(text)
    assert_structural_equal(again, func)
    assert again.script() == text
