"""The exercises of notebooks/05_tuning.ipynb: the size of a design space, a stochastic
schedule over three loops checked against numpy and for its variety, an AutoTVM
template with a knob checked by its config space and its programs. Reference
solutions: tests/notebooks/test_ch05_exercises.py."""
from nbformat.v4 import new_code_cell, new_markdown_cell

MD, CODE = new_markdown_cell, new_code_cell


def exercise_cell(source):
    """A code cell that tests/notebooks/ runs with the reference solutions."""
    return new_code_cell(source, metadata={"tags": ["exercise-setup"]})


SETUP_1 = '''import numpy as np
import mlcbench as tvm
from mlcbench import autotvm, te, tir
from mlcbench.script import ir as I, tir as T


@I.ir_module
class Matmul64:
    @T.prim_func
    def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
             C: T.Buffer((64, 64), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(64, 64, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def split_j(sch):
    block = sch.get_block("C", func_name="main")
    i, j, k = sch.get_loops(block)
    j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=2))
    sch.reorder(i, j0, k, j1)
    return sch


def split_i_and_j(sch):
    block = sch.get_block("C", func_name="main")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=sch.sample_perfect_tile(i, n=2))
    j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=2))
    sch.reorder(i0, j0, k, i1, j1)
    return sch


def check_exercise_1(count_programs):
    """True when count_programs finds the 5 and 25 programs of split_j and
    split_i_and_j; False when not tried."""
    try:
        counts = [count_programs(Matmul64, fn, 200) for fn in (split_j, split_i_and_j)]
    except NotImplementedError:
        print("Exercise 1: not attempted yet")
        return False
    assert counts == [5, 25], f"counted {counts} programs, expected [5, 25]"
    print("Exercise 1: correct, 5 and 25 programs (5 inner factors per split loop)")
    return True'''

SETUP_2 = '''def sampled_loops(trace):
    """The sample_perfect_tile instructions of a trace."""
    return [inst for inst in trace.insts if inst.kind == "sample_perfect_tile"]


def check_exercise_2(schedule_fn):
    """True when schedule_fn samples tiles of i, j and k, gives correct programs and
    more than one of them over eight seeds; False when not tried."""
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
    decisions = set()
    for seed in range(8):
        try:
            sch = schedule_fn(tir.Schedule(Matmul64, seed=seed))
        except NotImplementedError:
            print("Exercise 2: not attempted yet")
            return False
        samples = sampled_loops(sch.trace)
        assert len(samples) == 3, f"seed {seed}: {len(samples)} sample_perfect_tile calls, expected 3"
        decisions.add(tuple(tuple(inst.decision) for inst in samples))
        if seed < 3:
            lib = tvm.build(sch.mod, target="llvm")
            c = tvm.nd.empty((64, 64), "float32")
            lib["main"](tvm.nd.array(a), tvm.nd.array(b), c)
            np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4, err_msg=f"seed {seed}")
    assert len(decisions) > 1, "eight seeds gave the same tile sizes: nothing is sampled"
    print(f"Exercise 2: correct, {len(decisions)} different tilings over eight seeds")
    return True'''

SETUP_3 = '''def check_exercise_3(template_name):
    """True when the registered template ``template_name`` has a space of 7 * 7 * 2
    configs whose 'vectorize' knob vectorizes, and computes a matmul; False when not
    tried."""
    try:
        name = template_name()
    except NotImplementedError:
        print("Exercise 3: not attempted yet")
        return False
    task = autotvm.task.create(name, args=(64, 64, 64, "float32"), target="llvm")
    space = task.config_space
    assert len(space) == 98, f"the space has {len(space)} configs, expected 7 * 7 * 2 = 98"
    rng = np.random.default_rng(1)
    a, b = rng.random((64, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
    for index in (0, 47, 97):
        config = space.get(index)
        vectorized = "T.vectorized" in task.instantiate_module(config).script()
        assert vectorized == bool(config["vectorize"].val), (
            f"config {index} has vectorize={config['vectorize'].val} but the program "
            f"{'is' if vectorized else 'is not'} vectorized")
        sch, args = task.instantiate(config)
        lib = tvm.build(sch, args, target="llvm")
        c = tvm.nd.empty((64, 64), "float32")
        lib(tvm.nd.array(a), tvm.nd.array(b), c)
        np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4, err_msg=f"config {index}")
    print("Exercise 3: correct, 98 configs, and the knob vectorizes the inner loop")
    return True'''


EXERCISE_CELLS = [
    MD("## Exercises\n\n"
       "Each exercise has a cell to fill in and a cell that checks your answer. Until you "
       "fill it in, the check says \"not attempted yet\"; a wrong answer raises an error "
       "that says what differs. Reference solutions are in "
       "`tests/notebooks/test_ch05_exercises.py`."),
    exercise_cell(SETUP_1),
    MD("### Exercise 1: how large is a design space?\n\n"
       "Tuning said *space exhausted after 5 candidates*. Count it yourself: write "
       "`count_programs(mod, schedule_fn, samples)` that applies `schedule_fn` to "
       "`tir.Schedule(mod, seed=s)` for `samples` different seeds and returns how many "
       "*different* programs came out. Two programs are the same when their sampling "
       "decisions are the same (`sch.trace.decisions` maps each sampling instruction "
       "to its decision), or, slower, when `tvm.ir.structural_equal` says so. The check "
       "calls it with `split_j` (one sampled loop) and `split_i_and_j` (two)."),
    CODE('''def count_programs(mod, schedule_fn, samples):
    # apply schedule_fn for `samples` seeds; return the number of distinct programs
    raise NotImplementedError


exercise_1_done = check_exercise_1(count_programs)'''),
    exercise_cell(SETUP_2),
    MD("### Exercise 2: a larger space\n\n"
       "Write a stochastic schedule for `Matmul64` that samples a two-way tiling of "
       "**each** of `i`, `j` and `k` with `sample_perfect_tile`, splits the three loops, "
       "and reorders them as `i0, j0, k0, i1, k1, j1` (the order of the tuned programs "
       "of this chapter). The check applies it with eight seeds, builds three of the "
       "programs and compares them with numpy."),
    CODE('''def stochastic_schedule_ijk(sch):
    # sample, split and reorder i, j and k; return sch
    raise NotImplementedError


exercise_2_done = check_exercise_2(stochastic_schedule_ijk)'''),
    exercise_cell(SETUP_3),
    MD("### Exercise 3: an AutoTVM template with a knob\n\n"
       "Register a template named `\"exercise/matmul_vec\"` (with `@autotvm.template`) "
       "that computes `C = A @ B` as the template of this chapter, with the two splits "
       "`tile_y` and `tile_x`, plus a knob `cfg.define_knob(\"vectorize\", [0, 1])`: when "
       "its value is 1, vectorize the innermost loop `xi`. Its space then has 7 * 7 * 2 "
       "configs for a 64x64x64 matmul. Return the template's name from "
       "`exercise_3_template`."),
    CODE('''def exercise_3_template():
    # define and register the template here, then return its name
    raise NotImplementedError


exercise_3_done = check_exercise_3(exercise_3_template)'''),
]
