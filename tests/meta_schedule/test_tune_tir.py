import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mlcbench
from mlcbench import IRModule, meta_schedule as ms, tir
from mlcbench.ir import TuningError, structural_hash
from mlcbench.meta_schedule.runner import EvaluatorConfig, LocalRunner
from mlcbench.meta_schedule.task_scheduler import GradientBased
from mlcbench.meta_schedule.tune_context import TuneContext
from helpers.tuning_testing import (FakeMeasurer, matmul_module, sometimes_broken_space,
                            stochastic_schedule_mm)

TARGET = "llvm --num-cores=2"


def _fake_tune(work_dir, measurer, max_trials, per_iter=8, n=32, **kwargs):
    kwargs.setdefault("space", stochastic_schedule_mm)
    kwargs.setdefault("strategy", "replay-trace")
    return ms.tune_tir(matmul_module(n), TARGET, str(work_dir), max_trials,
                       num_trials_per_iter=per_iter, builder=measurer.builder,
                       runner=measurer.runner, cost_model="random", seed=0, **kwargs)


def _program_hashes(database):
    return [structural_hash(r.as_schedule().mod) for r in database.get_all_tuning_records()]


def test_every_round_is_reported_and_recorded(tmp_path, capsys):
    rounds, measurer = [], FakeMeasurer()
    database = _fake_tune(tmp_path, measurer, 20, callbacks=[rounds.append])
    assert [len(r.candidates) for r in rounds] == [8, 8, 4]
    assert [r.trials for r in rounds] == [8, 16, 20]
    assert len(database) == 20 == len(measurer.measured) == len(set(measurer.measured))
    best = [r.best_gflops for r in rounds]
    assert best == sorted(best) and best[-1] == pytest.approx(
        2 * 32 ** 3 / min(r.run_secs[0] for r in database.get_all_tuning_records()) / 1e9)
    last = rounds[-1]
    assert len(last.predicted) == len(last.measured) == 4
    assert -1 <= last.rank_correlation <= 1
    assert set(last.phase_seconds) == {"search", "build", "run", "update"}
    assert sum(last.phase_seconds.values()) == pytest.approx(last.seconds)
    out, err = capsys.readouterr()
    assert "Total weighted latency" in out and "| Trials | Errors |" in out
    assert "Seconds per trial: search" in out
    assert "tuning: 100%" in err and "20/20" in err          # the progress bar
    assert len(ms.JSONDatabase(work_dir=tmp_path)) == 20


def test_the_progress_bar_shows_the_time_of_a_kernel_without_flops(tmp_path, capsys):
    from mlcbench import te, topi
    x = te.placeholder((8, 16), name="x")
    copy = IRModule({"main": te.create_prim_func([x, topi.reshape(x, (16, 8))])})
    measurer = FakeMeasurer()
    rounds = []
    ms.tune_tir(copy, TARGET, str(tmp_path), 2, num_trials_per_iter=2,
                strategy="replay-trace", cost_model="random", seed=0,
                builder=measurer.builder, runner=measurer.runner, callbacks=[rounds.append])
    assert rounds[-1].best_gflops is None and rounds[-1].best_run_secs is not None
    _, err = capsys.readouterr()
    assert f"main: best {rounds[-1].best_run_secs * 1e6:.2f} us" in err
    assert "no valid result" not in err


def test_failed_candidates_are_recorded_as_errors_and_tuning_goes_on(tmp_path):
    measurer = FakeMeasurer(failing_extents={2, 4})
    rounds = []
    database = _fake_tune(tmp_path, measurer, 24, callbacks=[rounds.append])
    records = database.get_all_tuning_records()
    failed = [r for r in records if not r.is_valid]
    assert len(records) == 24 and failed and len(failed) < 24
    assert all(r.error_msg == "run crash: simulated" for r in failed)
    assert sum(r.errors for r in rounds) == len(failed)
    best = ms.tir_integration.compile_tir(database, matmul_module(32), TARGET)
    assert best is not None and structural_hash(best.mod) in set(measurer.measured)


def test_real_tuning_of_a_128_matmul(tmp_path):
    mod = matmul_module(128)
    runner = LocalRunner(evaluator_config=EvaluatorConfig(number=3, repeat=1, min_repeat_ms=5))
    rounds = []
    database = ms.tune_tir(mod=mod, target=TARGET, max_trials_global=16,
                           num_trials_per_iter=8, work_dir=str(tmp_path), runner=runner,
                           space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
                           strategy="replay-trace", cost_model="random", seed=1,
                           callbacks=[rounds.append])
    runner.shutdown()
    records = database.get_all_tuning_records()
    assert len(records) == 16 and all(r.is_valid for r in records), records
    assert rounds[-1].best_gflops > 0.5
    sch = ms.tir_integration.compile_tir(database, mod, TARGET)
    print(sch.trace)
    rng = np.random.default_rng(0)
    a, b = rng.random((128, 128), "float32"), rng.random((128, 128), "float32")
    c = mlcbench.nd.empty((128, 128), "float32")
    mlcbench.build(sch.mod, TARGET)["main"](mlcbench.nd.array(a), mlcbench.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)


def test_default_space_is_made_by_schedule_rules_and_post_processed(tmp_path):
    measurer = FakeMeasurer()
    database = ms.tune_tir(matmul_module(32), TARGET, str(tmp_path), 4, num_trials_per_iter=4,
                           strategy="replay-trace", cost_model="xgb", seed=0,
                           builder=measurer.builder, runner=measurer.runner)
    kinds = [[inst.kind for inst in r.trace.insts] for r in database.get_all_tuning_records()]
    assert len(kinds) == 4
    default, *sampled = kinds                   # the default schedule is measured first
    assert "sample_perfect_tile" not in default
    for trace_kinds in sampled:
        assert "sample_perfect_tile" in trace_kinds and "enter_postproc" in trace_kinds


def test_crashing_hanging_and_wrong_candidates_do_not_stop_tuning(tmp_path):
    runner = LocalRunner(timeout_sec=2, evaluator_config=EvaluatorConfig(min_repeat_ms=0))
    database = ms.tune_tir(matmul_module(32), TARGET, str(tmp_path), max_trials_global=12,
                           num_trials_per_iter=6, runner=runner, space=sometimes_broken_space,
                           strategy="replay-func", cost_model="random", seed=3)
    runner.shutdown()
    records = ms.JSONDatabase(work_dir=tmp_path).get_all_tuning_records()
    errors = sorted(r.error_msg.split(":")[0] for r in records if not r.is_valid)
    assert errors == ["run crash", "run timeout", "wrong answer"]
    assert any("SIGABRT" in r.error_msg for r in records if r.error_msg)
    assert len(records) == 12 and sum(r.is_valid for r in records) == 9


# the folder whose helpers package the script imports
_TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_KILLED_TUNING = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[2])
    from mlcbench import meta_schedule as ms
    from helpers.tuning_testing import FakeMeasurer, matmul_module, stochastic_schedule_mm
    measurer = FakeMeasurer(delay=0.02)
    ms.tune_tir(matmul_module(32), "llvm --num-cores=2", sys.argv[1], 100,
                num_trials_per_iter=4, builder=measurer.builder, runner=measurer.runner,
                space=stochastic_schedule_mm, strategy="replay-trace", cost_model="random",
                seed=0, callbacks=[lambda r: print("committed", r.total_trials, flush=True)],
                progress_bar=False)
""")


def test_killed_tuning_resumes_without_losing_or_repeating_records(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_TUNING, str(tmp_path),
                             _TESTS_DIR], stdout=subprocess.PIPE, text=True)
    committed = 0
    while committed < 12:
        line = proc.stdout.readline()
        assert line, "the tuning subprocess ended early"
        if line.startswith("committed"):
            committed = int(line.split()[1])
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    path = tmp_path / "database_tuning_record.json"
    before = path.read_bytes()
    survived = len(ms.JSONDatabase(work_dir=tmp_path))
    assert survived >= committed
    database = _fake_tune(tmp_path, FakeMeasurer(), 20, per_iter=4)
    assert path.read_bytes()[:len(before)] == before
    assert len(database) == survived + 20
    hashes = _program_hashes(ms.JSONDatabase(work_dir=tmp_path))
    assert len(hashes) == len(set(hashes)) == survived + 20


def _any_matmul_space(sch):
    (func_name,) = [gv.name_hint for gv in sch.mod.get_global_vars()]
    block = sch.get_block("C", func_name=func_name)
    for loop in sch.get_loops(block):
        sch.split(loop, factors=sch.sample_perfect_tile(loop, n=2))


def test_every_primfunc_of_a_module_is_a_task(tmp_path):
    mod = IRModule({"small": matmul_module(16)["main"], "large": matmul_module(64)["main"]})
    rounds, measurer = [], FakeMeasurer()
    database = ms.tune_tir(mod, TARGET, str(tmp_path), 12, num_trials_per_iter=3,
                           builder=measurer.builder, runner=measurer.runner,
                           space=_any_matmul_space, strategy="replay-trace",
                           cost_model="random", seed=0, callbacks=[rounds.append])
    assert [r.task_name for r in rounds] == ["small", "large"] * 2
    for name in ("small", "large"):
        assert database.query_schedule(IRModule({name: mod[name]}), TARGET) is not None


def test_gradient_scheduler_favours_the_heavier_task(tmp_path):
    measurer = FakeMeasurer()
    tasks = [TuneContext(matmul_module(n), target=TARGET, space_generator=_any_matmul_space,
                         search_strategy="replay-trace", task_name=f"mm{n}", rand_state=n)
             for n in (64, 32)]
    rounds = []
    ms.tune.tune_tasks(tasks=tasks, task_weights=[1.0, 100.0], work_dir=str(tmp_path),
                       max_trials_global=20, num_trials_per_iter=2, builder=measurer.builder,
                       runner=measurer.runner, cost_model="random",
                       task_scheduler=GradientBased(), callbacks=[rounds.append])
    names = [r.task_name for r in rounds]
    # one round each first, the heavier first: 100 x 32^3 multiply-adds against 64^3
    assert names[:2] == ["mm32", "mm64"]
    assert names.count("mm32") > names.count("mm64")
    assert sum(len(r.candidates) for r in rounds) == 20


def test_a_budget_shorter_than_the_first_rounds_goes_to_the_heaviest_kernels(tmp_path):
    measurer = FakeMeasurer()
    sizes = (8, 64, 16, 32)
    tasks = [TuneContext(matmul_module(n), target=TARGET, space_generator=_any_matmul_space,
                         search_strategy="replay-trace", task_name=f"mm{n}", rand_state=n)
             for n in sizes]
    rounds = []
    ms.tune.tune_tasks(tasks=tasks, task_weights=[1.0] * 4, work_dir=str(tmp_path),
                       max_trials_global=6, num_trials_per_iter=2, builder=measurer.builder,
                       runner=measurer.runner, cost_model="random",
                       task_scheduler=GradientBased(), callbacks=[rounds.append])
    assert [r.task_name for r in rounds] == ["mm64", "mm32", "mm16"]


def test_bad_arguments_are_explained(tmp_path):
    with pytest.raises(TuningError, match="give work_dir, or database='memory'"):
        ms.tune.tune_tasks(tasks=[], task_weights=[], work_dir=None, max_trials_global=4)
    with pytest.raises(TuningError, match="no PrimFunc to tune"):
        ms.tune_tir(IRModule({}), TARGET, str(tmp_path), 4)
    with pytest.raises(TuningError, match="must be >= 1"):
        ms.tune_tir(matmul_module(8), TARGET, str(tmp_path), 0, space=stochastic_schedule_mm,
                    strategy="replay-trace")


@pytest.mark.parametrize("equality", ["ignore-ndarray", "anchor-block", None])
def test_module_equality_other_than_structural_is_refused_before_tuning(tmp_path, equality):
    with pytest.raises(TuningError, match=r"module_equality must be 'structural'.*found "):
        ms.tune_tir(matmul_module(8), TARGET, str(tmp_path / "db"), 4,
                    space=stochastic_schedule_mm, module_equality=equality)
    assert not (tmp_path / "db").exists()        # refused before any record was written


def test_resuming_says_what_it_found_and_how_the_budget_counts_it(tmp_path, capsys):
    _fake_tune(tmp_path, FakeMeasurer(), 8, n=32)
    assert "resumed" not in capsys.readouterr().out                  # nothing to resume
    _fake_tune(tmp_path, FakeMeasurer(), 4, n=16)
    assert "resumed 8 records of 1 workload from" in capsys.readouterr().out
    database = _fake_tune(tmp_path, FakeMeasurer(), 4, n=32)
    assert (f"resumed 12 records of 2 workloads from {tmp_path}; they do not count against "
            "max_trials_global=4: the search measures up to 4 new programs, none of those 12"
            in capsys.readouterr().out)
    assert len(database) == 16


def test_tuning_without_xgboost_fails_at_the_start_saying_what_to_install(tmp_path,
                                                                           monkeypatch):
    """Not at the first training of the cost model (trial 64 or 100), with nothing run."""
    monkeypatch.setitem(sys.modules, "xgboost", None)
    measurer = FakeMeasurer()
    with pytest.raises(TuningError, match=r"pip install 'mlcbench\[tune\]'"):
        ms.tune_tir(matmul_module(32), TARGET, str(tmp_path), 16, num_trials_per_iter=8,
                    space=stochastic_schedule_mm, builder=measurer.builder,
                    runner=measurer.runner, cost_model="xgb")



def _split_j_only(sch):
    """A space of 3 schedules for a 4-wide j: tiles (1, 4), (2, 2), (4, 1)."""
    block = sch.get_block("C", func_name="main")
    _, j, _ = sch.get_loops(block)
    sch.split(j, factors=sch.sample_perfect_tile(j, n=2))
    return sch


def test_a_space_smaller_than_the_budget_says_it_is_exhausted(tmp_path, capsys):
    measurer = FakeMeasurer()
    ms.tune_tir(matmul_module(4), TARGET, str(tmp_path), 32, num_trials_per_iter=8,
                space=_split_j_only, builder=measurer.builder, runner=measurer.runner,
                cost_model="random", seed=0, progress_bar=False)
    out = capsys.readouterr().out
    assert len(set(measurer.measured)) == len(measurer.measured) == 3
    assert "main: space exhausted after 3 candidates" in out and "budget was 32" in out


def test_a_spent_budget_is_not_called_an_exhausted_space(tmp_path, capsys):
    measurer = FakeMeasurer()
    ms.tune_tir(matmul_module(32), TARGET, str(tmp_path), 8, num_trials_per_iter=8,
                space=stochastic_schedule_mm, builder=measurer.builder,
                runner=measurer.runner, cost_model="random", seed=0, progress_bar=False)
    assert "exhausted" not in capsys.readouterr().out


def test_rounds_say_whether_the_cost_model_was_trained(tmp_path):
    from mlcbench.meta_schedule.cost_model import RandomModel
    rounds = []
    measurer = FakeMeasurer()
    ms.tune_tir(matmul_module(32), TARGET, str(tmp_path), 16, num_trials_per_iter=8,
                space=stochastic_schedule_mm, builder=measurer.builder,
                runner=measurer.runner, cost_model=RandomModel(seed=0), seed=0,
                callbacks=[rounds.append], progress_bar=False)
    assert [r.model_trained for r in rounds] == [False, False]


def test_tune_tir_and_tune_relax_take_every_option_they_pass_to_tune_tasks():
    import inspect
    from mlcbench.meta_schedule.relax_integration import tune_relax
    from mlcbench.meta_schedule.tune import TUNE_TASKS_OPTIONS, tune_tasks, tune_tir
    for func in (tune_tir, tune_relax, tune_tasks):
        params = inspect.signature(func).parameters
        missing = [name for name in TUNE_TASKS_OPTIONS if name not in params]
        assert not missing, f"{func.__name__} lacks {missing}"
        assert all(params[name].kind is inspect.Parameter.KEYWORD_ONLY
                   for name in TUNE_TASKS_OPTIONS)
