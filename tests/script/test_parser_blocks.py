"""Blocks: axes, T.reads/T.writes (given or detected), T.where, T.init, the root block."""
import pytest

from mlcbench.ir import ParseError, assert_structural_equal
from mlcbench.script import tir as T
from mlcbench.tir import (Block, BlockRealize, BufferRegion, BufferStore, For, ForKind,
                          IntImm, IterType, IterVar, PrimFunc, Range, Var, decl_buffer)


def _blocks(func):
    found = []

    def walk(stmt):
        if isinstance(stmt, BlockRealize):
            found.append(stmt)
            walk(stmt.block.body)
        elif isinstance(stmt, For):
            walk(stmt.body)
        elif hasattr(stmt, "seq"):
            for s in stmt.seq:
                walk(s)
    walk(func.body)
    return {r.block.name_hint: r for r in found}


def _region_text(regions):
    return [f"{r.buffer.name}[" + ", ".join(
        f"{rng.min.script() if not isinstance(rng.min, IntImm) else rng.min.value}"
        f":+{rng.extent.value if isinstance(rng.extent, IntImm) else rng.extent.script()}"
        for rng in r.region) + "]" for r in regions]


def test_axis_spatial_matches_hand_built_block():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("A"):
                vi = T.axis.spatial(16, i)
                T.reads()
                T.writes(A[vi])
                A[vi] = T.float32(1)

    a, A = Var("a", "handle"), decl_buffer((16,), name="A")
    i, vi = Var("i"), Var("vi")
    block = Block((IterVar(Range(0, 16), vi, IterType.DATA_PAR),), (),
                  (BufferRegion(A, (Range(vi, 1),)),), "A", BufferStore(A, 1.0, (vi,)))
    loop = For(i, 0, 16, ForKind.SERIAL, BlockRealize((i,), IntImm("bool", 1), block))
    root = BlockRealize((), IntImm("bool", 1), Block((), (), (), "root", loop))
    assert_structural_equal(f, PrimFunc((a,), root, {a: A}))


def test_axis_kinds_and_domains():
    @T.prim_func
    def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
        for i, j in T.grid(4, 16):
            with T.block("B"):
                vi = T.axis.S(16, i * 4 + j // 4)
                vk = T.axis.R((2, 18), j + 2)
                vs = T.axis.scan(16, j)
                vo = T.axis.opaque(16, j)
                B[vi] = A[vi, vk - 2] + A[vs, vo]

    block = _blocks(f)["B"]
    kinds = [iv.iter_type for iv in block.block.iter_vars]
    assert kinds == [IterType.DATA_PAR, IterType.COMM_REDUCE, IterType.ORDERED, IterType.OPAQUE]
    dom = block.block.iter_vars[1].dom
    assert (int(dom.min), int(dom.extent)) == (2, 16)
    binding = block.iter_values[1]
    assert type(binding).__name__ == "Add" and binding.b.value == 2


def test_remap_domains_follow_loops_and_int64():
    @T.prim_func
    def f(A: T.Buffer((T.int64(4), T.int64(8)), "float32")):
        for i, j in T.grid(T.int64(4), T.int64(8)):
            with T.block("A"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = T.float32(0)

    block = _blocks(f)["A"].block
    assert [iv.var.dtype for iv in block.iter_vars] == ["int64", "int64"]
    assert [int(iv.dom.extent) for iv in block.iter_vars] == [4, 8]
    assert block.iter_vars[0].dom.extent.dtype == "int64"


def test_axis_with_int64_domain_gets_int64_var():
    @T.prim_func
    def f(A: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("A"):
                vi = T.axis.spatial(T.int64(4), i)
                A[vi] = T.float32(0)

    assert _blocks(f)["A"].block.iter_vars[0].var.dtype == "int64"


def test_explicit_regions_slices_whole_buffer_and_list_form():
    @T.prim_func
    def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                T.reads([A[vi * 4:vi * 4 + 4, 0:16], B])
                T.writes(B[vi * 4:vi * 4 + 4])
                for k in range(4):
                    B[vi * 4 + k] = A[vi * 4 + k, 0]

    block = _blocks(f)["B"].block
    assert _region_text(block.reads) == ["A[vi * 4:+4, 0:+16]", "B[0:+16]"]
    assert _region_text(block.writes) == ["B[vi * 4:+4]"]


def test_detected_regions_for_reduction_exclude_the_written_buffer():
    @T.prim_func
    def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
        for i, k in T.grid(8, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    block = _blocks(f)["B"].block
    assert _region_text(block.reads) == ["A[vi:+1, vk:+1]"]
    assert _region_text(block.writes) == ["B[vi:+1]"]


def test_detected_reads_without_init_keep_the_written_buffer():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                A[vi] = A[vi] * T.float32(2)

    block = _blocks(f)["A"].block
    assert _region_text(block.reads) == ["A[vi:+1]"] and _region_text(block.writes) == ["A[vi:+1]"]


def test_only_missing_side_is_detected():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                T.reads(A[0:8])
                B[vi] = A[vi]

    block = _blocks(f)["B"].block
    assert _region_text(block.reads) == ["A[0:+8]"] and _region_text(block.writes) == ["B[vi:+1]"]


def test_where_block_attr_and_unnamed_block():
    @T.prim_func
    def f(A: T.Buffer((10,), "float32")):
        for i, j in T.grid(3, 4):
            with T.block():
                v = T.axis.spatial(10, i * 4 + j)
                T.where(i * 4 + j < 10)
                T.block_attr({"meta_schedule.unroll": T.int32(16), "flag": T.bool(True)})
                A[v] = T.float32(0)

    realize = _blocks(f)[""]
    assert type(realize.predicate).__name__ == "LT"
    assert realize.block.annotations == {"meta_schedule.unroll": 16, "flag": True}


def test_alloc_buffer_in_block_and_match_buffer_region():
    @T.prim_func
    def f(A: T.Buffer((16, 16), "float32")):
        for i in range(4):
            with T.block("tile"):
                vi = T.axis.spatial(4, i)
                T.reads(A[vi * 4:vi * 4 + 4, 0:16])
                T.writes(A[vi * 4:vi * 4 + 4, 0:16])
                tmp = T.alloc_buffer((4, 16), "float32", scope="local")
                sub = T.match_buffer(A[vi * 4:vi * 4 + 4, 0:16], (4, 16))
                for x, y in T.grid(4, 16):
                    tmp[x, y] = sub[x, y]

    block = _blocks(f)["tile"].block
    assert [b.name for b in block.alloc_buffers] == ["tmp"]
    assert block.alloc_buffers[0].scope == "local"
    (match,) = block.match_buffers
    assert match.buffer.name == "sub" and match.source.buffer.name == "A"
    assert [int(s) for s in match.buffer.shape] == [4, 16]
    assert f.body.block.alloc_buffers == ()


def test_explicit_root_block_is_not_wrapped_again():
    @T.prim_func
    def explicit(A: T.Buffer((4,), "float32")):
        with T.block("root"):
            B = T.alloc_buffer((4,))
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi]

    @T.prim_func
    def implicit(A: T.Buffer((4,), "float32")):
        B = T.alloc_buffer((4,))
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi]

    assert_structural_equal(explicit, implicit)
    assert explicit.body.block.reads == () and explicit.body.block.writes == ()


def test_top_level_alloc_without_blocks_still_gets_root():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        B = T.alloc_buffer((4,))
        for i in range(4):
            B[i] = A[i]

    assert isinstance(f.body, BlockRealize) and f.body.block.name_hint == "root"
    assert [b.name for b in f.body.block.alloc_buffers] == ["B"]


def test_nested_blocks_inner_regions_use_bindings():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        for io in range(4):
            with T.block("outer"):
                vo = T.axis.spatial(4, io)
                for ii in range(4):
                    with T.block("inner"):
                        vi = T.axis.spatial(16, vo * 4 + ii)
                        A[vi] = T.float32(0)

    outer = _blocks(f)["outer"].block
    inner = _blocks(f)["inner"].block
    assert _region_text(inner.writes) == ["A[vi:+1]"]
    assert [r.buffer.name for r in outer.writes] == ["A"] and outer.reads == ()


def test_block_statements_outside_block_are_errors():
    with pytest.raises(ParseError, match=r"T.reads is only allowed inside `with T.block"):
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            T.reads(A[0:4])
            A[0] = T.float32(0)

    with pytest.raises(ParseError, match="two `with T.init"):
        @T.prim_func
        def g(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("A"):
                    vi = T.axis.reduce(4, i)
                    with T.init():
                        A[0] = T.float32(0)
                    with T.init():
                        A[0] = T.float32(0)
                    A[0] = A[0] + T.float32(1)


def test_remap_of_one_loop_gives_one_variable():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("A"):
                vi = T.axis.remap("S", [i])
                A[vi] = T.float32(0)

    (iter_var,) = _blocks(f)["A"].block.iter_vars
    assert iter_var.var.name == "vi" and iter_var.iter_type == IterType.DATA_PAR
