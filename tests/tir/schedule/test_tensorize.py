import pytest

from mlcbench.script import tir as T
from mlcbench.tir import Schedule, ScheduleError, TensorIntrin
from helpers.schedule_testing import (check_after, check_numeric, check_refused,
                                      check_trace_roundtrip, make_add_one_2d, make_matmul)
from helpers.schedule_testing import course_matmul


matmul = make_matmul(16, 64, 32)


@T.prim_func
def matmul_tensorized(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 64), "float32"),
                      C: T.Buffer((16, 64), "float32")):
    for i, j_0 in T.grid(16, 4):
        for j_1_init in range(16):
            with T.block("C_init"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(64, j_0 * 16 + j_1_init)
                T.reads()
                T.writes(C[vi, vj])
                C[vi, vj] = T.float32(0)
        for k in range(32):
            with T.block("C_update_o"):
                vi_o, vj_o, vk_o = T.axis.remap("SSR", [i, j_0, k])
                T.reads(C[vi_o, vj_o * 16:vj_o * 16 + 16], A[vi_o, vk_o],
                        B[vk_o, vj_o * 16:vj_o * 16 + 16])
                T.writes(C[vi_o, vj_o * 16:vj_o * 16 + 16])
                A_1 = T.match_buffer(A[vi_o, vk_o], (1,))
                B_1 = T.match_buffer(B[vk_o, vj_o * 16:vj_o * 16 + 16], (16,))
                C_1 = T.match_buffer(C[vi_o, vj_o * 16:vj_o * 16 + 16], (16,))
                for j in T.vectorized(16):
                    C_1[j] = C_1[j] + A_1[0] * B_1[j]


@T.prim_func
def add4_desc(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4,), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(A[0:4])
        T.writes(B[0:4])
        for i in range(4):
            with T.block("add"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + T.float32(1)


@T.prim_func
def add4_impl(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4,), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(A[0:4])
        T.writes(B[0:4])
        for i in T.unroll(4):
            B[i] = A[i] + T.float32(1)


add_one = make_add_one_2d(8, 8)


def _tiled(split=16):
    sch = Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    j0, j1 = sch.split(j, factors=[None, split])
    sch.reorder(i, j0, k, j1)
    sch.decompose_reduction(block, k)
    return sch, j1


def test_tensorize_matmul_row_with_shipped_fma16():
    sch, j1 = _tiled()
    sch.tensorize(j1, "f32_fma_16")
    check_after(matmul, sch, matmul_tensorized)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


def test_tensorize_user_registered_intrinsic_on_blockized_block():
    TensorIntrin.register("test_add4", add4_desc, add4_impl, override=True)
    sch = Schedule(add_one)
    _, j = sch.get_loops("B")
    _, j1 = sch.split(j, factors=[None, 4])
    outer = sch.blockize(j1)
    sch.tensorize(outer, "test_add4")
    assert "T.unroll(4)" in sch.mod.script()
    check_numeric(sch.mod["main"], lambda a, b: a + 1)


def test_tensorize_refuses_different_extent():
    sch, j1 = _tiled(split=8)
    err = check_refused(sch, lambda s: s.tensorize(j1, "f32_fma_16"),
                        r"tensorize: block 'C_update_o' does not match the description of "
                        r"intrinsic 'f32_fma_16': loop j of the intrinsic has extent 16, the "
                        r"block's loop j_1 has 8")
    assert "# <-- here" in str(err)


def test_tensorize_refuses_different_computation():
    TensorIntrin.register("test_add4", add4_desc, add4_impl, override=True)
    sch = Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    _, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i, k, j1)
    sch.decompose_reduction(block, k)
    check_refused(sch, lambda s: s.tensorize(j1, "test_add4"),
                  r"does not match the description of intrinsic 'test_add4'")


def test_tensorize_refuses_unknown_intrinsic():
    sch, j1 = _tiled()
    check_refused(sch, lambda s: s.tensorize(j1, "no_such_intrin"),
                  r"no intrinsic 'no_such_intrin'; registered: \[.*'f32_fma_16'")


def test_register_checks_pairs_and_duplicates():
    TensorIntrin.register("test_add4", add4_desc, add4_impl, override=True)
    with pytest.raises(ScheduleError, match="'test_add4' is already registered"):
        TensorIntrin.register("test_add4", add4_desc, add4_impl)
    from mlcbench.tir.tensor_intrin.cpu import f32_fma_16_impl
    with pytest.raises(ScheduleError, match="desc and impl must take the same buffers"):
        TensorIntrin.register("test_bad", add4_desc, f32_fma_16_impl)
    assert TensorIntrin.get("test_add4").desc is add4_desc


def test_tensorize_after_packing_b_into_panels():
    sch, j1 = _tiled()
    outer = sch.blockize(j1)
    sch.cache_read(outer, 2, "global")
    sch.transform_layout(outer, ("read", 2), lambda k, j: (j // 16, k, j % 16))
    sch.tensorize(outer, "f32_fma_16")
    assert "T.match_buffer(B_global[vj_o, vk_o, 0:16], (16,))" in sch.mod.script()
    check_trace_roundtrip(matmul, sch)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


# -- course chapter 8: a 16x16 matmul "accelerator" reached through an extern function --

@T.prim_func
def tmm16_desc(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (16, 16), "float32", offset_factor=16, scope="global.A_reg")
    B = T.match_buffer(b, (16, 16), "float32", offset_factor=16, scope="global.B_reg")
    C = T.match_buffer(c, (16, 16), "float32", offset_factor=16, scope="global.accumulator")
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, j, k in T.grid(16, 16, 16):
            with T.block(""):
                vii, vjj, vkk = T.axis.remap("SSR", [i, j, k])
                C[vii, vjj] = C[vii, vjj] + A[vii, vkk] * B[vjj, vkk]


@T.prim_func
def tmm16_impl(a: T.handle, b: T.handle, c: T.handle) -> None:
    sa = T.var("int32")
    sb = T.var("int32")
    sc = T.var("int32")
    A = T.match_buffer(a, (16, 16), "float32", offset_factor=16, strides=[sa, 1],
                       scope="global.A_reg")
    B = T.match_buffer(b, (16, 16), "float32", offset_factor=16, strides=[sb, 1],
                       scope="global.B_reg")
    C = T.match_buffer(c, (16, 16), "float32", offset_factor=16, strides=[sc, 1],
                       scope="global.accumulator")
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        T.evaluate(T.call_extern("tmm16", C.access_ptr("w"), A.access_ptr("r"),
                                 B.access_ptr("r"), sa, sb, sc, dtype="int32"))


# What the course compiles from C with clang: C[i, j] += A[i, k] * B[j, k] over 16^3,
# rows `stride_*` elements apart. Written out so the test needs no C compiler.
TMM16_LL = """
define i32 @tmm16(ptr %c, ptr %a, ptr %b, i32 %sa, i32 %sb, i32 %sc) {
entry:
  br label %loop
loop:
  %n = phi i32 [ 0, %entry ], [ %n1, %loop ]
  %i = udiv i32 %n, 256
  %row = udiv i32 %n, 16
  %j = urem i32 %row, 16
  %k = urem i32 %n, 16
  %ia = mul i32 %i, %sa
  %ai = add i32 %ia, %k
  %jb = mul i32 %j, %sb
  %bi = add i32 %jb, %k
  %ic = mul i32 %i, %sc
  %ci = add i32 %ic, %j
  %ap = getelementptr float, ptr %a, i32 %ai
  %bp = getelementptr float, ptr %b, i32 %bi
  %cp = getelementptr float, ptr %c, i32 %ci
  %av = load float, ptr %ap
  %bv = load float, ptr %bp
  %cv = load float, ptr %cp
  %m = fmul float %av, %bv
  %s = fadd float %cv, %m
  store float %s, ptr %cp
  %n1 = add i32 %n, 1
  %done = icmp eq i32 %n1, 4096
  br i1 %done, label %exit, label %loop
exit:
  ret i32 0
}
"""


def _course_accelerator_schedule():
    """Course chapter 8, cells 10 to 17, on a 64x64 matmul instead of 1024x1024."""
    sch = Schedule(course_matmul)
    i, j, k = sch.get_loops("matmul")
    i, ii = sch.split(i, factors=[None, 16])
    j, ji = sch.split(j, factors=[None, 16])
    k, ki = sch.split(k, factors=[None, 16])
    sch.reorder(i, j, k, ii, ji, ki)
    block_mm = sch.blockize(ii)
    A_reg = sch.cache_read(block_mm, 0, storage_scope="global.A_reg")
    B_reg = sch.cache_read(block_mm, 1, storage_scope="global.B_reg")
    sch.compute_at(A_reg, k)
    sch.compute_at(B_reg, k)
    write_back_block = sch.cache_write(block_mm, 0, storage_scope="global.accumulator")
    sch.reverse_compute_at(write_back_block, j)
    sch.decompose_reduction(block_mm, k)
    TensorIntrin.register("tmm16", tmm16_desc, tmm16_impl, override=True)
    sch.tensorize(block_mm, "tmm16")
    sch.annotate(i, "pragma_import_llvm", TMM16_LL)
    return sch


def test_course_accelerator_tensorizes_to_an_extern_call_and_runs():
    sch = _course_accelerator_schedule()
    text = sch.mod.script()
    assert 'T.call_extern("int32", "tmm16", T.tvm_access_ptr(T.type_annotation("float32")' \
        in text
    assert 'scope="global.accumulator"' in text and "for i_1, j_1, k_1" not in text
    check_trace_roundtrip(course_matmul, sch)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b.T)
