"""The MLC course's TVMScript programs parse to the IR they describe."""
import mlcbench as tvm
from mlcbench.ir import assert_structural_equal
from mlcbench.script import ir as I
from mlcbench.script import tir as T
from mlcbench.tir import (BlockRealize, BufferRegion, BufferStore, Call, Div, For, ForKind,
                          IterType, Max, Range)

N, CI, H, W, CO, K = 1, 1, 8, 8, 2, 3
OUT_H, OUT_W = H - K + 1, W - K + 1


def _blocks(stmt, found=None):
    found = {} if found is None else found
    if isinstance(stmt, BlockRealize):
        found[stmt.block.name_hint] = stmt
        _blocks(stmt.block.body, found)
        if stmt.block.init is not None:
            _blocks(stmt.block.init, found)
    elif isinstance(stmt, For):
        _blocks(stmt.body, found)
    elif hasattr(stmt, "seq"):
        for s in stmt.seq:
            _blocks(s, found)
    return found


def _regions(regions):
    return [(r.buffer.name, tuple(getattr(rng.min, "name", None) or int(rng.min)
                                  for rng in r.region)) for r in regions]


@tvm.script.ir_module
class MyBmmRelu:
    @T.prim_func
    def bmm_relu(A: T.Buffer[(16, 128, 128), "float32"], W: T.Buffer[(16, 128, 128), "float32"],
                 Y: T.Buffer[(16, 128, 128), "float32"]):
        T.func_attr({"global_symbol": "bmm_relu", "tir.noalias": True})
        Y_ = T.alloc_buffer([16, 128, 128], dtype="float32")
        for n, i, j, k in T.grid(16, 128, 128, 128):
            with T.block("M"):
                vn = T.axis.spatial(16, n)
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                vk = T.axis.reduce(128, k)
                T.reads(A[vn, vi, vk], W[vn, vk, vj])
                T.writes(Y_[vn, vi, vj])
                with T.init():
                    Y_[vn, vi, vj] = T.float32(0)
                Y_[vn, vi, vj] = Y_[vn, vi, vj] + A[vn, vi, vk] * W[vn, vk, vj]
        for n, i, j in T.grid(16, 128, 128):
            with T.block("R"):
                vn = T.axis.spatial(16, n)
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                T.reads(Y_[vn, vi, vj])
                T.writes(Y[vn, vi, vj])
                Y[vn, vi, vj] = T.max(Y_[vn, vi, vj], T.float32(0))


def test_batched_matmul_relu():
    func = MyBmmRelu["bmm_relu"]
    blocks = _blocks(func.body)
    assert set(blocks) == {"root", "M", "R"}
    m = blocks["M"].block
    assert [iv.iter_type for iv in m.iter_vars] == [IterType.DATA_PAR] * 3 + [IterType.COMM_REDUCE]
    assert _regions(m.reads) == [("A", ("vn", "vi", "vk")), ("W", ("vn", "vk", "vj"))]
    assert _regions(m.writes) == [("Y_", ("vn", "vi", "vj"))]
    assert isinstance(blocks["R"].block.body.value, Max)
    assert [b.name for b in blocks["root"].block.alloc_buffers] == ["Y_"]


@I.ir_module
class MyAdd:
    @T.prim_func
    def add(A: T.Buffer((4, 4), "int64"), B: T.Buffer((4,), "int64"),
            C: T.Buffer((4, 4), "int64")):
        T.func_attr({"global_symbol": "add", "tir.noalias": True})
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.spatial(4, j)
                C[vi, vj] = A[vi, vj] + B[vj]


def test_int64_broadcast_add():
    block = _blocks(MyAdd["add"].body)["C"].block
    assert block.body.value.dtype == "int64"
    assert _regions(block.reads) == [("A", ("vi", "vj")), ("B", ("vj",))]
    assert _regions(block.writes) == [("C", ("vi", "vj"))]


@I.ir_module
class MyConv:
    @T.prim_func
    def conv(data: T.Buffer((N, CI, H, W), "int64"), weight: T.Buffer((CO, CI, K, K), "int64"),
             out: T.Buffer((N, CO, OUT_H, OUT_W), "int64")):
        T.func_attr({"global_symbol": "conv", "tir.noalias": True})
        for b, k, i, j, di, dj, q in T.grid(N, CO, OUT_H, OUT_W, K, K, CI):
            with T.block("C"):
                vb, vk, vi, vj, vdi, vdj, vq = T.axis.remap("SSSSRRR", [b, k, i, j, di, dj, q])
                with T.init():
                    out[vb, vk, vi, vj] = T.int64(0)
                out[vb, vk, vi, vj] = out[vb, vk, vi, vj] + \
                    data[vb, vq, vi + vdi, vj + vdj] * weight[vk, vq, vdi, vdj]


def test_int64_convolution_uses_module_constants():
    func = MyConv["conv"]
    out = func.buffer_map[func.params[2]]
    assert [int(s) for s in out.shape] == [1, 2, 6, 6] and out.dtype == "int64"
    block = _blocks(func.body)["C"].block
    assert [int(iv.dom.extent) for iv in block.iter_vars] == [1, 2, 6, 6, 3, 3, 1]
    assert block.init.value.dtype == "int64" and block.init.value.value == 0
    assert [r.buffer.name for r in block.reads] == ["data", "weight"]
    data_region = block.reads[0].region
    assert type(data_region[2].min).__name__ == "Add" and int(data_region[2].extent) == 1


@T.prim_func
def softmax(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
    T.func_attr({"global_symbol": "softmax", "tir.noalias": True})
    maxv = T.alloc_buffer((4,))
    expv = T.alloc_buffer((4, 16))
    sumv = T.alloc_buffer((4,))
    for i, k in T.grid(4, 16):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                maxv[vi] = T.min_value("float32")
            maxv[vi] = T.max(maxv[vi], A[vi, vk])
    for i, j in T.grid(4, 16):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            expv[vi, vj] = T.exp(A[vi, vj] - maxv[vi])
    for i, k in T.grid(4, 16):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                sumv[vi] = T.float32(0)
            sumv[vi] += expv[vi, vk]
    for i, j in T.grid(4, 16):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = expv[vi, vj] / sumv[vi]


def test_softmax():
    blocks = _blocks(softmax.body)
    assert list(blocks) == ["root", "max", "exp", "sum", "norm"]
    assert blocks["max"].block.init.value.value == float("-inf")
    exp = blocks["exp"].block.body.value
    assert isinstance(exp, Call) and exp.op == "tir.exp"
    assert _regions(blocks["exp"].block.reads) == [("A", ("vi", "vj")), ("maxv", ("vi",))]
    assert _regions(blocks["sum"].block.reads) == [("expv", ("vi", "vk"))]
    assert isinstance(blocks["norm"].block.body.value, Div)


@T.prim_func
def scheduled(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for i in T.parallel(64):
        for j_0 in T.serial(4):
            for j_1 in T.vectorized(16):
                with T.block("B"):
                    vi = T.axis.spatial(64, i)
                    vj = T.axis.spatial(64, j_0 * 16 + j_1)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
    for k in T.unroll(4):
        B[0, k] = T.float32(0)


def test_explicit_loop_kinds():
    nest, unrolled = scheduled.body.block.body.seq
    kinds = [nest.kind, nest.body.kind, nest.body.body.kind]
    assert kinds == [ForKind.PARALLEL, ForKind.SERIAL, ForKind.VECTORIZED]
    assert unrolled.kind == ForKind.UNROLLED and isinstance(unrolled.body, BufferStore)
    realize = nest.body.body.body
    j_0, j_1 = nest.body.loop_var, nest.body.body.loop_var
    assert_structural_equal(realize.iter_values[1], j_0 * 16 + j_1, map_free_vars=True)


def test_region_hand_built():
    realize = scheduled.body.block.body.seq[0].body.body.body
    vi, vj = (iv.var for iv in realize.block.iter_vars)
    A = scheduled.buffer_map[scheduled.params[0]]
    assert_structural_equal(realize.block.reads[0],
                            BufferRegion(A, (Range(vi, 1), Range(vj, 1))))
