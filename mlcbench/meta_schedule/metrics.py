"""How well predicted scores rank measured ones (larger is better on both sides).

A cost model only has to *order* candidates: the search measures what it ranks high.
So these metrics compare orders, not values::

    >>> pred = [0.1, 0.9, 0.5, 0.3]
    >>> measured = [1.0, 4.0, 2.0, 3.0]           # e.g. GFLOPS
    >>> pairwise_accuracy(pred, measured)          # 5 of the 6 pairs in the same order
    0.8333333333333334
    >>> top_k_recall(pred, measured, k=1)          # the best candidate is predicted best
    1.0
    >>> round(spearman(pred, measured), 3)
    0.8

Ties: a pair with equal measured values carries no order and is skipped; a pair with
equal predictions counts one half. Top-k sets are taken after a stable sort, and a
predicted top-k candidate counts as a hit when it measures at least the k-th best value.
"""
from __future__ import annotations

import numpy as np

from ..ir.errors import InvalidValueError

__all__ = ["kendall_tau", "pairwise_accuracy", "peak_at_k", "ranks", "spearman",
           "top_k_recall"]


def _arrays(pred, measured):
    pred = np.asarray(pred, dtype=np.float64).ravel()
    measured = np.asarray(measured, dtype=np.float64).ravel()
    if pred.shape != measured.shape:
        raise InvalidValueError(f"metrics: predictions ({pred.size}) and measurements "
                                f"({measured.size}) must have the same length")
    return pred, measured


def pairwise_accuracy(pred, measured, groups=None) -> float:
    """Fraction of pairs (different measured values) the predictions order correctly.

    With ``groups`` (one label per candidate, e.g. the task), only pairs within a group
    count. Returns 0.5 (chance) when no pair has an order.
    """
    pred, measured = _arrays(pred, measured)
    labels = np.zeros(pred.size) if groups is None else np.asarray(groups).ravel()
    agree, total = 0.0, 0
    for label in np.unique(labels):
        mask = labels == label
        p, m = pred[mask], measured[mask]
        dm = np.sign(m[:, None] - m[None, :])
        dp = np.sign(p[:, None] - p[None, :])
        ordered = np.triu(dm != 0, k=1)
        total += int(ordered.sum())
        agree += float(np.where(dp == 0, 0.5, dp == dm)[ordered].sum())
    return agree / total if total else 0.5


def _top(values, k: int) -> np.ndarray:
    return np.argsort(-values, kind="stable")[:k]


def top_k_recall(pred, measured, k: int) -> float:
    """Share of the predicted top ``k`` that belongs to the measured top ``k``."""
    pred, measured = _arrays(pred, measured)
    k = min(k, pred.size)
    if k <= 0:
        return 0.0
    kth_best = np.sort(measured)[::-1][k - 1]
    return float(np.sum(measured[_top(pred, k)] >= kth_best)) / k


def peak_at_k(pred, measured, k: int) -> float:
    """Best measured value among the predicted top ``k``, over the best overall
    (XGBoost's ``a-peak@k`` in TVM): 1.0 when the search would find the best in k trials."""
    pred, measured = _arrays(pred, measured)
    if pred.size == 0 or measured.max() <= 0:
        return 0.0
    return float(measured[_top(pred, max(k, 1))].max() / measured.max())


def ranks(values) -> np.ndarray:
    """1-based ranks, ties sharing the mean of their positions (``[3, 1, 3]`` -> 2.5, 1, 2.5)."""
    values = np.asarray(values, dtype=np.float64).ravel()
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    starts = np.r_[True, sorted_values[1:] != sorted_values[:-1]]
    group = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    last = np.r_[first[1:], values.size] - 1
    result = np.empty(values.size)
    result[order] = (first[group] + last[group]) / 2.0 + 1.0
    return result


def spearman(pred, measured) -> float:
    """Spearman's rank correlation (Pearson's on tie-averaged ranks); 0 when undefined."""
    pred, measured = _arrays(pred, measured)
    if pred.size < 2:
        return 0.0
    a, b = ranks(pred) - (pred.size + 1) / 2, ranks(measured) - (pred.size + 1) / 2
    denominator = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / denominator) if denominator > 0 else 0.0


def kendall_tau(pred, measured) -> float:
    """Kendall's tau-b: (concordant - discordant) over the tie-corrected pair count."""
    pred, measured = _arrays(pred, measured)
    dp = np.sign(pred[:, None] - pred[None, :])
    dm = np.sign(measured[:, None] - measured[None, :])
    upper = np.triu(np.ones(dp.shape, dtype=bool), k=1)
    score = float((dp * dm)[upper].sum())
    denominator = np.sqrt(float((dp != 0)[upper].sum()) * float((dm != 0)[upper].sum()))
    return score / denominator if denominator > 0 else 0.0
