"""Reference solutions of notebook 5's exercises, checked by the notebook's own checks."""
import pytest

from mlcbench import autotvm, te, tir
from helpers.exercise_cells import exercise_namespace

NB = exercise_namespace("05_tuning.ipynb")


def count_programs(mod, schedule_fn, samples):
    programs = set()
    for seed in range(samples):
        trace = schedule_fn(tir.Schedule(mod, seed=seed)).trace
        programs.add(tuple(tuple(decision) for decision in trace.decisions.values()))
    return len(programs)


def stochastic_schedule_ijk(sch):
    block = sch.get_block("C", func_name="main")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=sch.sample_perfect_tile(i, n=2))
    j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=2))
    k0, k1 = sch.split(k, factors=sch.sample_perfect_tile(k, n=2))
    sch.reorder(i0, j0, k0, i1, k1, j1)
    return sch


def matmul_template(vectorize_knob: bool):
    def matmul_vec(N, L, M, dtype):
        A = te.placeholder((N, L), name="A", dtype=dtype)
        B = te.placeholder((L, M), name="B", dtype=dtype)
        k = te.reduce_axis((0, L), name="k")
        C = te.compute((N, M), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
        s = te.create_schedule(C.op)
        y, x = s[C].op.axis
        cfg = autotvm.get_config()
        cfg.define_split("tile_y", y, num_outputs=2)
        cfg.define_split("tile_x", x, num_outputs=2)
        cfg.define_knob("vectorize", [0, 1])
        yo, yi = cfg["tile_y"].apply(s, C, y)
        xo, xi = cfg["tile_x"].apply(s, C, x)
        s[C].reorder(yo, xo, k, yi, xi)
        if vectorize_knob and cfg["vectorize"].val:
            s[C].vectorize(xi)
        return s, [A, B, C]
    return matmul_vec


def test_exercise_1_reference_solution_passes():
    assert NB["check_exercise_1"](count_programs) is True


def test_exercise_1_rejects_a_count_of_samples():
    with pytest.raises(AssertionError, match="expected"):
        NB["check_exercise_1"](lambda mod, fn, samples: samples)


def test_exercise_2_reference_solution_passes():
    assert NB["check_exercise_2"](stochastic_schedule_ijk) is True


def test_exercise_2_rejects_a_schedule_sampling_two_loops():
    with pytest.raises(AssertionError, match="expected 3"):
        NB["check_exercise_2"](NB["split_i_and_j"])


def test_exercise_3_reference_solution_passes():
    autotvm.template("exercise/matmul_vec")(matmul_template(vectorize_knob=True))
    assert NB["check_exercise_3"](lambda: "exercise/matmul_vec") is True


def test_exercise_3_rejects_a_knob_that_does_nothing():
    autotvm.template("exercise/matmul_no_vec")(matmul_template(vectorize_knob=False))
    with pytest.raises(AssertionError, match="vectorize=1"):
        NB["check_exercise_3"](lambda: "exercise/matmul_no_vec")


def test_unattempted_exercises_report_so(capsys):
    def todo(*args):
        raise NotImplementedError
    assert not any(NB[f"check_exercise_{k}"](todo) for k in (1, 2, 3))
    assert capsys.readouterr().out.count("not attempted yet") == 3
