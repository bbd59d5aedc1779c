"""LoopTree: loops named as printed, qualified names for sibling nests, blocks, buffers."""
import pytest

import mlcbench as tvm
from mlcbench.script import tir as T
from mlcbench_widgets import LoopTree
from mlcbench_widgets.loop_tree import BlockItem, LoopItem, printed_loop_names


@T.prim_func
def clashing_names(A: T.Buffer((8, 8, 8), "float32")):
    # splitting ``j`` makes loop vars named j_0 and j_1 below an existing ``j_0``: the
    # printer renames them, and the tree must follow the printer, not the var names
    for i, j_0, j in T.grid(8, 8, 8):
        with T.block("A"):
            vi, vj, vk = T.axis.remap("SSS", [i, j_0, j])
            A[vi, vj, vk] = T.float32(1)


@T.prim_func
def vectorized_after_split(A: T.Buffer((8, 8, 8), "float32")):
    for i, j_0, j_1 in T.grid(8, 8, 4):
        for j_2 in T.vectorized(2):
            with T.block("A"):
                vi, vj = T.axis.remap("SS", [i, j_0])
                vk = T.axis.spatial(8, j_1 * 2 + j_2)
                A[vi, vj, vk] = T.float32(1)


def test_rows_of_a_matmul(matmul):
    tree = LoopTree.from_func(matmul["main"], "main")
    assert [(r.name, r.extent, r.kind, r.depth) for r in tree.loops] == [
        ("i", 128, "serial", 0), ("j", 128, "serial", 1), ("k", 128, "serial", 2)]
    (block,) = tree.blocks
    assert (block.name, block.iter_kinds, block.depth, block.has_init) == ("C", "SSR", 3, True)
    assert block.reads == ("A", "B") and block.writes == ("C",)
    assert [(b.name, b.role) for b in tree.buffers] == [("A", "param"), ("B", "param"),
                                                        ("C", "param")]
    assert tree.loops_above("C") == tree.loops
    assert tree.blocks_below(tree.loop("i")) == ["C"]


def test_render_shows_nesting_kinds_and_buffers(mm_relu):
    text = LoopTree.from_func(mm_relu["mm_relu"], "mm_relu").render()
    lines = text.splitlines()
    assert lines[0] == "mm_relu:"
    assert "  for i in 128  [i@Y]" in lines
    assert "        block Y [SSR]  reads A, B  writes Y" in lines
    assert "  Y: (128, 128) float32 [alloc]" in lines


def test_sibling_nests_need_qualified_names(mm_relu):
    tree = LoopTree.from_func(mm_relu["mm_relu"], "mm_relu")
    assert [r.ref for r in tree.loops] == ["i@Y", "j@Y", "k", "i@C", "j@C"]
    with pytest.raises(tvm.tir.ScheduleError, match=r"ambiguous.*'i@Y', 'i@C'"):
        tree.loop("i")
    assert tree.blocks_below(tree.loop("i@C")) == ["C"]
    assert tree.loop("i#2") is tree.loop("i@C")
    assert tree.loop("k") is tree.loops[2]


def test_unknown_names_list_what_exists(mm_relu):
    tree = LoopTree.from_func(mm_relu["mm_relu"], "mm_relu")
    with pytest.raises(tvm.tir.ScheduleError, match=r"no loop 'x'.*'k'"):
        tree.loop("x")
    with pytest.raises(tvm.tir.ScheduleError, match=r"no block named 'Z'.*\['C', 'Y'\]"):
        tree.block("Z")
    with pytest.raises(tvm.tir.ScheduleError, match="no block named 'Z'"):
        tree.loop("i@Z")


def test_names_follow_the_printer_when_it_renames():
    sch = tvm.tir.Schedule(clashing_names)
    sch.split(sch.get_loops("A")[2], [None, 2])
    func = sch.mod["main"]
    tree = LoopTree.from_func(func)
    assert [r.name for r in tree.loops] == ["i", "j_0", "j_1", "j_2"]
    assert [r.var.name for r in tree.loops] == ["i", "j_0", "j_0", "j_1"]
    # naming the printed j_2 reaches the innermost loop, whatever its var is called
    sch.vectorize(next(rv for rv in sch.get_loops("A") if sch.get(rv).loop_var is
                       tree.loop("j_2").var))
    tvm.ir.assert_structural_equal(sch.mod["main"], vectorized_after_split)


def test_loop_kinds_and_symbolic_extents():
    @T.prim_func
    def f(a: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n, 16), "float32")
        for i in T.parallel(n):
            for j in T.vectorized(16):
                with T.block("A"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    A[vi, vj] = T.float32(0)

    tree = LoopTree.from_func(f)
    assert [(r.kind, r.extent) for r in tree.loops] == [("parallel", "n"), ("vectorized", 16)]
    assert tree.labels() == ["for i in n (parallel)", "  for j in 16 (vectorized)",
                             "    block A [SS]  reads -  writes A"]


def test_printed_loop_names_reads_grid_and_single_headers():
    script = ("for i, j_0 in T.grid(4, 8):\n    for k in range(4):\n"
              "        x = 1\nfor ax0 in T.parallel(4):\n    pass")
    assert printed_loop_names(script) == ["i", "j_0", "k", "ax0"]


def test_rows_point_at_their_parents(mm_relu):
    tree = LoopTree.from_func(mm_relu["mm_relu"], "mm_relu")
    for k, row in enumerate(tree.rows):
        if row.parent is None:
            assert row.depth == 0
        else:
            assert tree.rows[row.parent].depth == row.depth - 1
            assert k in tree.children(row.parent)
    assert isinstance(tree.rows[3], BlockItem) and isinstance(tree.rows[4], LoopItem)
