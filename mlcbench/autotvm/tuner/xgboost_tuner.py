"""XGBTuner: a cost model of measured configs picks which configs to measure next.

Every ``plan_size`` measurements the tuner fits gradient-boosted trees (the
meta_schedule :class:`~mlcbench.meta_schedule.xgb_model.XGBModel`, one feature row per
config) to the normalized throughput of what it measured, then searches the space for
the configs the model rates best that were not measured yet: every config when the
space is small, simulated annealing over knob positions otherwise. Until the first fit,
and for a twentieth of the picks after it, configs are drawn at random.

Features (``feature_type``):

* ``"knob"``: the knob positions of the config (cheap; the model learns per knob);
* ``"itervar"``: the config's lowered loops described by meta_schedule's
  ``PerStoreFeature``, summed over its stores (costs a lowering per config).

>>> tuner = XGBTuner(task, loss_type="rank", feature_type="knob")     # doctest: +SKIP
>>> tuner.tune(n_trial=64, measure_option=option)                   # doctest: +SKIP
"""
from __future__ import annotations

import heapq

import numpy as np

from ...ir.errors import TuningError
from .tuner import Tuner

__all__ = ["XGBTuner", "simulated_annealing"]

FEATURE_TYPES = ("knob", "itervar")
LOSS_TYPES = ("reg", "rank")


class _FeatureWidth:
    """What XGBModel reads from an extractor: the length of a feature row."""

    def __init__(self, width: int):
        self.feature_vector_length = width


class XGBTuner(Tuner):
    """Model-based tuner (see the module docstring).

    Parameters
    ----------
    plan_size
        Measurements between two fits of the model (and configs planned per fit).
    feature_type
        "knob" or "itervar".
    loss_type
        "reg" (squared error on normalized throughput) or "rank" (pairwise ranking).
    num_threads
        xgboost threads (default 1: the data are a few hundred rows, and more threads
        only wait on each other, on a busy machine 100 ms per boosting round).
    exhaustive_limit
        Spaces up to this size are scored whole; larger ones by simulated annealing.
    optimizer, diversity_filter_ratio
        TVM's: only ``"sa"`` (simulated annealing) and no diversity filter exist here;
        other values are refused.
    """

    def __init__(self, task, plan_size: int = 64, feature_type: str = "itervar",
                 loss_type: str = "reg", num_threads: int | None = None,
                 optimizer: str = "sa", diversity_filter_ratio=None, log_interval: int = 50,
                 exhaustive_limit: int | None = None, seed: int | None = None):
        if optimizer != "sa" or diversity_filter_ratio is not None:
            raise TuningError(f"XGBTuner: optimizer must be 'sa' and diversity_filter_ratio "
                              f"None, found {optimizer!r} and {diversity_filter_ratio!r}")
        super().__init__(task, seed)
        if feature_type not in FEATURE_TYPES or loss_type not in LOSS_TYPES:
            raise TuningError(f"XGBTuner: feature_type must be one of {FEATURE_TYPES} and "
                              f"loss_type one of {LOSS_TYPES}; found {feature_type!r}, "
                              f"{loss_type!r}")
        from ...meta_schedule.xgb_model import XGBConfig, XGBModel
        self.plan_size, self.feature_type = plan_size, feature_type
        # Knob features cost nothing to compute; itervar ones a lowering per config.
        self.exhaustive_limit = exhaustive_limit if exhaustive_limit is not None else \
            (20000 if feature_type == "knob" else 256)
        self._features: dict[int, np.ndarray] = {}
        width = len(self._feature(0))
        self.model = XGBModel(extractor=_FeatureWidth(width), objective=loss_type,
                              config=XGBConfig(nthread=num_threads or 1), num_warmup_samples=0,
                              num_boost_round=60, adaptive_training=False,
                              seed=int(self.rng.integers(2 ** 31)))
        self.measured = 0
        self.trials: list[int] = []
        self.fits = 0

    # -- features --------------------------------------------------------------------------
    def _feature(self, index: int) -> np.ndarray:
        # Cached per config: annealing and planning score the same configs again.
        hit = self._features.get(index)
        if hit is None:
            hit = self._features[index] = self._compute_feature(index)
        return hit

    def _compute_feature(self, index: int) -> np.ndarray:
        if self.feature_type == "knob":
            return np.array(self.space.point2knob(index), dtype=np.float32)
        from ...meta_schedule.feature_extractor import PerStoreFeature
        extractor = getattr(self, "_extractor", None) or PerStoreFeature()
        self._extractor = extractor
        try:
            rows = extractor.extract_mod(self.task.instantiate_module(self.space.get(index)))
        except Exception:        # a config the template cannot instantiate: no features
            return np.zeros(extractor.feature_vector_length, dtype=np.float32)
        return rows.sum(axis=0).astype(np.float32)

    def predict(self, indices) -> np.ndarray:
        rows = [self._feature(int(i))[None, :] for i in indices]
        return self.model.predict_features(rows)

    # -- the Tuner interface ---------------------------------------------------------------
    def next_batch(self, batch_size: int) -> list:
        batch = []
        while len(batch) < batch_size and self.has_next():
            while self.trials and self.trials[0] in self.visited:
                self.trials.pop(0)
            # One pick in twenty stays random, so a wrong model cannot hide part of the space.
            explore = not self.trials or self.rng.random() < 0.05
            batch.append(self._take(self._random_unvisited() if explore
                                    else self.trials.pop(0)))
        return batch

    def update(self, inputs, results) -> None:
        rows, secs = [], []
        for inp, result in zip(inputs, results):
            rows.append(self._feature(inp.config.index)[None, :])
            secs.append(None if result.error_no != 0 else float(np.mean(result.costs)))
        self.model.add_records(self.task.workload, rows, secs)
        self.measured += len(inputs)
        # Refit after every plan_size measurements (a plan's worth), not after every batch.
        if self.measured >= self.plan_size * (self.fits + 1):
            self.model.train()
            self.fits += 1
            if self.model.booster is not None:
                self.trials = self._plan()

    def _plan(self) -> list:
        """The ``plan_size`` unmeasured configs the model rates best."""
        size = len(self.space)
        if size <= self.exhaustive_limit:
            indices = np.array([i for i in range(size) if i not in self.visited])
            if len(indices) == 0:
                return []
            scores = self.predict(indices)
            return [int(i) for i in indices[np.argsort(-scores)[:self.plan_size]]]
        # an itervar feature costs a lowering (~10 ms): walk less than with knob features
        return simulated_annealing(self.predict, self.space, self.plan_size, self.visited,
                                   self.rng, n_iter=100 if self.feature_type == "knob" else 25)


def simulated_annealing(score, space, num: int, exclusive: set, rng, n_iter: int = 100,
                        parallel_size: int = 64, early_stop: int = 20) -> list:
    """Top-``num`` configs by ``score(indices)`` found by annealing walks that change one
    knob per step, cooling from temperature 1 to 0; ``exclusive`` ones never returned."""
    dims = [len(k) for k in space.space_map.values()]
    points = rng.integers(len(space), size=min(parallel_size, len(space)))
    scores = score(points)
    best: list = []                       # min-heap of (score, index)
    seen: set = set()

    def offer(indices, values) -> bool:
        changed = False
        for index, value in zip(indices, values):
            index = int(index)
            if index in exclusive or index in seen:
                continue
            seen.add(index)
            if len(best) < num:
                heapq.heappush(best, (float(value), index))
                changed = True
            elif value > best[0][0]:
                heapq.heapreplace(best, (float(value), index))
                changed = True
        return changed

    offer(points, scores)
    quiet = 0
    for step in range(n_iter):
        temperature = 1.0 - step / n_iter
        neighbours = np.array([_neighbour(int(p), space, dims, rng) for p in points])
        # Metropolis rule: better neighbours always, worse ones less often as it cools.
        new_scores = score(neighbours)
        accept = np.exp(np.minimum((new_scores - scores) / (temperature + 1e-5), 0)) > \
            rng.random(len(points))
        points, scores = np.where(accept, neighbours, points), \
            np.where(accept, new_scores, scores)
        quiet = 0 if offer(neighbours, new_scores) else quiet + 1
        # No new top candidate for early_stop steps: the walk has settled.
        if quiet >= early_stop:
            break
    return [index for _, index in sorted(best, reverse=True)]


def _neighbour(index: int, space, dims: list, rng) -> int:
    positions = space.point2knob(index)
    knob = int(rng.integers(len(dims)))
    positions[knob] = int(rng.integers(dims[knob]))
    return space.knob2point(positions)
