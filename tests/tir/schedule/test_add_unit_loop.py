from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import check_after, check_numeric, make_add_one


add_one = make_add_one(16)


@T.prim_func
def add_one_unit_loops(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for u in range(1):
        for i in range(16):
            for u_1 in range(1):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    T.reads(A[vi])
                    T.writes(B[vi])
                    B[vi] = A[vi] + T.float32(1)


def test_add_unit_loop_above_block_and_loop():
    sch = Schedule(add_one)
    block = sch.get_block("B")
    (i,) = sch.get_loops(block)
    unit = sch.add_unit_loop(block)
    sch.add_unit_loop(i)
    assert sch.get(unit).extent.value == 1
    assert len(sch.get_loops(block)) == 3
    check_after(add_one, sch, add_one_unit_loops)
    check_numeric(sch.mod["main"], lambda a, b: a + 1)
