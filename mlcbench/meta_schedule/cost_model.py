"""Cost models: predict which candidate schedules run fast, learn from measurements.

A search strategy asks ``predict(context, candidates)`` for scores (larger is better)
and measures the best; then ``update(context, candidates, results)`` feeds the run
times back. :class:`XGBModel` (in :mod:`~mlcbench.meta_schedule.xgb_model`) learns from
per-store features; :class:`RandomModel` scores at random (the baseline a learned model
must beat)::

    >>> from mlcbench import meta_schedule as ms
    >>> model = ms.cost_model.RandomModel(seed=0)
    >>> scores = model.predict(None, candidates)              # doctest: +SKIP
    >>> model.update(None, candidates, runner_results)        # doctest: +SKIP
    >>> model.last_update.spearman                            # doctest: +SKIP

After every ``update`` a model keeps ``last_update``: what it had predicted for those
candidates next to what was measured (throughput, 1 / seconds), and how well the two
rank alike -- the number a tuning dashboard plots per round.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..ir.errors import TuningError
from . import metrics

__all__ = ["CostModel", "PyCostModel", "RandomModel", "UpdateReport", "XGBConfig", "XGBModel",
           "mean_run_secs"]


@dataclass(frozen=True)
class UpdateReport:
    """Predicted scores against measured throughput for the candidates of one update.

    ``trained`` is False while the model was still warming up (its scores were random).
    """

    predicted: np.ndarray
    measured: np.ndarray
    trained: bool
    pairwise_accuracy: float
    spearman: float

    @staticmethod
    def of(predicted, measured, trained: bool) -> "UpdateReport":
        predicted = np.asarray(predicted, dtype=np.float64)
        measured = np.asarray(measured, dtype=np.float64)
        return UpdateReport(predicted, measured, trained,
                            metrics.pairwise_accuracy(predicted, measured),
                            metrics.spearman(predicted, measured))


def mean_run_secs(result) -> float | None:
    """Mean of a RunnerResult's ``run_secs``; None when the run failed or has no times."""
    if result is None or getattr(result, "error_msg", None):
        return None
    secs = getattr(result, "run_secs", None)
    if not secs:
        return None
    values = [float(getattr(s, "value", s)) for s in secs]
    mean = sum(values) / len(values)
    return mean if np.isfinite(mean) and mean > 0 else None


def throughputs(results) -> np.ndarray:
    """1 / mean run seconds per result, 0 for failed runs."""
    secs = [mean_run_secs(r) for r in results]
    return np.array([0.0 if s is None else 1.0 / s for s in secs])


class CostModel:
    """Base of cost models: subclass and define the four methods."""

    last_update: UpdateReport | None = None

    @property
    def scores_are_random(self) -> bool:
        """True while the model's scores carry no information (not trained yet, or a
        model that never learns): what the tuning output and dashboard tell the user."""
        return False

    def load(self, path: str) -> None:
        """Restore the state written by :meth:`save`."""
        raise NotImplementedError

    def save(self, path: str) -> None:
        """Write the model's state (learned data included) to the file ``path``."""
        raise NotImplementedError

    def update(self, context, candidates, results) -> None:
        """Learn from measured ``results`` (RunnerResults) of ``candidates``."""
        raise NotImplementedError

    def predict(self, context, candidates) -> np.ndarray:
        """One score per candidate; larger means predicted faster."""
        raise NotImplementedError

    def prepare(self, context, candidates) -> None:
        """Do ahead what :meth:`update` will need of ``candidates`` (say their features);
        the task scheduler calls it while the candidates build, when cores are idle.
        Nothing by default."""

    @staticmethod
    def create(kind: str, *args, **kwargs) -> "CostModel":
        """``CostModel.create("xgb")`` -> XGBModel(); ``"random"`` -> RandomModel()."""
        if kind == "xgb":
            from .xgb_model import XGBModel
            return XGBModel(*args, **kwargs)
        if kind == "random":
            return RandomModel(*args, **kwargs)
        raise TuningError(f"CostModel.create: unknown kind {kind!r}; expected 'xgb' or 'random'")


PyCostModel = CostModel       # TVM's name for the subclassable base


class RandomModel(CostModel):
    """Uniform random scores in ``[0, max_range)``: the search without a model.

    Parameters
    ----------
    seed
        Seed of its random generator (saved and restored with the model).
    path
        A file written by :meth:`save` to start from.
    max_range
        Upper end of the scores.
    """

    scores_are_random = True

    def __init__(self, *, seed: int | None = None, path: str | None = None,
                 max_range: int = 100):
        self.max_range = max_range
        self.rng = np.random.default_rng(seed)
        self.last_update = None
        if path is not None:
            self.load(path)

    def load(self, path: str) -> None:
        with open(path, encoding="utf-8") as f:
            self.rng.bit_generator.state = json.load(f)

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.rng.bit_generator.state, f)

    def update(self, context, candidates, results) -> None:
        self.last_update = UpdateReport.of(self.predict(context, candidates),
                                           throughputs(results), trained=False)

    def predict(self, context, candidates) -> np.ndarray:
        return self.rng.uniform(0, self.max_range, size=len(candidates))


def __getattr__(name):
    # ``ms.cost_model.XGBModel`` as in TVM; it lives in xgb_model, which builds on this one
    if name in ("XGBModel", "XGBConfig"):
        from . import xgb_model
        return getattr(xgb_model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
