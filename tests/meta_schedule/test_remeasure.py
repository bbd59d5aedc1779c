"""remeasure_top_k: the fastest few programs are measured again at the end, in turn,
and those figures decide which program the database returns."""
import pytest

from mlcbench import meta_schedule as ms
from mlcbench.ir import TuningError, structural_hash
from mlcbench.meta_schedule.runner import RunnerResult
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
    database = _tune(tmp_path, measurer)
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
