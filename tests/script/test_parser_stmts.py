"""Statements: stores, +=, if/else, lets, asserts, evaluate, allocate and buffer views."""
import pytest

from mlcbench.ir import ParseError, assert_structural_equal
from mlcbench.script import from_source
from mlcbench.script import tir as T
from mlcbench.tir import (Allocate, AssertStmt, BufferStore, DeclBuffer, Evaluate, FloatImm,
                          For, ForKind, IfThenElse, IntImm, LetStmt, PrimFunc, SeqStmt, Var,
                          decl_buffer)


def _func(body_builder, shape=(8,), dtype="float32"):
    a = Var("a", "handle")
    A = decl_buffer(shape, dtype, name="A")
    return PrimFunc((a,), body_builder(A), {a: A})


def test_store_casts_python_literals_to_buffer_dtype():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int8")):
        A[0] = 1
        B[1] = 3

    first, second = f.body.seq
    assert first.value == FloatImm("float32", 1.0) and isinstance(first.value, FloatImm)
    assert second.value.dtype == "int8" and second.value.value == 3


def test_augmented_assignment_reads_and_writes_the_element():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        A[1] += T.float32(2)
        A[2] -= A[1]
        A[3] *= 2

    expected = _func(lambda A: SeqStmt((
        BufferStore(A, A[1] + FloatImm("float32", 2.0), (1,)),
        BufferStore(A, A[2] - A[1], (2,)),
        BufferStore(A, A[3] * FloatImm("float32", 2.0), (3,)))))
    assert_structural_equal(f, expected)


def test_if_else_and_static_if():
    flag = False

    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in range(8):
            if i < 4:
                A[i] = T.float32(0)
            else:
                A[i] = T.float32(1)
        if flag:
            A[0] = T.float32(5)

    def build(A):
        i = Var("i")
        branch = IfThenElse(i < 4, BufferStore(A, 0.0, (i,)), BufferStore(A, 1.0, (i,)))
        return For(i, 0, 8, ForKind.SERIAL, branch)
    assert_structural_equal(f, _func(build))


def test_if_without_else():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in range(8):
            if i % 2 == 0:
                A[i] = T.float32(0)

    branch = f.body.body
    assert isinstance(branch, IfThenElse) and branch.else_case is None


def test_annotated_let_and_plain_let():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in range(4):
            x: T.int32 = i * 2
            y = x + 1
            A[y] = T.float32(0)

    def build(A):
        i, x, y = Var("i"), Var("x"), Var("y")
        body = LetStmt(x, i * 2, LetStmt(y, x + 1, BufferStore(A, 0.0, (y,))))
        return For(i, 0, 4, ForKind.SERIAL, body)
    assert_structural_equal(f, _func(build))


def test_let_statement_context_and_float_let():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        with T.LetStmt(T.float32(3)) as c:
            A[0] = c
        s: T.float32 = A[1] * T.float32(2)
        A[2] = s

    first, second = f.body.seq
    assert isinstance(first, LetStmt) and first.var.dtype == "float32"
    assert isinstance(second, LetStmt) and second.var.name == "s"
    assert isinstance(second.body, BufferStore) and second.body.value is second.var


def test_assert_wraps_the_rest_of_the_body():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), n: T.int32):
        A[0] = T.float32(0)
        assert n > 0, "n must be positive"
        T.Assert(n < 100, "n too large")
        A[1] = T.float32(1)

    first, second = f.body.seq
    assert isinstance(second, AssertStmt) and second.message == "n must be positive"
    assert isinstance(second.body, AssertStmt) and second.body.message == "n too large"
    assert isinstance(second.body.body, BufferStore)
    assert [p.dtype for p in f.params] == ["handle", "int32"]


def test_evaluate_and_bare_call_statements():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        T.evaluate(0)
        T.call_extern("int32", "do_something", 1)
        T.evaluate(T.call_extern("int32", "other"))

    first, second, third = f.body.seq
    assert isinstance(first, Evaluate) and isinstance(first.value, IntImm)
    assert (first.value.dtype, first.value.value) == ("int32", 0)
    assert isinstance(second, Evaluate) and second.value.op == "tir.call_extern"
    assert second.value.args[0].value == "do_something"
    assert third.value.args[0].value == "other"


def test_allocate_with_buffer_view_reuses_the_allocated_buffer():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        ptr = T.allocate([8], "float32", "global")
        B = T.Buffer((8,), "float32", data=ptr)
        for i in range(8):
            B[i] = A[i]
        for i in range(8):
            A[i] = B[i]

    alloc = f.body
    assert isinstance(alloc, Allocate) and alloc.buffer.scope == "global"
    first, second = alloc.body.seq
    assert first.body.buffer is alloc.buffer and second.body.value.buffer is alloc.buffer


def test_decl_buffer_with_and_without_data():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        A_2d = T.decl_buffer((4, 4), "float32", data=A.data)
        C = T.decl_buffer((4,), "float32")
        C[0] = A_2d[1, 1]

    view = f.body
    assert isinstance(view, DeclBuffer) and view.buffer.data is f.buffer_map[f.params[0]].data
    alloc = view.body
    assert isinstance(alloc, Allocate) and isinstance(alloc.body, DeclBuffer)
    assert alloc.buffer is alloc.body.buffer


def test_buffer_alias_over_param_data():
    @T.prim_func
    def f(A: T.Buffer((4, 4), "float32")):
        A_flat = T.Buffer((16,), data=A.data)
        for i in T.parallel(16):
            A_flat[i] = T.float32(0)

    store = f.body.body
    param_buffer = f.buffer_map[f.params[0]]
    assert store.buffer is not param_buffer and store.buffer.data is param_buffer.data
    assert store.buffer.name == "A_flat"


def test_docstring_and_pass_are_ignored():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        """Zero the first element."""
        pass
        A[0] = T.float32(0)

    assert isinstance(f.body, BufferStore)


def test_match_buffer_params_and_symbolic_shapes():
    @T.prim_func
    def f(a: T.handle, b: T.handle):
        n = T.int32()
        B = T.match_buffer(b, (n,), dtype="int64")
        A = T.match_buffer(a, (n, 128), "float32")
        for i in range(n):
            B[i] = T.int64(A[i, 0])

    a, b = f.params
    assert list(f.buffer_map) == [a, b]          # ordered by parameter
    A, B = f.buffer_map[a], f.buffer_map[b]
    assert A.shape[0] is B.shape[0] and A.shape[0].name == "n"
    assert B.dtype == "int64" and f.body.extent is A.shape[0]


def test_var_helper_and_scalar_params():
    @T.prim_func
    def f(a: T.handle, x: T.float32):
        m = T.var("int32")
        A = T.match_buffer(a, (m,))
        for i in range(m):
            A[i] = x

    assert f.params[1].dtype == "float32" and f.body.body.value is f.params[1]


def test_assigning_twice_with_chained_assignment_is_an_error():
    with pytest.raises(ParseError, match="chained assignment"):
        from_source("""
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    x = y = 1
""")


def test_slices_as_values_are_vector_accesses():
    @T.prim_func
    def f(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
        for i in range(4):
            B[i, 0:4] = A[i, 4:8] + T.Broadcast(T.float32(1), 4)

    store = f.body.body
    assert store.indices[1].lanes == 4 and int(store.indices[1].base) == 0
    load = store.value.a
    assert load.dtype == "float32x4" and int(load.indices[1].base) == 4
    assert load.indices[0] is f.body.loop_var


def test_slice_with_symbolic_length_cannot_be_a_value():
    with pytest.raises(ParseError, match="constant slice length"):
        from_source("""
@T.prim_func
def f(A: T.Buffer((16,), "float32"), n: T.int32):
    A[0:n] = T.float32(0)
""")


def test_tuple_of_symbolic_vars_takes_the_target_names():
    func = from_source("""
@T.prim_func
def f(a: T.handle):
    n, m = T.int64(), T.int64()
    A = T.match_buffer(a, (n, m))
    A[0, 0] = T.float32(0)
""")
    shape = func.buffer_map[func.params[0]].shape
    assert [s.name for s in shape] == ["n", "m"] and shape[0].dtype == "int64"


def test_decl_buffer_over_an_allocation_declares_the_allocated_buffer():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        ptr = T.allocate([4], "float32", "global")
        C = T.decl_buffer((4,), data=ptr)
        C[0] = A[0]

    alloc = f.body
    assert isinstance(alloc, Allocate) and isinstance(alloc.body, DeclBuffer)
    assert alloc.body.buffer is alloc.buffer and alloc.body.body.buffer is alloc.buffer
