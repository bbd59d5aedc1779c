import pytest

from mlcbench.script import tir as T
from mlcbench.tir import Schedule, ScheduleError, TensorIntrin
from schedule_testing import check_after, check_numeric, check_refused, check_trace_roundtrip


@T.prim_func
def matmul(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 64), "float32"),
           C: T.Buffer((16, 64), "float32")):
    for i, j, k in T.grid(16, 64, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


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


@T.prim_func
def add_one(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)


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
