"""Printing PrimFuncs and IRModules: signatures, root blocks, blocks, buffers, options.

The IR is built with node constructors so these tests do not depend on the parser.
"""
import textwrap
import time

import pytest

import mlcbench.script  # noqa: F401  (registers the printer)
from mlcbench import tir
from mlcbench.ir import IRModule
from mlcbench.tir import expr as E
from mlcbench.tir.stmt import (Block, BlockRealize, For, ForKind, IterType, IterVar, seq)

MM_RELU = '''
# from mlcbench.script import ir as I
# from mlcbench.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        Y = T.alloc_buffer((128, 128))
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(Y[vi, vj])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(Y[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
'''.strip("\n")


def dedent(text):
    return textwrap.dedent(text).strip("\n")


def body_of(func) -> str:
    """The function's text after its ``def`` line, dedented one level."""
    text = func.script().split("\n")
    start = next(k for k, line in enumerate(text) if line.startswith("def ")) + 1
    return dedent("\n".join(text[start:]))


def point(buffer, *indices):
    return tir.BufferRegion(buffer, tuple(E.Range(i, 1) for i in indices))


def axis(var, extent, kind=IterType.DATA_PAR, start=0):
    return IterVar(E.Range(start, extent), var, kind)


def serial(var, extent, body, start=0, kind=ForKind.SERIAL):
    return For(var, start, extent, kind, body)


def root(body, allocs=(), **kwargs):
    return BlockRealize((), tir.const(True), Block((), (), (), "root", body,
                                                   alloc_buffers=allocs, **kwargs))


def prim_func(body, buffers, attrs=None, scalars=()):
    params = [E.Var(b.name, "handle") for b in buffers]
    return tir.PrimFunc(params + list(scalars), body, dict(zip(params, buffers)), attrs or {})


def make_mm_relu():
    A, B, C, Y = (tir.decl_buffer((128, 128), "float32", name) for name in "ABCY")
    i, j, k, vi, vj, vk = (E.Var(name) for name in ("i", "j", "k", "vi", "vj", "vk"))
    matmul = Block((axis(vi, 128), axis(vj, 128), axis(vk, 128, IterType.COMM_REDUCE)),
                   (point(A, vi, vk), point(B, vk, vj)), (point(Y, vi, vj),), "Y",
                   tir.BufferStore(Y, Y[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj)),
                   init=tir.BufferStore(Y, tir.const(0.0), (vi, vj)))
    nest1 = serial(i, 128, serial(j, 128, serial(k, 128, BlockRealize(
        (i, j, k), tir.const(True), matmul))))
    i2, j2, vi2, vj2 = E.Var("i"), E.Var("j"), E.Var("vi"), E.Var("vj")
    relu = Block((axis(vi2, 128), axis(vj2, 128)), (point(Y, vi2, vj2),), (point(C, vi2, vj2),),
                 "C", tir.BufferStore(C, tir.max(Y[vi2, vj2], tir.const(0.0)), (vi2, vj2)))
    nest2 = serial(i2, 128, serial(j2, 128, BlockRealize((i2, j2), tir.const(True), relu)))
    return prim_func(root(seq(nest1, nest2), (Y,)), [A, B, C],
                     {"tir.noalias": True, "global_symbol": "mm_relu"})


def test_mm_relu_module_matches_tvm_output():
    assert IRModule({"mm_relu": make_mm_relu()}).script() == MM_RELU


def test_standalone_prim_func_has_tir_header_and_symbol_name():
    text = make_mm_relu().script()
    assert text.startswith('# from mlcbench.script import tir as T\n\n@T.prim_func\n'
                           'def mm_relu(A: T.Buffer((128, 128), "float32"),')
    assert repr(make_mm_relu()) == str(make_mm_relu()) == text


def test_function_name_defaults_to_main_and_can_be_chosen():
    func = make_mm_relu().replace(attrs={})
    assert "\ndef main(A: " in func.script()
    assert "\ndef relu_mm(A: " in func.script(name="relu_mm")
    assert func.script(show_meta=True) == func.script()


def test_module_functions_sorted_and_separated_by_blank_line():
    mod = IRModule({"zeta": make_mm_relu(), "alpha": make_mm_relu()})
    text = mod.script()
    assert text.index("def alpha(") < text.index("def zeta(")
    assert "C[vi, vj] = T.max(Y[vi, vj], T.float32(0))\n\n    @T.prim_func\n    def zeta" in text
    assert IRModule().script().endswith("class Module:\n    pass")
    assert mod.script(name="MyModule").count("class MyModule:") == 1


def test_script_options():
    text = make_mm_relu().script(print_line_numbers=True)
    assert text.splitlines()[2] == " 3 @T.prim_func"
    assert "\n  T.func_attr(" in make_mm_relu().script(indent_spaces=2)
    with pytest.raises(TypeError, match="unknown option"):
        make_mm_relu().script(colour=True)


def test_scalar_handle_and_int64_params():
    n, a = E.Var("n"), E.Var("a", "handle")
    i = E.Var("i", "int64")
    A = tir.decl_buffer((tir.const(4, "int64"), tir.const(4, "int64")), "int64", "A")
    body = serial(i, tir.const(4, "int64"), tir.BufferStore(A, i, (i, i)))
    func = prim_func(body, [A], scalars=[n, a])
    assert func.script().split("\n", 3)[3] == dedent('''
        def main(A: T.Buffer((T.int64(4), T.int64(4)), "int64"), n: T.int32, a: T.handle):
            for i in range(T.int64(4)):
                A[i, i] = i
    ''')


def test_symbolic_shapes_use_match_buffer_after_their_variables():
    n, m = E.Var("n", "int64"), E.Var("m", "int64")
    A, B = tir.decl_buffer((n, m), "float32", "A"), tir.decl_buffer((n,), "float32", "B")
    i = E.Var("i", "int64")
    pa, pb = E.Var("var_A", "handle"), E.Var("var_B", "handle")
    body = serial(i, n, tir.BufferStore(B, A[i, tir.const(0, "int64")], (i,)))
    func = tir.PrimFunc([pa, pb], body, {pa: A, pb: B}, {"tir.noalias": True})
    assert func.script().split("\n", 3)[3] == dedent('''
        def main(var_A: T.handle, var_B: T.handle):
            T.func_attr({"tir.noalias": T.bool(True)})
            n, m = T.int64(), T.int64()
            A = T.match_buffer(var_A, (n, m))
            B = T.match_buffer(var_B, (n,))
            for i in range(n):
                B[i] = A[i, T.int64(0)]
    ''')


def test_buffers_with_layout_details_print_their_keywords():
    A = tir.decl_buffer((16,), "float32", "A", strides=(2,), elem_offset=4, align=64,
                        offset_factor=2)
    i = E.Var("i")
    func = prim_func(serial(i, 16, tir.BufferStore(A, 0.0, (i,))), [A])
    assert body_of(func) == dedent('''
        A_1 = T.match_buffer(A, (16,), strides=(2,), elem_offset=4, align=64, offset_factor=2)
        for i in range(16):
            A_1[i] = T.float32(0)
    ''')


def _split_block_func(predicate=True, remap=False):
    A, B = tir.decl_buffer((128,), "float32", "A"), tir.decl_buffer((128,), "float32", "B")
    io, ii, vi = E.Var("i_0"), E.Var("i_1"), E.Var("vi")
    binding = io * 4 + ii
    block = Block((axis(vi, 128),), (point(A, vi),), (point(B, vi),), "B",
                  tir.BufferStore(B, A[vi] * 2.0, (vi,)), annotations={"unroll": 4})
    cond = binding < 128 if predicate else tir.const(True)
    body = serial(io, 33, serial(ii, 4, BlockRealize((binding,), cond, block)))
    return prim_func(root(body), [A, B])


def test_block_with_computed_binding_predicate_and_attributes():
    assert body_of(_split_block_func()) == dedent('''
        # with T.block("root"):
        for i_0, i_1 in T.grid(33, 4):
            with T.block("B"):
                vi = T.axis.spatial(128, i_0 * 4 + i_1)
                T.where(i_0 * 4 + i_1 < 128)
                T.reads(A[vi])
                T.writes(B[vi])
                T.block_attr({"unroll": 4})
                B[vi] = A[vi] * T.float32(2)
    ''')


def test_remap_only_when_loop_domain_matches():
    A = tir.decl_buffer((128,), "float32", "A")
    j, k, vj, vk, vs = (E.Var(name) for name in ("j", "k", "vj", "vk", "vs"))
    block = Block((axis(vj, 4), axis(vk, 8, IterType.COMM_REDUCE, start=2), axis(vs, 128)),
                  (point(A, vk),), (point(A, vs),), "R", tir.BufferStore(A, A[vk] + vj, (vs,)))
    nest = serial(j, 4, serial(k, 8, BlockRealize((j, k, k), tir.const(True), block), start=2))
    assert body_of(prim_func(root(nest), [A])) == dedent('''
        # with T.block("root"):
        for j in range(4):
            for k in range(2, 10):
                with T.block("R"):
                    vj, vk = T.axis.remap("SR", [j, k])
                    vs = T.axis.spatial(128, k)
                    T.reads(A[vk])
                    T.writes(A[vs])
                    A[vs] = A[vk] + T.Cast("float32", vj)
    ''')
    single = Block((axis(vk, 8, IterType.COMM_REDUCE, start=2),), (), (), "S", tir.Evaluate(vk))
    nest = serial(k, 8, BlockRealize((k,), tir.const(True), single), start=2)
    assert "vk = T.axis.reduce((2, 10), k)\n" in prim_func(root(nest), [A]).script()


def test_explicit_root_block_when_it_carries_more_than_allocations():
    func = _split_block_func(predicate=False)
    annotated = func.replace(body=func.body.replace(block=func.body.block.replace(
        annotations={"meta_schedule.parallel": 16})))
    lines = annotated.script().split("\n")
    assert lines[4:9] == ['    with T.block("root"):', "        T.reads()", "        T.writes()",
                          '        T.block_attr({"meta_schedule.parallel": 16})',
                          "        for i_0, i_1 in T.grid(33, 4):"]


def test_match_buffer_and_local_alloc_in_block():
    A = tir.decl_buffer((128,), "float32", "A")
    sub = tir.decl_buffer((4,), "float32", "A")
    local = tir.decl_buffer((4,), "float32", "local", scope="local")
    i, vi = E.Var("i"), E.Var("vi")
    block = Block((axis(vi, 32),), (tir.BufferRegion(A, (E.Range(vi * 4, 4),)),), (), "tile",
                  tir.BufferStore(local, sub[0], (0,)), alloc_buffers=(local,),
                  match_buffers=(tir.MatchBufferRegion(sub, tir.BufferRegion(
                      A, (E.Range(vi * 4, 4),))),))
    func = prim_func(root(serial(i, 32, BlockRealize((i,), tir.const(True), block))), [A])
    assert body_of(func) == dedent('''
        # with T.block("root"):
        for i in range(32):
            with T.block("tile"):
                vi = T.axis.spatial(32, i)
                T.reads(A[vi * 4:vi * 4 + 4])
                T.writes()
                local = T.alloc_buffer((4,), scope="local")
                A_1 = T.match_buffer(A[vi * 4:vi * 4 + 4], (4,))
                local[0] = A_1[0]
    ''')


def test_no_root_comment_for_a_function_without_blocks():
    A = tir.decl_buffer((8,), "float32", "A")
    i = E.Var("i")
    func = prim_func(root(serial(i, 8, tir.BufferStore(A, 0.0, (i,)))), [A])
    assert '    with T.block("root"):\n        T.reads()' in func.script()


def test_printing_a_three_loop_function_takes_milliseconds():
    func = make_mm_relu()
    func.script()
    start = time.perf_counter()
    for _ in range(20):
        func.script()
    per_print = (time.perf_counter() - start) / 20
    assert per_print < 0.005, f"{per_print * 1e3:.2f} ms per print"


class _OtherFunction:
    """Stands in for a function kind another printer knows (a Relax function)."""


def test_modules_with_unknown_functions_are_left_to_other_printers():
    from mlcbench.script.printer import register_function_printer, script
    from mlcbench.script.printer.module import _FUNCTION_PRINTERS
    mod = IRModule({"main": _OtherFunction(), "mm_relu": make_mm_relu()})
    assert script(mod) is None and script(object()) is None
    register_function_printer(
        _OtherFunction, lambda func, name, depth, indent: " " * indent * depth + f"# {name}",
        "# from mlcbench.script import relax as R")
    try:
        text = script(mod)
    finally:
        del _FUNCTION_PRINTERS[_OtherFunction]
    assert text.startswith("# from mlcbench.script import ir as I\n"
                           "# from mlcbench.script import relax as R\n"
                           "# from mlcbench.script import tir as T\n\n")
    assert "class Module:\n    # main\n\n    @T.prim_func\n    def mm_relu(" in text
