"""Names in printed scripts: hints made unique while in scope, reused after."""
import textwrap

import mlcbench.script  # noqa: F401  (registers the printer)
from mlcbench import tir
from mlcbench.tir import expr as E
from mlcbench.tir.stmt import Block, BlockRealize, For, ForKind, seq


def dedent(text):
    return textwrap.dedent(text).strip("\n")


def serial(var, extent, body):
    return For(var, 0, extent, ForKind.SERIAL, body)


A = tir.decl_buffer((8, 8), "float32", "A")


def test_shadowing_binders_get_suffixes():
    outer, inner = E.Var("i"), E.Var("i")
    stmt = serial(outer, 8, For(inner, 0, 8, ForKind.PARALLEL,
                                tir.BufferStore(A, 0.0, (outer, inner))))
    assert str(stmt) == dedent("""
        for i in range(8):
            for i_1 in T.parallel(8):
                A[i, i_1] = T.float32(0)
    """)


def test_sibling_scopes_reuse_a_name():
    first, second = E.Var("i"), E.Var("i")
    stmt = seq(serial(first, 8, tir.BufferStore(A, 0.0, (first, first))),
               serial(second, 8, tir.BufferStore(A, 1.0, (second, second))))
    assert str(stmt) == dedent("""
        for i in range(8):
            A[i, i] = T.float32(0)
        for i in range(8):
            A[i, i] = T.float32(1)
    """)


def test_buffers_and_vars_share_one_namespace():
    B = tir.decl_buffer((8,), "float32", "A")     # same hint as the parameter A
    i = E.Var("A")
    block = Block((), (), (), "root", serial(i, 8, tir.BufferStore(B, A[i, i], (i,))),
                  alloc_buffers=(B,))
    param = E.Var("A", "handle")
    func = tir.PrimFunc([param], BlockRealize((), tir.const(True), block), {param: A})
    body = func.script().split("\n", 4)[4]
    assert body == "\n".join([
        '    # with T.block("root"):',
        "    A_1 = T.alloc_buffer((8,))",
        "    for A_2 in range(8):",
        "        A_1[A_2] = A[A_2, A_2]"])


def test_hints_become_identifiers_and_avoid_reserved_names():
    names = [E.Var("T"), E.Var("A.shared"), E.Var(""), E.Var("lambda"), E.Var("range"),
             E.Var("0x")]
    expr = names[0]
    for var in names[1:]:
        expr = expr + var
    assert str(expr) == "T_1 + A_shared + v + lambda_1 + range_1 + v0x"


def test_distinct_free_variables_with_one_hint_stay_distinct():
    a, b = E.Var("n"), E.Var("n")
    assert str(a * b) == "n * n_1"
