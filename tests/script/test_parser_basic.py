"""@T.prim_func / @I.ir_module on course programs, compared with IR built by hand."""
import mlcbench
from mlcbench import tir
from mlcbench.ir import assert_structural_equal, structural_equal
from mlcbench.script import ir as I
from mlcbench.script import tir as T
from mlcbench.tir import (Add, Block, BlockRealize, BufferRegion, BufferStore,
                          For, ForKind, IntImm, IterType, IterVar, Max, Mul, PrimFunc, Range,
                          SeqStmt, Var, decl_buffer)


def _loops(vars_, extents, body):
    for var, extent in reversed(list(zip(vars_, extents))):
        body = For(var, 0, extent, ForKind.SERIAL, body)
    return body


def _point(buffer, *indices):
    return BufferRegion(buffer, tuple(Range(i, 1) for i in indices))


def _expected_mm_relu() -> PrimFunc:
    a, b, c = (Var(n, "handle") for n in "abc")
    A, B, C, Y = (decl_buffer((128, 128), "float32", name=n) for n in "ABCY")
    i, j, k = Var("i"), Var("j"), Var("k")
    vi, vj, vk = Var("vi"), Var("vj"), Var("vk")
    dom = Range(0, 128)
    y_block = Block(
        (IterVar(dom, vi, IterType.DATA_PAR), IterVar(dom, vj, IterType.DATA_PAR),
         IterVar(dom, vk, IterType.COMM_REDUCE)),
        (_point(A, vi, vk), _point(B, vk, vj)), (_point(Y, vi, vj),), "Y",
        BufferStore(Y, Y[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj)),
        init=BufferStore(Y, T.float32(0), (vi, vj)))
    y_nest = _loops((i, j, k), (128, 128, 128), BlockRealize((i, j, k), True, y_block))
    i2, j2, vi2, vj2 = Var("i"), Var("j"), Var("vi"), Var("vj")
    c_block = Block((IterVar(dom, vi2), IterVar(dom, vj2)), (_point(Y, vi2, vj2),),
                    (_point(C, vi2, vj2),), "C",
                    BufferStore(C, tir.max(Y[vi2, vj2], T.float32(0)), (vi2, vj2)))
    c_nest = _loops((i2, j2), (128, 128), BlockRealize((i2, j2), True, c_block))
    root = Block((), (), (), "root", SeqStmt((y_nest, c_nest)), alloc_buffers=(Y,))
    body = BlockRealize((), IntImm("bool", 1), root)
    return PrimFunc((a, b, c), body, {a: A, b: B, c: C},
                    {"global_symbol": "mm_relu", "tir.noalias": True})


@I.ir_module
class MyModule:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128), "float32")
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


def test_mm_relu_matches_hand_built_ir():
    assert isinstance(MyModule, mlcbench.IRModule)
    assert_structural_equal(MyModule["mm_relu"], _expected_mm_relu())


def test_mm_relu_fields():
    func = MyModule["mm_relu"]
    assert [p.dtype for p in func.params] == ["handle"] * 3
    buffers = [func.buffer_map[p] for p in func.params]
    assert [b.name for b in buffers] == ["A", "B", "C"]
    assert all(b.data is not p for b, p in zip(buffers, func.params))
    root = func.body.block
    assert root.name_hint == "root" and [b.name for b in root.alloc_buffers] == ["Y"]
    y_block = root.body[0].body.body.body.block
    assert [iv.iter_type for iv in y_block.iter_vars] == [IterType.DATA_PAR,
                                                           IterType.DATA_PAR,
                                                           IterType.COMM_REDUCE]
    assert isinstance(y_block.body.value, Add) and isinstance(y_block.body.value.b, Mul)
    c_block = root.body[1].body.body.block
    assert isinstance(c_block.body.value, Max)


def test_module_gives_global_symbol_unless_private():
    @I.ir_module
    class Module:
        @T.prim_func
        def public(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(1)

        @T.prim_func(private=True)
        def hidden(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(1)

    assert Module["public"].attrs == {"global_symbol": "public"}
    assert Module["hidden"].attrs == {}
    assert sorted(gv.name_hint for gv in Module.get_global_vars()) == ["hidden", "public"]


def test_standalone_prim_func_keeps_its_attrs():
    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)

    assert isinstance(main, PrimFunc)
    assert main.attrs == {}
    assert isinstance(main.body, BufferStore)      # no block: no root block


def test_vector_add_with_old_buffer_spelling():
    @T.prim_func
    def vector_add(A: T.Buffer[128, "float32"], B: T.Buffer[128, "float32"],
                   C: T.Buffer[128, "float32"]):
        T.func_attr({"global_symbol": "vector_add", "tir.noalias": True})
        for i in range(128):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                C[vi] = A[vi] + B[vi]

    @T.prim_func
    def modern(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"),
               C: T.Buffer((128,), "float32")):
        T.func_attr({"global_symbol": "vector_add", "tir.noalias": True})
        for i in range(128):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                C[vi] = A[vi] + B[vi]

    assert_structural_equal(vector_add, modern)
    assert vector_add.buffer_map[vector_add.params[0]].shape[0].value == 128


def test_old_tuple_subscript_and_default_dtype():
    @T.prim_func
    def f(A: T.Buffer[(4, 8), "float16"], B: T.Buffer((4, 8))):
        B[0, 0] = T.float32(A[0, 0])

    a, b = (f.buffer_map[p] for p in f.params)
    assert a.dtype == "float16" and [int(s) for s in a.shape] == [4, 8]
    assert b.dtype == "float32"


def test_free_names_come_from_closure_and_globals():
    n, dtype = 64, "float16"

    @T.prim_func
    def f(A: T.Buffer((n * 2,), dtype)):
        for i in range(n):
            A[i] = A[i + n]

    buffer = f.buffer_map[f.params[0]]
    assert int(buffer.shape[0]) == 128 and buffer.dtype == "float16"
    assert int(f.body.extent) == 64


def test_equal_functions_parse_to_equal_ir():
    def make():
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("A"):
                    vi = T.axis.spatial(8, i)
                    A[vi] = A[vi] * T.float32(2)
        return f

    first, second = make(), make()
    assert first is not second
    assert structural_equal(first, second)


def test_T_namespace_outside_the_parser():
    assert T.int32(5) == IntImm("int32", 5) and isinstance(T.int32(5), IntImm)
    assert T.float32(0.5).value == 0.5 and T.float32(0.5).dtype == "float32"
    assert T.int64(4).dtype == "int64"
    assert T.bool(True) == IntImm("bool", 1)
    buffer = T.Buffer((128,), "float32")
    assert isinstance(buffer, tir.Buffer) and int(buffer.shape[0]) == 128
    x = Var("x", "float32")
    assert isinstance(T.max(x, T.float32(0)), Max)
    assert T.float32(IntImm("int32", 3)) == tir.FloatImm("float32", 3.0)
    assert T.Cast("float16", x).dtype == "float16"
    assert T.float32x4.dtype.lanes == 4
