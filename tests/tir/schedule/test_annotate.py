from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import check_after, check_numeric, check_refused, make_add_one


add_one = make_add_one(16)


@T.prim_func
def add_one_annotated(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in T.serial(16, annotations={"pragma_auto_unroll_max_step": 16}):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.reads(A[vi])
            T.writes(B[vi])
            T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
            B[vi] = A[vi] + T.float32(1)


def test_annotate_loop_and_block_then_unannotate():
    sch = Schedule(add_one)
    block = sch.get_block("B")
    (i,) = sch.get_loops(block)
    sch.annotate(i, "pragma_auto_unroll_max_step", 16)
    sch.annotate(block, "meta_schedule.tiling_structure", "SSRSRS")
    check_after(add_one, sch, add_one_annotated)
    check_numeric(sch.mod["main"], lambda a, b: a + 1)
    sch.unannotate(i, "pragma_auto_unroll_max_step")
    sch.unannotate(block, "meta_schedule.tiling_structure")
    check_after(add_one, sch, add_one)


def test_unannotate_refuses_missing_key():
    sch = Schedule(add_one)
    (i,) = sch.get_loops("B")
    check_refused(sch, lambda s: s.unannotate(i, "nope"), "has no annotation 'nope'")
