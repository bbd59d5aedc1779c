"""ParallelizeVectorizeUnroll: limits and a sampled unroll step on the root block."""
from mlcbench.meta_schedule.schedule_rule import ParallelizeVectorizeUnroll
from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers import space_testing as sp


@T.prim_func
def add_one(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)


def _root_annotations(rule, mod, seed=0):
    sch = Schedule(mod, seed=seed)
    (result,) = sp.initialized(rule).apply(sch, sch.get_block("root"))
    return result, result.get(result.get_block("root")).annotations


def test_root_gets_parallel_vectorize_and_a_sampled_unroll_step():
    mod, _ = sp.matmul(16)
    sch, annotations = _root_annotations(ParallelizeVectorizeUnroll(), mod)
    assert annotations["meta_schedule.parallel"] == 16 * 2       # 2 cores in the target
    assert annotations["meta_schedule.vectorize"] == 64
    (sample,) = [i for i in sch.trace.insts if i.kind == "sample_categorical"]
    steps = sample.kwargs()["candidates"]
    assert steps == [0, 16, 64, 512]
    assert annotations["meta_schedule.unroll_explicit"] == steps[sample.decision]


def test_every_unroll_step_is_drawn():
    mod, _ = sp.matmul(16)
    seen = {_root_annotations(ParallelizeVectorizeUnroll(), mod, seed)[1][
        "meta_schedule.unroll_explicit"] for seed in range(40)}
    assert seen == {0, 16, 64, 512}


def test_options_turn_parts_off():
    mod, _ = sp.matmul(16)
    rule = ParallelizeVectorizeUnroll(max_jobs_per_core=-1, max_vectorize_extent=-1,
                                      unroll_max_steps=[4], unroll_explicit=False)
    _, annotations = _root_annotations(rule, mod)
    assert annotations == {"meta_schedule.unroll_implicit": 4}


def test_spatial_functions_are_not_unrolled_and_other_blocks_untouched():
    sch, annotations = _root_annotations(ParallelizeVectorizeUnroll(), add_one)
    assert set(annotations) == {"meta_schedule.parallel", "meta_schedule.vectorize"}
    assert not [i for i in sch.trace.insts if i.kind == "sample_categorical"]
    other = Schedule(add_one)
    before = other.mod
    (result,) = ParallelizeVectorizeUnroll().apply(other, other.get_block("B"))
    assert result.mod is before
