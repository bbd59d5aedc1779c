"""The tuning loop every tuner shares: propose a batch, measure it, learn, repeat.

A tuner proposes configs by index (``next_batch``) and never proposes one twice;
``update`` tells it what they measured. ``tune`` stops after ``n_trial`` measurements,
when the space is exhausted, or ``early_stopping`` trials after the last improvement::

    tuner = autotvm.tuner.RandomTuner(task)
    tuner.tune(n_trial=32, measure_option=option,
               callbacks=[autotvm.callback.log_to_file("matmul.log")])
    tuner.best_config, tuner.best_flops
"""
from __future__ import annotations

import logging

import numpy as np

from ...ir.errors import InvalidValueError
from ..callback import SI_PREFIXES
from ..measure import MeasureInput, create_measure_batch

__all__ = ["Tuner"]

# Every measured config is logged here at debug level, as TVM's tuners do.
logger = logging.getLogger("mlcbench.autotvm")


class Tuner:
    """Base of tuners. Subclasses implement ``next_batch`` / ``has_next`` / ``update``."""

    def __init__(self, task, seed: int | None = None):
        self.task = task
        self.space = task.config_space
        self.rng = np.random.default_rng(seed)
        self.visited: set = set()
        self.best_config = None
        self.best_flops = 0.0
        self.best_measure_pair = None
        self.best_iter = 0
        self.finished = False

    # -- to implement ----------------------------------------------------------------------
    def next_batch(self, batch_size: int) -> list:
        raise NotImplementedError

    def has_next(self) -> bool:
        return len(self.visited) < len(self.space)

    def update(self, inputs, results) -> None:
        """Learn from measured configs (nothing by default)."""

    # -- shared ------------------------------------------------------------------------------
    def _take(self, index: int):
        """Mark ``index`` measured and return its config."""
        self.visited.add(int(index))
        return self.space.get(int(index))

    def _random_unvisited(self) -> int:
        while True:
            index = int(self.rng.integers(len(self.space)))
            if index not in self.visited:
                return index

    def tune(self, n_trial: int, measure_option: dict, early_stopping: int | None = None,
             callbacks=(), si_prefix: str = "G") -> None:
        """Measure up to ``n_trial`` configs; see the module docstring. Each measured
        config is logged at debug level (logger ``mlcbench.autotvm``) with its throughput
        and the best so far in ``si_prefix``FLOPS (``"G"``: GFLOPS; one of
        :data:`~mlcbench.autotvm.callback.SI_PREFIXES`)."""
        if si_prefix not in SI_PREFIXES:
            raise InvalidValueError(f"tune: si_prefix must be one of {sorted(SI_PREFIXES)}, "
                                    f"found {si_prefix!r}")
        measure_batch = create_measure_batch(self.task, measure_option)
        width = max(1, getattr(measure_batch, "n_parallel", 1))
        # None means never: a bound no tuning run reaches.
        early_stopping = early_stopping or 10 ** 9
        self.finished, done = False, 0
        while done < n_trial and self.has_next():
            configs = self.next_batch(min(width, n_trial - done))
            if not configs:
                break
            inputs = [MeasureInput(self.task.target, self.task, c) for c in configs]
            results = measure_batch(inputs)
            self._note_best(inputs, results, done)
            self._log(inputs, results, done, si_prefix)
            done += len(results)
            self.update(inputs, results)
            self.finished = done >= n_trial or not self.has_next() or \
                done >= self.best_iter + early_stopping
            for callback in callbacks:
                callback(self, inputs, results)
            if done >= self.best_iter + early_stopping:
                break
        self.finished = True

    def _note_best(self, inputs, results, done: int) -> None:
        for offset, (inp, result) in enumerate(zip(inputs, results)):
            if result.error_no != 0:
                continue
            flops = self.task.flop / float(np.mean(result.costs))
            if flops > self.best_flops:
                self.best_flops, self.best_config = flops, inp.config
                self.best_measure_pair, self.best_iter = (inp, result), done + offset

    def _log(self, inputs, results, done: int, si_prefix: str) -> None:
        if not logger.isEnabledFor(logging.DEBUG):
            return
        scale = SI_PREFIXES[si_prefix]
        for offset, (inp, result) in enumerate(zip(inputs, results)):
            flops = 0.0 if result.error_no else self.task.flop / float(np.mean(result.costs))
            logger.debug("No: %d\t%sFLOPS: %.2f/%.2f\tresult: %s\t%s", done + offset + 1,
                         si_prefix, flops / scale, self.best_flops / scale, result, inp.config)

    def load_history(self, data_set, min_seed_records: int = 500) -> None:
        """Learn from earlier records of the same workload (transfer learning); the
        configs they measured are not proposed again."""
        inputs, results = [], []
        for inp, result in data_set:
            if inp.workload != self.task.workload:
                continue
            index = inp.config.index
            # A record's index may lie outside this space (a template whose knobs changed).
            if 0 <= index < len(self.space):
                self.visited.add(index)
                inputs.append(MeasureInput(inp.target, self.task, self.space.get(index)))
                results.append(result)
        if inputs:
            self._note_best(inputs, results, 0)
            self.update(inputs, results)

    def reset(self) -> None:
        self.visited.clear()
        self.best_config, self.best_flops, self.best_measure_pair = None, 0.0, None
