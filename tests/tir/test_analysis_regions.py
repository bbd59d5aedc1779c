"""Access regions of blocks, built with node constructors."""
from mlcbench import tir
from mlcbench.tir import (Block, BlockRealize, BufferStore, For, IterType, IterVar, Range,
                          decl_buffer)
from mlcbench.tir.analysis import (get_block_access_region, get_block_read_write_region,
                                   relax_block_regions, relax_region)

A = decl_buffer((128, 128), name="A")
B = decl_buffer((128, 128), name="B")
Y = decl_buffer((128, 128), name="Y")
vi, vj, vk = tir.Var("vi"), tir.Var("vj"), tir.Var("vk")


def _iter(var, extent, kind=IterType.DATA_PAR):
    return IterVar(Range(0, extent), var, kind)


def _text(regions):
    return [str(r) for r in regions]


def _matmul_block():
    body = BufferStore(Y, Y[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj))
    init = BufferStore(Y, tir.const(0.0), (vi, vj))
    iters = (_iter(vi, 128), _iter(vj, 128), _iter(vk, 128, IterType.COMM_REDUCE))
    return Block(iters, (), (), "Y", body, init)


def test_reduction_block_does_not_read_its_output():
    reads, writes = get_block_read_write_region(_matmul_block())
    assert _text(reads) == ["A[vi, vk]", "B[vk, vj]"]
    assert _text(writes) == ["Y[vi, vj]"]


def test_without_init_the_output_is_also_read():
    block = _matmul_block().replace(init=None)
    reads, _ = get_block_read_write_region(block)
    assert _text(reads) == ["Y[vi, vj]", "A[vi, vk]", "B[vk, vj]"]


def test_inner_loops_are_relaxed_and_accesses_merged():
    k = tir.Var("k")
    C = decl_buffer((32,), name="C")
    D = decl_buffer((128,), name="D")
    store = BufferStore(C, C[vi] + D[vi * 4 + k] + D[vi * 4 + k + 1], (vi,))
    block = Block((_iter(vi, 32),), (), (), "C", For(k, 0, 3, "serial", store))
    reads, writes = get_block_read_write_region(block)
    assert _text(reads) == ["C[vi]", "D[vi * 4:vi * 4 + 4]"]
    assert _text(writes) == ["C[vi]"]


def test_allocated_buffers_are_excluded():
    local = decl_buffer((4,), name="local")
    out = decl_buffer((4,), name="out")
    i = tir.Var("i")
    body = tir.seq(For(i, 0, 4, "serial", BufferStore(local, A[vi, i], (i,))),
                   For(i, 0, 4, "serial", BufferStore(out, local[i], (i,))))
    block = Block((_iter(vi, 128),), (), (), "b", body, alloc_buffers=(local,))
    reads, writes = get_block_read_write_region(block)
    assert _text(reads) == ["A[vi, 0:4]"]
    assert _text(writes) == ["out[0:4]"]


def test_nested_block_uses_its_declared_regions():
    inner = _matmul_block()
    reads, writes = get_block_read_write_region(inner)
    inner = inner.replace(reads=reads, writes=writes)
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    realize = BlockRealize((i, j, k), tir.const(True), inner)
    loops = For(j, 0, 128, "serial", For(k, 0, 128, "serial", realize))
    outer = Block((_iter(i, 128),), (), (), "outer", loops)
    reads, writes = get_block_read_write_region(outer)
    assert _text(reads) == ["A[i, 0:128]", "B[0:128, 0:128]"]
    assert _text(writes) == ["Y[i, 0:128]"]


def test_opaque_access_through_the_data_pointer():
    call = tir.call_extern("int32", "fill", A.data)
    block = Block((), (), (), "opaque", tir.Evaluate(call))
    reads, writes, opaque = get_block_access_region(block, {A.data: A})
    assert reads == () and writes == ()
    assert _text(opaque) == ["A[0:128, 0:128]"]
    reads, writes = get_block_read_write_region(block, {A.data: A})
    assert _text(reads) == _text(writes) == ["A[0:128, 0:128]"]


def test_relax_region_from_outer_loops():
    i0, i1 = tir.Var("i0"), tir.Var("i1")
    region = tir.BufferRegion(A, (Range(vi, 1), Range(0, 128)))
    relaxed = relax_region(region, {i1: Range(0, 32)}, {vi: i0 * 32 + i1})
    assert str(relaxed) == "A[i0 * 32:i0 * 32 + 32, 0:128]"
    block = _matmul_block()
    reads, writes = get_block_read_write_region(block)
    block = block.replace(reads=reads, writes=writes)
    realize = BlockRealize((i0 * 32 + i1, vj, vk), tir.const(True), block)
    r, w = relax_block_regions(realize, {i1: Range(0, 32), vk: Range(0, 128)})
    assert _text(r) == ["A[i0 * 32:i0 * 32 + 32, 0:128]", "B[0:128, vj]"]
    assert _text(w) == ["Y[i0 * 32:i0 * 32 + 32, vj]"]
