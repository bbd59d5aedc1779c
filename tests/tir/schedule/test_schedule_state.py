"""Copy, seeding, printing and replay of the Schedule itself."""
import json

from mlcbench.script import tir as T
from mlcbench.ir import assert_structural_equal
from mlcbench.tir import Schedule, Trace


@T.prim_func
def add_one(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 32), "float32")):
    for i, j in T.grid(64, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)


def test_copy_is_independent_and_shares_handles():
    sch = Schedule(add_one)
    i, j = sch.get_loops("B")
    other = sch.copy()
    other.split(j, factors=[None, 8])
    assert len(sch.get_loops("B")) == 2 and len(other.get_loops("B")) == 3
    other.parallel(i)
    assert sch.get(i).kind.value == "serial"


def test_seed_makes_sampling_reproducible():
    def sample(seed):
        sch = Schedule(add_one, seed=seed)
        i, _ = sch.get_loops("B")
        return [sch.get(v) for v in sch.sample_perfect_tile(i, n=3)]
    assert sample(7) == sample(7)
    sch = Schedule(add_one)
    sch.seed(5)
    a = sch.fork_seed()
    sch.seed(5)
    assert sch.fork_seed() == a


def test_trace_prints_as_runnable_python():
    sch = Schedule(add_one)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.fuse(i, j)
    namespace = {}
    exec(str(sch.trace), namespace)
    fresh = Schedule(add_one)
    namespace["apply_trace"](fresh)
    assert_structural_equal(fresh.mod["main"], sch.mod["main"])
    assert str(fresh.trace) == str(sch.trace)


def test_json_is_plain_data():
    sch = Schedule(add_one)
    _, j = sch.get_loops("B")
    sch.split(j, factors=[4, 8])
    text = json.dumps(sch.trace.as_json())
    assert str(Trace.from_json(text)) == str(sch.trace)
