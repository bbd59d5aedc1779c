"""Printer and parser are inverses: ``from_source(x.script())`` equals ``x``.

The course programs below are written exactly as TVM prints them, so reading one and
printing it again must give back the very same text; printing is then a fixed point.
"""
import pytest

import mlcbench.script as S
from mlcbench import tir
from mlcbench.ir import IRModule, assert_structural_equal
from mlcbench.tir import expr as E
from mlcbench.tir.stmt import Allocate, For, ForKind, seq

HEADER = "# from mlcbench.script import ir as I\n# from mlcbench.script import tir as T\n\n"

MM_RELU = '''
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
'''

VECTOR_ADD = '''
@I.ir_module
class Module:
    @T.prim_func
    def vector_add(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
        T.func_attr({"global_symbol": "vector_add", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        for i in range(128):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                T.reads(A[vi], B[vi])
                T.writes(C[vi])
                C[vi] = A[vi] + B[vi]
'''

BMM_RELU = '''
@I.ir_module
class Module:
    @T.prim_func
    def bmm_relu(A: T.Buffer((16, 128, 128), "float32"), B: T.Buffer((16, 128, 128), "float32"), C: T.Buffer((16, 128, 128), "float32")):
        T.func_attr({"global_symbol": "bmm_relu", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        Y = T.alloc_buffer((16, 128, 128))
        for n, i, j, k in T.grid(16, 128, 128, 128):
            with T.block("Y"):
                vn, vi, vj, vk = T.axis.remap("SSSR", [n, i, j, k])
                T.reads(A[vn, vi, vk], B[vn, vk, vj])
                T.writes(Y[vn, vi, vj])
                with T.init():
                    Y[vn, vi, vj] = T.float32(0)
                Y[vn, vi, vj] = Y[vn, vi, vj] + A[vn, vi, vk] * B[vn, vk, vj]
        for n, i, j in T.grid(16, 128, 128):
            with T.block("C"):
                vn, vi, vj = T.axis.remap("SSS", [n, i, j])
                T.reads(Y[vn, vi, vj])
                T.writes(C[vn, vi, vj])
                C[vn, vi, vj] = T.max(Y[vn, vi, vj], T.float32(0))
'''

INT64_BROADCAST_ADD = '''
@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer((T.int64(4), T.int64(4)), "int64"), B: T.Buffer((T.int64(4),), "int64"), C: T.Buffer((T.int64(4), T.int64(4)), "int64")):
        T.func_attr({"global_symbol": "add", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        for i, j in T.grid(T.int64(4), T.int64(4)):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj], B[vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] + B[vj]
'''

INT64_CONV = '''
@I.ir_module
class Module:
    @T.prim_func
    def conv(X: T.Buffer((T.int64(1), T.int64(1), T.int64(8), T.int64(8)), "int64"), W: T.Buffer((T.int64(2), T.int64(1), T.int64(3), T.int64(3)), "int64"), Y: T.Buffer((T.int64(1), T.int64(2), T.int64(6), T.int64(6)), "int64")):
        T.func_attr({"global_symbol": "conv", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        for b, k, i, j, di, dj, q in T.grid(T.int64(1), T.int64(2), T.int64(6), T.int64(6), T.int64(3), T.int64(3), T.int64(1)):
            with T.block("Y"):
                vb, vk, vi, vj, vdi, vdj, vq = T.axis.remap("SSSSRRR", [b, k, i, j, di, dj, q])
                T.reads(X[vb, vq, vi + vdi, vj + vdj], W[vk, vq, vdi, vdj])
                T.writes(Y[vb, vk, vi, vj])
                with T.init():
                    Y[vb, vk, vi, vj] = T.int64(0)
                Y[vb, vk, vi, vj] = Y[vb, vk, vi, vj] + X[vb, vq, vi + vdi, vj + vdj] * W[vk, vq, vdi, vdj]
'''

SOFTMAX = '''
@I.ir_module
class Module:
    @T.prim_func
    def softmax(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "softmax", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        maxelem = T.alloc_buffer((128,))
        expsum = T.alloc_buffer((128,))
        for i, k in T.grid(128, 128):
            with T.block("maxelem"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(maxelem[vi])
                with T.init():
                    maxelem[vi] = T.float32(-3.4028234663852886e+38)
                maxelem[vi] = T.max(maxelem[vi], A[vi, vk])
        for i, k in T.grid(128, 128):
            with T.block("expsum"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk], maxelem[vi])
                T.writes(expsum[vi])
                with T.init():
                    expsum[vi] = T.float32(0)
                expsum[vi] = expsum[vi] + T.exp(A[vi, vk] - maxelem[vi])
        for i, j in T.grid(128, 128):
            with T.block("norm"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj], maxelem[vi], expsum[vi])
                T.writes(B[vi, vj])
                B[vi, vj] = T.exp(A[vi, vj] - maxelem[vi]) / expsum[vi]
'''

SCHEDULED_LOOPS = '''
@I.ir_module
class Module:
    @T.prim_func
    def mm_scheduled(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_scheduled", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        for i_0 in T.parallel(32):
            for j_0, k_0 in T.grid(16, 32):
                for k_1 in T.unroll(4):
                    for i_1 in range(4):
                        for j_1 in T.vectorized(8):
                            with T.block("C"):
                                vi = T.axis.spatial(128, i_0 * 4 + i_1)
                                vj = T.axis.spatial(128, j_0 * 8 + j_1)
                                vk = T.axis.reduce(128, k_0 * 4 + k_1)
                                T.reads(A[vi, vk], B[vk, vj])
                                T.writes(C[vi, vj])
                                with T.init():
                                    C[vi, vj] = T.float32(0)
                                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''

COURSE_PROGRAMS = {"mm_relu": MM_RELU, "vector_add": VECTOR_ADD, "bmm_relu": BMM_RELU,
                   "int64_broadcast_add": INT64_BROADCAST_ADD, "int64_conv": INT64_CONV,
                   "softmax": SOFTMAX, "scheduled_loops": SCHEDULED_LOOPS}


def check_roundtrip(ir):
    """Parse the printed text: structurally equal, and printing again changes nothing."""
    text = ir.script()
    parsed = S.from_source(text)
    assert_structural_equal(parsed, ir)
    assert parsed.script() == text


@pytest.mark.parametrize("name", sorted(COURSE_PROGRAMS))
def test_course_program_prints_back_as_written(name):
    source = HEADER + COURSE_PROGRAMS[name].strip("\n")
    mod = S.from_source(source)
    assert mod.script() == source
    check_roundtrip(mod)


@pytest.mark.parametrize("name", sorted(COURSE_PROGRAMS))
def test_course_function_roundtrips_standalone(name):
    mod = S.from_source(HEADER + COURSE_PROGRAMS[name])
    (func,) = mod.functions.values()
    check_roundtrip(func)


def _flat_vector_add():
    """What lowering makes of vector add: a flat, vectorised loop over a scratch buffer."""
    A, B, C = (tir.decl_buffer((128,), "float32", name) for name in "ABC")
    T_add = tir.decl_buffer((128,), "float32", "T_add")
    i = E.Var("i_0")
    lanes = E.Ramp(i * 4, tir.const(1), 4)
    add = tir.BufferStore(T_add, E.BufferLoad(A, (lanes,)) + E.BufferLoad(B, (lanes,))
                          * E.Broadcast(tir.const(2.0), 4), (lanes,))
    j = E.Var("j")
    copy = tir.BufferStore(C, tir.max(T_add[j], tir.const(0.0)), (j,))
    body = Allocate(T_add, seq(For(i, 0, 32, ForKind.PARALLEL, add),
                               For(j, 0, 128, ForKind.SERIAL, copy)))
    params = [E.Var(name, "handle") for name in "ABC"]
    return tir.PrimFunc(params, body, dict(zip(params, (A, B, C))),
                        {"global_symbol": "main", "tir.noalias": True})


def test_lowered_flat_function_roundtrips():
    check_roundtrip(IRModule({"main": _flat_vector_add()}))


def test_program_built_with_constructors_roundtrips():
    A = tir.decl_buffer((64,), "float32", "A")
    i, n, x = E.Var("i"), E.Var("n"), E.Var("x", "float32")
    value = (E.Let(x, A[i], x * x) + E.Select(i < 2, tir.const(1.0), tir.const(2.0))
             + tir.exp(A[i]) + E.Cast("float32", tir.truncdiv(i, 3) + tir.truncmod(i, 3)))
    body = For(i, 0, 64, ForKind.SERIAL, tir.IfThenElse(
        (i < n) & ~(i == 3), tir.BufferStore(A, value, (i,)),
        tir.Evaluate(tir.call_extern("int32", "note", i))))
    param = E.Var("A", "handle")
    check_roundtrip(tir.PrimFunc([param, n], body, {param: A}, {}))


SYMBOLIC_ADD = '''
@I.ir_module
class Module:
    @T.prim_func
    def add(var_A: T.handle, var_B: T.handle, var_C: T.handle):
        T.func_attr({"global_symbol": "add", "tir.noalias": T.bool(True)})
        n, m = T.int64(), T.int64()
        A = T.match_buffer(var_A, (n, m))
        B = T.match_buffer(var_B, (m,))
        C = T.match_buffer(var_C, (n, m))
        # with T.block("root"):
        for i, j in T.grid(n, m):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj], B[vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] + B[vj]
'''


def test_symbolic_shape_program_prints_back_as_written():
    source = HEADER + SYMBOLIC_ADD.strip("\n")
    mod = S.from_source(source)
    assert mod.script() == source
    check_roundtrip(mod)


def test_module_function_without_symbol_prints_private():
    mod = IRModule({"f": _flat_vector_add().replace(attrs={}).replace(
        body=tir.Evaluate(tir.const(0)))})
    assert "    @T.prim_func(private=True)\n    def f(" in mod.script()
    check_roundtrip(mod)


STRIDED_GATHER = '''
@T.prim_func
def gather(A: T.Buffer((64,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.vectorized(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi * 8]
'''


def test_lowered_strided_vector_load_parses_back():
    """After VectorizeLoop a strided load prints as ``A[0:64:8]`` and parses back."""
    from mlcbench.tir.transform import lower
    lowered = lower(S.from_source(STRIDED_GATHER))
    assert "A[0:64:8]" in lowered.script()
    assert_structural_equal(S.from_source(lowered.script()), lowered)


def test_strided_slice_needs_a_constant_step_dividing_the_length():
    from mlcbench.ir.errors import ParseError
    source = STRIDED_GATHER.replace("for i in T.vectorized(8):", "for i in range(1):")
    source = source.replace("B[vi] = A[vi * 8]", "B[0:2] = A[0:7:4]")
    with pytest.raises(ParseError, match="step"):
        S.from_source(source)
