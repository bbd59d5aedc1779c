"""Printer and parser are inverses on every kind of TIR the project makes.

For each module below, ``from_source(mod.script())`` must be structurally equal to
``mod`` and printing the parsed module must give back the same text:

* the IR before and after every lowering pass, on the course programs;
* ``sch.mod`` after each of several schedule primitives;
* ``te.create_prim_func`` outputs of topi operators;
* statements that bind something for a scope shorter than the rest of the body
  (``with T.LetStmt(...) as x:``, ``with T.Assert(...):``, ``with T.allocate(...)``).
"""
import importlib.util
import pathlib

import pytest

import mlcbench as tvm
from mlcbench import te, tir, topi
from mlcbench.ir import assert_structural_equal
from mlcbench.ir.errors import ParseError
from mlcbench.ir.instrument import RecordingInstrument
from mlcbench.script import from_source
from mlcbench.tir import expr as E
from mlcbench.tir import stmt as S
from mlcbench.tir.buffer import decl_buffer
from mlcbench.tir.function import PrimFunc

_COURSE_FILE = pathlib.Path(__file__).parents[1] / "driver" / "test_course_programs.py"
COURSE_PROGRAMS = ("vector_add", "MMRelu", "bmm_relu", "broadcast_add", "conv", "softmax",
                   "loop_kinds")


def _load_course():
    spec = importlib.util.spec_from_file_location("course_programs", _COURSE_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


course = _load_course()


def assert_round_trips(ir, where: str = "") -> None:
    """``ir`` parses back from its text to an equal IR whose text is the same."""
    text = ir.script()
    again = from_source(text)
    assert_structural_equal(again, ir)
    assert again.script() == text, f"printing is not a fixed point {where}:\n{text}"


# -- lowering passes --------------------------------------------------------------------

@pytest.mark.parametrize("name", COURSE_PROGRAMS)
def test_every_lowering_pass_input_and_output_round_trips(name):
    recorder = RecordingInstrument()
    with tvm.transform.PassContext(instruments=[recorder]):
        tvm.lower(getattr(course, name))
    assert len(recorder.records) >= 5, [r.name for r in recorder.records]
    for record in recorder.records:
        assert_round_trips(record.before, f"before {record.name}")
        assert_round_trips(record.after, f"after {record.name}")


# -- schedules --------------------------------------------------------------------------

def test_matmul_schedule_round_trips_after_each_primitive():
    sch = tir.Schedule(course.MMRelu)
    block = sch.get_block("Y", "mm_relu")
    i, j, k = sch.get_loops(block)
    j0, j1 = sch.split(j, factors=[None, 4])
    assert_round_trips(sch.mod, "after split")
    sch.reorder(j0, k, j1)
    assert_round_trips(sch.mod, "after reorder")
    sch.cache_write(block, 0, "global")
    assert_round_trips(sch.mod, "after cache_write")
    sch.decompose_reduction(block, k)
    assert_round_trips(sch.mod, "after decompose_reduction")
    fused = sch.fuse(i, j0)
    assert_round_trips(sch.mod, "after fuse")
    sch.parallel(fused)
    sch.vectorize(j1)
    assert_round_trips(sch.mod, "after parallel/vectorize")
    assert_round_trips(tvm.lower(sch.mod), "after lowering the schedule")


def test_compute_at_round_trips():
    sch = tir.Schedule(course.MMRelu)
    _, j = sch.get_loops(sch.get_block("C", "mm_relu"))
    sch.compute_at(sch.get_block("Y", "mm_relu"), j)
    assert_round_trips(sch.mod, "after compute_at")
    assert_round_trips(tvm.lower(sch.mod), "after lowering compute_at")


def test_split_with_uneven_factor_round_trips_its_predicate():
    sch = tir.Schedule(course.vector_add)
    (i,) = sch.get_loops(sch.get_block("C"))
    sch.split(i, factors=[None, 5])            # 128 = 26 * 5 - 2: a T.where guards it
    assert "T.where" in sch.mod.script()
    assert_round_trips(sch.mod, "after an uneven split")


# -- te / topi --------------------------------------------------------------------------

def _dense():
    data, weight = te.placeholder((4, 8), name="A"), te.placeholder((6, 8), name="W")
    return [data, weight, topi.nn.dense(data, weight)]


def _conv2d_padded():
    data, kernel = te.placeholder((1, 3, 8, 8), name="X"), te.placeholder((4, 3, 3, 3), name="K")
    return [data, kernel, topi.nn.conv2d_nchw(data, kernel, 1, 1, 1)]


def _softmax():
    x = te.placeholder((4, 16), name="x")
    return [x, topi.nn.softmax(x)]


def _max_pool():
    x = te.placeholder((1, 3, 8, 8), name="x")
    return [x, topi.nn.pool2d(x, (2, 2), (2, 2), (1, 1), (1, 1, 1, 1), "max")]


def _avg_pool():
    x = te.placeholder((1, 3, 9, 9), name="x")
    return [x, topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "avg")]


@pytest.mark.parametrize("make", [_dense, _conv2d_padded, _softmax, _max_pool, _avg_pool],
                         ids=lambda make: make.__name__.strip("_"))
def test_topi_prim_func_round_trips_before_and_after_lowering(make):
    func = te.create_prim_func(make())
    assert_round_trips(func, "from create_prim_func")
    assert_round_trips(tvm.lower(func), "after lowering")


# -- scoped statements that are not last in their sequence -------------------------------

A = decl_buffer((16,), "float32", "A")
A_HANDLE, N = E.Var("a", "handle"), E.Var("n", "int32")


def _func(*stmts) -> PrimFunc:
    return PrimFunc((A_HANDLE, N), S.seq(*stmts), {A_HANDLE: A}, {})


def _store(buffer, index, value=1.0):
    return S.BufferStore(buffer, E.FloatImm("float32", value), (E.convert(index),))


def _after():
    return S.Evaluate(E.IntImm("int32", 0))


def test_let_stmt_followed_by_statements_prints_as_with_and_round_trips():
    x = E.Var("x", "int32")
    func = _func(S.LetStmt(x, N + 1, _store(A, x)), _after())
    assert "with T.LetStmt(n + 1) as x:" in func.script()
    assert_round_trips(func)


def test_assert_followed_by_statements_prints_as_with_and_round_trips():
    func = _func(S.AssertStmt(N > 0, "n must be positive", _store(A, 0)), _after())
    assert 'with T.Assert(n > 0, "n must be positive"):' in func.script()
    assert_round_trips(func)


def test_allocate_followed_by_statements_round_trips():
    tmp = decl_buffer((4,), "float32", "tmp", scope="local")
    func = _func(S.Allocate(tmp, _store(tmp, 0), {"pragma": 1}), _after())
    assert "with T.allocate([4], \"float32\", \"local\"" in func.script()
    assert_round_trips(func)


def test_allocate_with_decl_buffer_followed_by_statements_round_trips():
    tmp = decl_buffer((4,), "float32", "tmp")
    func = _func(S.Allocate(tmp, S.DeclBuffer(tmp, _store(tmp, 3))), _store(A, 1))
    assert_round_trips(func)


def test_nested_with_scopes_keep_their_own_bodies():
    x, tmp = E.Var("x", "int32"), decl_buffer((4,), "float32", "tmp")
    inner = S.Allocate(tmp, S.seq(_store(tmp, x), _store(A, x)))
    func = _func(S.LetStmt(x, N, S.seq(S.AssertStmt(x < 16, "x", inner), _after())),
                 _after())
    assert_round_trips(func)


def test_decl_buffer_with_scope_parses_to_allocate_and_decl_buffer():
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    with T.decl_buffer((4,), scope="local") as tmp:
        tmp[0] = T.float32(2)
        A[0] = tmp[0]
    A[1] = T.float32(0)
''')
    first = func.body.seq[0]
    assert isinstance(first, S.Allocate) and isinstance(first.body, S.DeclBuffer)
    assert isinstance(func.body.seq[1], S.BufferStore)
    assert_round_trips(func)


@pytest.mark.parametrize("text, message", [
    ('with T.Assert(n > 0, "m") as x:\n        T.evaluate(0)', "binds no name"),
    ('with T.allocate([4], "float32", "global"):\n        T.evaluate(0)', "needs `as name`"),
    ('with T.evaluate(0):\n        T.evaluate(0)', "expected `with T.block"),
])
def test_malformed_with_scopes_are_reported(text, message):
    source = f"@T.prim_func\ndef main(n: T.int32):\n    {text}\n    T.evaluate(1)\n"
    with pytest.raises(ParseError, match=message):
        from_source(source)


# -- cases the random round trip (test_roundtrip_random.py) once found ------------------

def test_comparison_with_constant_on_the_left_keeps_its_operator():
    func = _func(S.IfThenElse(E.binary(E.LT, E.IntImm("int32", 0), N), _store(A, 0)))
    assert "if 0 < n:" in func.script()
    condition = from_source(func.script()).body.condition
    assert isinstance(condition, E.LT) and isinstance(condition.a, E.IntImm)
    assert_round_trips(func)


def test_buffer_view_needed_by_an_else_branch_is_printed_before_the_if():
    tmp = decl_buffer((4,), "float32", "tmp")
    branch = S.IfThenElse(N < 3, _store(A, 0), _store(tmp, N))
    func = _func(S.Allocate(tmp, branch), _after())
    lines = func.script().splitlines()
    assert lines.index("        if n < 3:") > lines.index("        tmp_1 = T.Buffer((4,), data=tmp)")
    assert_round_trips(func)


def test_loop_from_a_bound_keeps_its_symbolic_extent():
    i, j = E.Var("i", "int32"), E.Var("j", "int32")
    start = E.binary(E.Mul, i, E.IntImm("int32", 19))
    inner = S.For(j, start, E.binary(E.Mul, N, E.IntImm("int32", 2)), S.ForKind.SERIAL,
                  _store(A, j), None, {})
    func = _func(S.For(i, E.IntImm("int32", 0), E.IntImm("int32", 2), S.ForKind.UNROLLED,
                       inner, None, {}))
    assert "for j in range(i * 19, i * 19 + n * 2):" in func.script()
    assert_round_trips(func)


def test_shadowed_allocations_keep_their_names_when_printed_again():
    outer, inner = decl_buffer((1,), "float32", "tmp"), decl_buffer((1,), "float32", "tmp")
    func = _func(S.Allocate(outer, S.Allocate(inner, S.DeclBuffer(inner, _store(inner, 0)))))
    assert "tmp_2 = T.decl_buffer((1,), data=tmp_1)" in func.script()
    assert_round_trips(func)
