"""Whole-model tuning for ``tvmc.tune`` and ``mlcbench tune``: MetaSchedule into a
database directory, or AutoTVM templates into a log file."""
from __future__ import annotations

import os

from ..ir.errors import TuningError


def tune_meta_schedule(mod, target, work_dir: str, trials: int,
                       progress_bar: bool = True) -> str:
    """Tune every kernel of ``mod`` (weights bound) with ``trials`` in all; the records
    go to the MetaSchedule database in ``work_dir``, which is returned."""
    from ..meta_schedule.relax_integration import tune_relax
    if os.path.isfile(work_dir):
        raise TuningError(f"tune: {work_dir} is a file; MetaSchedule records go into a "
                          f"directory (give a new name, or tune with AutoTVM for a log file)")
    # A batch no larger than the whole budget, so a small run still measures in one batch.
    tune_relax(mod, None, target, work_dir, max_trials_global=trials,
               num_trials_per_iter=min(64, trials), progress_bar=progress_bar)
    return work_dir


def tune_autotvm(mod, target, log_file: str, trials: int, prior_records=None,
                 early_stopping=None, measure=None, tuner: str = "xgb",
                 progress_bar: bool = True) -> str:
    """Tune each AutoTVM task of ``mod`` for up to ``trials`` configs, appending the
    records to ``log_file`` (returned). ``prior_records`` (a log) seed the tuners."""
    from .. import autotvm
    if os.path.isdir(log_file):
        raise TuningError(f"tune: {log_file} is a directory; AutoTVM records go into a "
                          f"log file (or tune with enable_autoscheduler=True)")
    tasks = autotvm.task.extract_from_program(mod["main"], target=target, params=None)
    if not tasks:
        raise TuningError("tune: the model has no dense or conv2d kernel an AutoTVM "
                          "template covers; tune with MetaSchedule (enable_autoscheduler)")
    option = autotvm.measure_option(builder=autotvm.LocalBuilder(),
                                    runner=autotvm.LocalRunner(**(measure or {})))
    # Read once for all tasks: each tuner keeps the records of its own workload.
    history = list(autotvm.record.load_from_file(prior_records)) if prior_records else []
    for index, task in enumerate(tasks):
        tuner_obj = _make_tuner(autotvm, tuner, task)
        if history:
            tuner_obj.load_history(history)
        # A small space is measured whole, and the progress bar counts to its size.
        n_trial = min(trials, len(task.config_space))
        callbacks = [autotvm.callback.log_to_file(log_file)]
        if progress_bar:
            prefix = f"[Task {index + 1:2d}/{len(tasks):2d}] "
            callbacks.insert(0, autotvm.callback.progress_bar(n_trial, prefix=prefix))
        tuner_obj.tune(n_trial=n_trial, early_stopping=early_stopping,
                       measure_option=option, callbacks=callbacks)
    return log_file


def _make_tuner(autotvm, name: str, task):
    tuners = {"xgb": lambda: autotvm.tuner.XGBTuner(task, loss_type="reg"),
              "xgb-rank": lambda: autotvm.tuner.XGBTuner(task, loss_type="rank"),
              "ga": lambda: autotvm.tuner.GATuner(task),
              "random": lambda: autotvm.tuner.RandomTuner(task),
              "gridsearch": lambda: autotvm.tuner.GridSearchTuner(task)}
    if name not in tuners:
        raise TuningError(f"tune: tuner is one of {sorted(tuners)}, found {name!r}")
    return tuners[name]()


__all__ = ["tune_autotvm", "tune_meta_schedule"]
