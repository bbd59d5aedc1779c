"""remeasure_top_k: the fastest few programs and the default schedule are measured again
at the end, in turn, and those figures decide which program the database returns."""
import pytest

from mlcbench import meta_schedule as ms
from mlcbench.ir import TuningError, structural_hash
from mlcbench.meta_schedule.builder import BuilderResult
from mlcbench.meta_schedule.default_schedule import default_schedule
from mlcbench.meta_schedule.runner import RunnerResult
from mlcbench.target import Target
from helpers.tuning_testing import FakeMeasurer, matmul_module, stochastic_schedule_mm

TARGET = "llvm --num-cores=2"


class LuckyFirstMeasurer(FakeMeasurer):
    """The program measured ``lucky_index``-th looks 10x faster the first time only (as
    if the machine had been idle for it alone); programs whose hash is in ``broken``
    fail when run again."""

    def __init__(self, lucky_index=3):
        super().__init__()
        self.lucky_index, self.lucky, self.broken = lucky_index, None, set()

    def measure(self, key):
        result = super().measure(key)
        program = self.measured[-1]
        if len(self.measured) == self.lucky_index + 1:
            self.lucky = program
            return RunnerResult([s / 10 for s in result.run_secs], None)
        if program in self.broken and self.measured.count(program) > 1:
            return RunnerResult(None, "run crash: simulated")
        return result


def _tune(tmp_path, measurer, **kwargs):
    return ms.tune_tir(matmul_module(32), TARGET, str(tmp_path), 12, num_trials_per_iter=6,
                       space=stochastic_schedule_mm, strategy="replay-trace",
                       cost_model="random", seed=0, builder=measurer.builder,
                       runner=measurer.runner, progress_bar=False, **kwargs)


def _best_hash(database):
    record = database.query_tuning_record(matmul_module(32), TARGET)
    return structural_hash(record.as_schedule().mod)


def test_without_remeasuring_a_lucky_measurement_wins(tmp_path):
    measurer = LuckyFirstMeasurer()
    database = _tune(tmp_path, measurer, remeasure_top_k=0)
    assert len(database) == 12 == len(measurer.measured)
    assert _best_hash(database) == measurer.lucky


def test_remeasuring_the_top_programs_in_turn_corrects_the_choice(tmp_path):
    measurer = LuckyFirstMeasurer()
    database = _tune(tmp_path, measurer, remeasure_top_k=4, remeasure_rounds=3)
    first, again = measurer.measured[:12], measurer.measured[12:]
    # four programs, each round runs them in turn, three rounds
    assert len(again) == 12 and again[:4] == again[4:8] == again[8:]
    assert measurer.lucky in again[:4] and set(again) <= set(first)
    assert len(database) == 12 + 4                  # one new record per program
    assert _best_hash(database) != measurer.lucky
    records = database.get_all_tuning_records()
    remeasured = {structural_hash(r.as_schedule().mod): r for r in records[12:]}
    assert all(len(r.run_secs) == 3 for r in remeasured.values())
    best = min(remeasured.values(), key=lambda r: r.mean_run_secs)
    assert _best_hash(database) == structural_hash(best.as_schedule().mod)
    # resuming reads the same choice back from the files
    assert _best_hash(ms.JSONDatabase(work_dir=str(tmp_path))) == _best_hash(database)


def test_a_program_that_fails_when_measured_again_drops_out(tmp_path):
    measurer = LuckyFirstMeasurer(lucky_index=99)
    plain = _tune(tmp_path / "plain", FakeMeasurer())
    top = plain.get_top_k(plain.lookup_workload(matmul_module(32)), 1)[0]
    measurer.broken.add(structural_hash(top.as_schedule().mod))
    database = _tune(tmp_path / "again", measurer, remeasure_top_k=3)
    assert _best_hash(database) not in measurer.broken
    failed = [r for r in database.get_all_tuning_records()[12:] if not r.is_valid]
    assert len(failed) == 1 and "simulated" in failed[0].error_msg


def test_bad_remeasure_arguments_are_refused(tmp_path):
    with pytest.raises(TuningError, match="remeasure_top_k must be >= 0"):
        _tune(tmp_path, FakeMeasurer(), remeasure_top_k=-1)
    with pytest.raises(TuningError, match="remeasure_rounds >= 1"):
        _tune(tmp_path, FakeMeasurer(), remeasure_top_k=2, remeasure_rounds=0)


# -- the default schedule is measured again beside the best -----------------------------------
DEFAULT = structural_hash(default_schedule(matmul_module(32), Target(TARGET)).mod)


class DefaultTimedMeasurer(FakeMeasurer):
    """The default schedule takes ``first`` seconds when first measured (tuning measures
    it first) and ``again`` seconds when measured again; when ``fails_to_build`` it does
    not build. Other programs take FakeMeasurer's times (1 to 2 ms)."""

    def __init__(self, first, again, fails_to_build=False):
        super().__init__()
        self.first, self.again, self.default_builds = first, again, 0
        fake_build = self.builder.build

        def build(build_inputs):
            results = fake_build(build_inputs)
            for n, inp in enumerate(build_inputs):
                if structural_hash(inp.mod) == DEFAULT:
                    self.default_builds += 1
                    if fails_to_build:
                        results[n] = BuilderResult(None, "build error: simulated")
            return results
        self.builder.build = build

    def measure(self, key):
        result = super().measure(key)
        if self.measured[-1] != DEFAULT:
            return result
        return RunnerResult([self.first if self.measured.count(DEFAULT) == 1 else self.again],
                            None)


def _tune_default_space(tmp_path, measurer, **kwargs):
    return ms.tune_tir(matmul_module(32), TARGET, str(tmp_path), 12, num_trials_per_iter=6,
                       strategy="replay-trace", cost_model="random", seed=0,
                       builder=measurer.builder, runner=measurer.runner, progress_bar=False,
                       **kwargs)


def _compiled_hash(database):
    sch = ms.tir_integration.compile_tir(database, matmul_module(32), TARGET)
    return structural_hash(sch.mod)


def test_a_default_measured_slow_once_wins_when_measured_again_beside_the_best(tmp_path):
    measurer = DefaultTimedMeasurer(first=20e-3, again=0.5e-3)
    database = _tune_default_space(tmp_path, measurer, remeasure_top_k=2)
    first, again = measurer.measured[:12], measurer.measured[12:]
    assert first[0] == DEFAULT and DEFAULT not in first[1:]
    # the two fastest and the default, run in turn, three rounds
    assert len(again) == 9 and again[:3] == again[3:6] == again[6:] and DEFAULT in again[:3]
    assert len(database) == 12 + 3
    best = database.query_tuning_record(matmul_module(32), TARGET)
    assert best.run_secs == [0.5e-3] * 3
    assert _best_hash(database) == _compiled_hash(database) == DEFAULT
    reloaded = ms.JSONDatabase(work_dir=str(tmp_path))
    assert _best_hash(reloaded) == DEFAULT
    assert reloaded.query_tuning_record(matmul_module(32), TARGET).run_secs == best.run_secs


def test_a_tuned_program_truly_faster_than_the_default_still_wins(tmp_path):
    measurer = DefaultTimedMeasurer(first=3e-3, again=3e-3)
    database = _tune_default_space(tmp_path, measurer, remeasure_top_k=2)
    again = measurer.measured[12:]
    # the default (slower than every sampled program here) is measured again all the same
    assert again.count(DEFAULT) == 3 and len(set(again)) == 3
    tuned = _best_hash(database)
    assert tuned != DEFAULT and tuned in again
    assert _compiled_hash(database) == tuned
    assert _best_hash(ms.JSONDatabase(work_dir=str(tmp_path))) == tuned


def test_without_remeasuring_a_default_measured_slow_once_loses(tmp_path):
    measurer = DefaultTimedMeasurer(first=20e-3, again=0.5e-3)
    database = _tune_default_space(tmp_path, measurer, remeasure_top_k=0)
    # remeasure_top_k=0 turns every measuring again off, that of the default included
    assert len(measurer.measured) == len(database) == 12
    assert _best_hash(database) != DEFAULT


def test_a_default_that_failed_to_build_is_not_built_again(tmp_path):
    measurer = DefaultTimedMeasurer(first=0.5e-3, again=0.5e-3, fails_to_build=True)
    database = _tune_default_space(tmp_path, measurer, remeasure_top_k=2)
    assert measurer.default_builds == 1 and DEFAULT not in measurer.measured
    # the two fastest are measured again as before; no record for the default is added
    assert len(measurer.measured) == 12 - 1 + 2 * 3 and len(database) == 12 + 2
    assert _best_hash(database) != DEFAULT


class LuckyAtFirst(FakeMeasurer):
    """The programs measured at ``positions`` look 10x faster the first time (as if the
    machine had been idle for them alone)."""

    def __init__(self, positions):
        super().__init__()
        self.positions = set(positions)

    def measure(self, key):
        result = super().measure(key)
        if len(self.measured) - 1 not in self.positions:
            return result
        return RunnerResult([s / 10 for s in result.run_secs], None)


def test_a_record_faster_than_the_winner_of_a_pass_is_measured_in_a_further_pass(tmp_path):
    # The two lucky programs fill the top two; measured again they lose to the default,
    # but three programs measured once hold figures below the default's new one.
    measurer = LuckyAtFirst(positions=[1, 2])
    database = _tune_default_space(tmp_path, measurer, remeasure_top_k=2)
    lucky = set(measurer.measured[1:3])
    first_pass, second_pass = measurer.measured[12:21], measurer.measured[21:]
    assert set(first_pass) == lucky | {DEFAULT}
    # the two fastest of those join the three of the first pass, in turn, three rounds
    assert len(second_pass) == 15 and second_pass[:5] == second_pass[5:10] == second_pass[10:]
    assert set(first_pass) < set(second_pass)
    # one record per program, from the pass that settled the choice
    assert len(database) == 12 + 5
    best = database.query_tuning_record(matmul_module(32), TARGET)
    assert len(best.run_secs) == 3 and _best_hash(database) in set(second_pass) - lucky
    assert _best_hash(ms.JSONDatabase(work_dir=str(tmp_path))) == _best_hash(database)


class BusierAtTheEnd(FakeMeasurer):
    """Every program measured a second time or later takes three times as long: the
    machine got busy when tuning measured the best again."""

    def measure(self, key):
        result = super().measure(key)
        if self.measured.count(self.measured[-1]) == 1:
            return result
        return RunnerResult([3 * s for s in result.run_secs], None)


def test_figures_of_a_busier_machine_that_never_settle_the_choice_are_not_kept(tmp_path):
    plain = _tune_default_space(tmp_path / "plain", FakeMeasurer())
    measurer = BusierAtTheEnd()
    with pytest.warns(UserWarning, match="did not settle"):
        database = _tune_default_space(tmp_path / "busy", measurer, remeasure_top_k=2)
    # every pass measured more programs, each slower than the records measured once
    assert len(measurer.measured) == 12 + 3 * (3 + 5 + 7)
    # nothing is committed: the choice is that of the first figures, as without remeasuring
    assert len(database) == 12
    assert _best_hash(database) == _best_hash(plain)
