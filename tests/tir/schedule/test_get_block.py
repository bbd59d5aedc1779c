import pytest

from mlcbench.script import ir as I, tir as T
from mlcbench.tir import Schedule, ScheduleError
from helpers.schedule_testing import check_refused


@I.ir_module
class Module:
    @T.prim_func
    def mm_relu(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
                C: T.Buffer((8, 8), "float32")):
        Y = T.alloc_buffer((8, 8))
        for i, j, k in T.grid(8, 8, 8):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(8, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))

    @T.prim_func
    def other(A: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                A[vi] = T.float32(1)


def test_get_block_and_loops_by_handle_and_name():
    sch = Schedule(Module)
    block_y = sch.get_block("Y", func_name="mm_relu")
    loops = sch.get_loops(block_y)
    assert [sch.get(lp).loop_var.name for lp in loops] == ["i", "j", "k"]
    assert sch.get(block_y).name_hint == "Y"
    sch.work_on("mm_relu")
    assert len(sch.get_loops("C")) == 2


def test_children_producers_consumers():
    sch = Schedule(Module)
    sch.work_on("mm_relu")
    root = sch.get_block("root")
    names = [sch.get(b).name_hint for b in sch.get_child_blocks(root)]
    assert names == ["Y", "C"]
    (i, _, _) = sch.get_loops("Y")
    assert [sch.get(b).name_hint for b in sch.get_child_blocks(i)] == ["Y"]
    block_c = sch.get_block("C")
    assert [sch.get(b).name_hint for b in sch.get_producers(block_c)] == ["Y"]
    assert [sch.get(b).name_hint for b in sch.get_consumers(sch.get_block("Y"))] == ["C"]
    assert sch.get_consumers(block_c) == []


def test_get_block_refusals_name_what_exists():
    sch = Schedule(Module)
    check_refused(sch, lambda s: s.get_block("Z", func_name="mm_relu"),
                  r"no block named 'Z'; the function has blocks \['Y', 'C'\]")
    check_refused(sch, lambda s: s.get_block("Y"), "pass func_name=")
    with pytest.raises(ScheduleError, match="no function 'nope'"):
        sch.get_block("Y", func_name="nope")
