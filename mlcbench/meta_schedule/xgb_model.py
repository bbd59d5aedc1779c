"""XGBModel: gradient-boosted trees over per-store features, trained online.

Every measured candidate becomes a matrix of per-store feature rows and a run time.
Within each tuning task (workload) the target is the normalized throughput
``min(run time) / run time`` (1.0 for the fastest, 0 for a failed run). A candidate's
score is the **sum of the per-store predictions** of one tree ensemble, as in TVM: the
trees see single stores, while the loss sees whole candidates. The default loss is a
pairwise ranking loss (``objective="rank"``: logistic loss on the score difference of
sampled pairs of candidates of one task, what ``rank:pairwise`` does for single rows);
``objective="reg"`` fits the sums to the targets by squared error instead.
``aggregate="candidate"`` is the alternative without a custom loss: one row per
candidate (sum and max of its store rows) and xgboost's own ``rank:pairwise`` /
``reg:squarederror``. The defaults are what measured best on
``benchmarks/cost_model.py --schedules 3000`` (3,000 PostOrderApply candidates, half
held out; pairwise accuracy on matmul / conv2d): rank + pack-sum 0.85 / 0.82, squared
error + pack-sum 0.80 / 0.77, rank per candidate 0.63 / 0.64, squared error per
candidate 0.85 / 0.78.

Until ``num_warmup_samples`` results have arrived, ``predict`` returns random scores::

    >>> model = XGBModel(num_warmup_samples=64)
    >>> model.predict(context, candidates)           # doctest: +SKIP
    >>> model.update(context, candidates, results)   # doctest: +SKIP
    >>> model.last_update.pairwise_accuracy          # doctest: +SKIP
    >>> model.save("cost_model.npz"); XGBModel(path="cost_model.npz")   # doctest: +SKIP

xgboost is imported on first training or prediction, so ``import mlcbench`` stays fast.
"""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass

import numpy as np

from ..ir.errors import TuningError
from .cost_model import CostModel, UpdateReport, mean_run_secs, throughputs
from .feature_extractor import PerStoreFeature

__all__ = ["XGBConfig", "XGBModel"]

_OBJECTIVES = ("rank", "reg")
_AGGREGATES = ("pack-sum", "candidate")


@dataclass(frozen=True)
class XGBConfig:
    """Tree-booster settings (TVM's defaults); ``nthread=None`` uses every core."""

    max_depth: int = 10
    gamma: float = 0.001
    min_child_weight: float = 0.0
    eta: float = 0.2
    nthread: int | None = None

    def params(self) -> dict:
        params = {"max_depth": self.max_depth, "gamma": self.gamma,
                  "min_child_weight": self.min_child_weight, "eta": self.eta,
                  "verbosity": 0}
        params["nthread"] = self.nthread or os.cpu_count() or 1
        return params


def require_xgboost() -> None:
    """Fail when tuning starts, not at the first training (trial 64 or 100), where xgboost
    is missing."""
    try:
        import xgboost  # noqa: F401
    except ImportError as err:
        raise TuningError("the XGBoost cost model needs the xgboost package, which is not "
                          f"installed ({err}): pip install 'mlcbench[tune]' (or xgboost-cpu), "
                          "or tune with cost_model='random'") from None


class XGBModel(CostModel):
    """Gradient-boosted trees on per-store features (TVM's ``ms.cost_model.XGBModel``).

    Parameters
    ----------
    extractor
        Feature extractor (default :class:`PerStoreFeature`).
    config
        Booster settings.
    num_warmup_samples
        Results to collect before the model trains and predicts (random scores before).
    objective
        ``"rank"`` (pairwise ranking of candidates of one task) or ``"reg"``.
    aggregate
        ``"pack-sum"`` (score = sum of per-store predictions) or ``"candidate"``.
    num_boost_round
        Trees per training.
    pairs_per_candidate
        Partners sampled for each candidate by the pack-sum ranking loss.
    adaptive_training
        Retrain only when the data grew by a fifth since the last training.
    seed
        Seed of the pair sampling and of the warm-up scores.
    path
        A file written by :meth:`save` to start from.
    """

    def __init__(self, *, extractor=None, config: XGBConfig = XGBConfig(),
                 num_warmup_samples: int = 100, objective: str = "rank",
                 aggregate: str = "pack-sum", num_boost_round: int = 100,
                 pairs_per_candidate: int = 32, adaptive_training: bool = True, seed: int = 0,
                 path: str | None = None):
        require_xgboost()
        if objective not in _OBJECTIVES or aggregate not in _AGGREGATES:
            raise TuningError(f"XGBModel: objective must be one of {_OBJECTIVES} and aggregate "
                              f"one of {_AGGREGATES}; found {objective!r}, {aggregate!r}")
        self.extractor = extractor if extractor is not None else PerStoreFeature()
        self.config = config
        self.num_warmup_samples = num_warmup_samples
        self.objective, self.aggregate = objective, aggregate
        self.num_boost_round = num_boost_round
        self.pairs_per_candidate = pairs_per_candidate
        self.adaptive_training = adaptive_training
        self.rng = np.random.default_rng(seed)
        self.booster = None
        self.trained_size = 0
        self.group_keys: list = []            # task keys, in order of first appearance
        self.groups: list = []                # per measured candidate: index in group_keys
        self.features: list = []              # per measured candidate: (stores, features)
        self.costs: list = []                 # per measured candidate: seconds, inf if failed
        self.last_update = None
        if path is not None:
            self.load(path)

    @property
    def data_size(self) -> int:
        return len(self.costs)

    # -- the CostModel interface -----------------------------------------------------------
    def update(self, context, candidates, results) -> None:
        if len(candidates) != len(results):
            raise TuningError(f"XGBModel.update: {len(candidates)} candidates but "
                              f"{len(results)} results")
        features = self.extractor.extract_from(context, candidates)
        trained = self.booster is not None
        # Predicted before these results are added, so the report measures real foresight.
        predicted = self.predict_features(features) if trained else np.zeros(len(features))
        self.last_update = UpdateReport.of(predicted, throughputs(results), trained)
        self.add_records(_workload_key(context), features,
                         [mean_run_secs(r) for r in results])
        # Retrain only when the data grew by a fifth: a fit costs more as the data grows.
        grown = self.data_size - self.trained_size >= self.trained_size / 5
        if self.data_size >= self.num_warmup_samples and (grown or not self.adaptive_training):
            self.train()

    def prepare(self, context, candidates) -> None:
        """Extract the features :meth:`update` will read (the extractor keeps them)."""
        self.extractor.extract_from(context, candidates)

    @property
    def scores_are_random(self) -> bool:
        """Random scores until ``num_warmup_samples`` results trained a booster."""
        return self.booster is None or self.data_size < self.num_warmup_samples

    def predict(self, context, candidates) -> np.ndarray:
        if self.scores_are_random:
            return self.rng.uniform(0, 1, size=len(candidates))
        return self.predict_features(self.extractor.extract_from(context, candidates))

    # -- data and training -------------------------------------------------------------------
    def add_records(self, key, features: list, run_secs: list) -> None:
        """Keep measured candidates of task ``key`` (``None`` seconds: a failed run)."""
        if key not in self.group_keys:
            self.group_keys.append(key)
        group = self.group_keys.index(key)
        for matrix, secs in zip(features, run_secs):
            self.groups.append(group)
            self.features.append(np.asarray(matrix, dtype=np.float32))
            self.costs.append(float("inf") if secs is None else float(secs))

    def targets(self) -> np.ndarray:
        """Normalized throughput per measured candidate: best time of its task / its time."""
        costs, groups = np.array(self.costs), np.array(self.groups)
        best = np.full(len(self.group_keys), np.inf)
        np.minimum.at(best, groups, costs)
        with np.errstate(invalid="ignore", divide="ignore"):
            result = best[groups] / costs
        # A failed run (inf seconds) scores 0; a task with no success yet scores 0 throughout.
        return np.nan_to_num(result, nan=0.0, posinf=0.0)

    def train(self) -> None:
        """Fit a new booster on every record (no-op while all targets are equal)."""
        import xgboost as xgb
        targets, groups = self.targets(), np.array(self.groups)
        # Equal targets carry no ranking to learn.
        if len(np.unique(targets)) < 2:
            return
        # base_score 0: a candidate's score is a sum over its stores, which a constant would skew.
        params = {**self.config.params(), "base_score": 0.0, "seed": 0}
        if self.aggregate == "pack-sum":
            rows, owner = _stack(self.features, self.extractor)
            objective = _PackSum(owner, targets, self._pairs(groups, targets)
                                 if self.objective == "rank" else None)
            params["disable_default_eval_metric"] = 1
            dtrain = xgb.DMatrix(rows, label=np.zeros(len(rows)))
            self.booster = xgb.train(params, dtrain, self.num_boost_round, obj=objective)
        else:
            # xgboost's ranking wants the rows of a query group contiguous.
            order = np.argsort(groups, kind="stable")
            rows = _per_candidate(self.features, self.extractor)[order]
            params["objective"] = "rank:pairwise" if self.objective == "rank" \
                else "reg:squarederror"
            dtrain = xgb.DMatrix(rows, label=targets[order], qid=groups[order])
            self.booster = xgb.train(params, dtrain, self.num_boost_round)
        self.trained_size = self.data_size

    def predict_features(self, features: list) -> np.ndarray:
        """Scores of candidates given their feature matrices (needs a trained booster)."""
        import xgboost as xgb
        if self.aggregate == "candidate":
            rows = _per_candidate(features, self.extractor)
            return self.booster.predict(xgb.DMatrix(rows)).astype(np.float64)
        rows, owner = _stack(features, self.extractor)
        if len(rows) == 0:
            return np.zeros(len(features))
        per_store = self.booster.predict(xgb.DMatrix(rows))
        # A candidate's score is the sum of its stores' predictions.
        return np.bincount(owner, weights=per_store, minlength=len(features))

    def _pairs(self, groups: np.ndarray, targets: np.ndarray) -> tuple:
        """Sampled (better, worse) index pairs within each task."""
        better, worse = [], []
        for group in np.unique(groups):
            members = np.flatnonzero(groups == group)
            first = np.repeat(members, self.pairs_per_candidate)
            second = self.rng.choice(members, size=first.size)
            # Pairs of equal throughput say nothing about order.
            keep = targets[first] != targets[second]
            first, second = first[keep], second[keep]
            swap = targets[first] < targets[second]
            better.append(np.where(swap, second, first))
            worse.append(np.where(swap, first, second))
        return np.concatenate(better), np.concatenate(worse)

    # -- persistence ---------------------------------------------------------------------------
    def save(self, path: str) -> None:
        """Write the booster and every record to ``path`` (a NumPy ``.npz`` archive)."""
        rows, _ = _stack(self.features, self.extractor)
        booster = np.frombuffer(bytes(self.booster.save_raw("ubj")), dtype=np.uint8) \
            if self.booster is not None else np.zeros(0, dtype=np.uint8)
        meta = {"trained_size": self.trained_size, "group_keys": self.group_keys,
                "feature_vector_length": rows.shape[1], "objective": self.objective,
                "aggregate": self.aggregate, "config": dataclasses.asdict(self.config)}
        with open(path, "wb") as f:
            np.savez(f, booster=booster, rows=rows, groups=np.array(self.groups, dtype=np.int64),
                     row_counts=np.array([len(m) for m in self.features], dtype=np.int64),
                     costs=np.array(self.costs, dtype=np.float64), meta=np.array(json.dumps(meta)))

    def load(self, path: str) -> None:
        """Restore what :meth:`save` wrote (the booster and the records)."""
        with np.load(path, allow_pickle=False) as archive:
            meta = json.loads(str(archive["meta"]))
            expected = _feature_length(self.extractor)
            if expected is not None and meta["feature_vector_length"] != expected:
                raise TuningError(f"XGBModel.load: {path} holds features of length "
                                  f"{meta['feature_vector_length']}, the extractor makes "
                                  f"{expected}")
            splits = np.cumsum(archive["row_counts"])[:-1]
            self.features = list(np.split(archive["rows"], splits))
            self.groups = archive["groups"].tolist()
            self.costs = archive["costs"].tolist()
            raw = archive["booster"].tobytes()
        self.group_keys = meta["group_keys"]
        self.trained_size = meta["trained_size"]
        self.booster = None
        if raw:
            import xgboost as xgb
            self.booster = xgb.Booster(params=self.config.params())
            self.booster.load_model(bytearray(raw))


class _PackSum:
    """Custom xgboost objective on per-candidate sums of per-store predictions.

    ``pairs`` given: pairwise logistic loss ``log(1 + exp(-(s_better - s_worse)))``,
    each candidate's gradient and curvature averaged over the pairs it was sampled in
    (so its weight does not depend on how often it was drawn, and xgboost's L2 term damps
    a step as for a single row: 0.88 against 0.78 held-out pairwise accuracy on the
    synthetic task of the tests); otherwise squared error ``(s - target)^2 / 2``. Each
    store row gets the gradient of its candidate's sum (d sum / d row = 1) and the same
    diagonal Hessian.
    """

    def __init__(self, owner: np.ndarray, targets: np.ndarray, pairs):
        self.owner, self.targets, self.pairs = owner, targets, pairs
        if pairs is not None:
            n = len(targets)
            self.pair_counts = np.bincount(pairs[0], minlength=n) + \
                np.bincount(pairs[1], minlength=n)

    def __call__(self, predictions, dtrain):
        n = len(self.targets)
        sums = np.bincount(self.owner, weights=predictions, minlength=n)
        if self.pairs is None:
            grad, hess = sums - self.targets, np.ones(n)
        else:
            better, worse = self.pairs
            # Clipped so exp cannot overflow on a confident pair.
            p = 1.0 / (1.0 + np.exp(np.clip(sums[better] - sums[worse], -50, 50)))
            curvature = p * (1.0 - p)
            grad = np.bincount(worse, p, n) - np.bincount(better, p, n)
            hess = np.bincount(better, curvature, n) + np.bincount(worse, curvature, n)
            sampled = np.maximum(self.pair_counts, 1)
            grad, hess = grad / sampled, hess / sampled
        # A floor on the Hessian: xgboost divides by it.
        return grad[self.owner], np.maximum(hess[self.owner], 1e-6)


def _feature_length(extractor) -> int | None:
    return getattr(extractor, "feature_vector_length", None)


def _stack(features: list, extractor) -> tuple:
    """All store rows in one matrix, and the candidate each row belongs to."""
    width = _feature_length(extractor) or (features[0].shape[1] if features else 0)
    counts = [len(m) for m in features]
    rows = np.concatenate(features) if sum(counts) else np.zeros((0, width), np.float32)
    return rows, np.repeat(np.arange(len(features)), counts)


def _per_candidate(features: list, extractor) -> np.ndarray:
    """One row per candidate: the sum and the max of its store rows."""
    width = _feature_length(extractor) or features[0].shape[1]
    out = np.zeros((len(features), 2 * width), np.float32)
    for i, matrix in enumerate(features):
        if len(matrix):
            out[i, :width], out[i, width:] = matrix.sum(axis=0), matrix.max(axis=0)
    return out


def _workload_key(context) -> str:
    """Records of different tasks are normalized apart: key them by the task's module."""
    mod = getattr(context, "mod", None)
    if mod is None:
        return "default"
    from ..ir.structural import structural_hash
    return f"{structural_hash(mod):x}"
