from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import check_after, check_numeric, check_refused, make_scale_add


two_steps = make_scale_add(32, 16)


@T.prim_func
def two_steps_shared(A: T.Buffer((32, 16), "float32"), C: T.Buffer((32, 16), "float32")):
    B = T.alloc_buffer((32, 16), scope="shared")
    for i, j in T.grid(32, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(32, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_set_scope_moves_intermediate_buffer():
    sch = Schedule(two_steps)
    sch.set_scope(sch.get_block("B"), 0, "shared")
    check_after(two_steps, sch, two_steps_shared)
    assert 'sch.set_scope(block=b0, buffer_index=0, storage_scope="shared")' in str(sch.trace)


def test_set_scope_named_scope_builds():
    sch = Schedule(two_steps)
    sch.set_scope(sch.get_block("B"), 0, "global.B_reg")
    assert 'scope="global.B_reg"' in sch.mod.script()
    check_numeric(sch.mod["main"], lambda a, c: a * 2 + 1)


def test_set_scope_refuses_parameter_buffer():
    sch = Schedule(two_steps)
    block = sch.get_block("C")
    err = check_refused(sch, lambda s: s.set_scope(block, 0, "local"),
                        r"set_scope: 'C' is a parameter of the function; only buffers "
                        r"allocated inside it")
    assert "# <-- here" in str(err)


def test_set_scope_refuses_bad_index():
    sch = Schedule(two_steps)
    block = sch.get_block("B")
    check_refused(sch, lambda s: s.set_scope(block, 2, "local"),
                  r"block 'B' has 1 write buffers \['B'\]; index 2 is out of range")
