"""Ranking metrics against their brute-force definitions."""
import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcbench.meta_schedule import metrics

# small value sets so that ties happen often
values = st.lists(st.integers(0, 6).map(float), min_size=1, max_size=12)


def paired(draw_lists=values):
    return draw_lists.flatmap(lambda m: st.tuples(
        st.lists(st.integers(0, 6).map(float), min_size=len(m), max_size=len(m)),
        st.just(m)))


def brute_pairwise(pred, measured, groups):
    agree = total = 0
    for i, j in itertools.combinations(range(len(pred)), 2):
        if groups[i] != groups[j] or measured[i] == measured[j]:
            continue
        total += 1
        if pred[i] == pred[j]:
            agree += 0.5
        elif (pred[i] > pred[j]) == (measured[i] > measured[j]):
            agree += 1
    return agree / total if total else 0.5


def brute_top(pred, k):
    return sorted(range(len(pred)), key=lambda i: (-pred[i], i))[:k]


def brute_rank(xs, i):
    less = sum(x < xs[i] for x in xs)
    equal = sum(x == xs[i] for x in xs)
    return less + (equal + 1) / 2


def brute_spearman(pred, measured):
    n = len(pred)
    a = [brute_rank(pred, i) for i in range(n)]
    b = [brute_rank(measured, i) for i in range(n)]
    ma, mb = sum(a) / n, sum(b) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    var = math.sqrt(sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))
    return cov / var if var else 0.0


def brute_kendall(pred, measured):
    concordant = discordant = ties_pred = ties_measured = pairs = 0
    for i, j in itertools.combinations(range(len(pred)), 2):
        pairs += 1
        dp, dm = pred[i] - pred[j], measured[i] - measured[j]
        ties_pred += dp == 0
        ties_measured += dm == 0
        concordant += dp * dm > 0
        discordant += dp * dm < 0
    denominator = math.sqrt((pairs - ties_pred) * (pairs - ties_measured))
    return (concordant - discordant) / denominator if denominator else 0.0


def test_examples_from_the_docstring():
    pred, measured = [0.1, 0.9, 0.5, 0.3], [1.0, 4.0, 2.0, 3.0]
    assert metrics.pairwise_accuracy(pred, measured) == pytest.approx(5 / 6)
    assert metrics.top_k_recall(pred, measured, 1) == 1.0
    assert metrics.top_k_recall(pred, measured, 2) == 0.5
    assert metrics.peak_at_k([0.9, 0.1], [1.0, 4.0], 1) == 0.25
    assert metrics.spearman(pred, measured) == pytest.approx(0.8)
    assert list(metrics.ranks([3, 1, 3])) == [2.5, 1.0, 2.5]


@settings(max_examples=150, deadline=None)
@given(paired(), st.data())
def test_pairwise_accuracy(pair, data):
    pred, measured = pair
    groups = data.draw(st.lists(st.integers(0, 2), min_size=len(pred), max_size=len(pred)))
    assert metrics.pairwise_accuracy(pred, measured) == \
        pytest.approx(brute_pairwise(pred, measured, [0] * len(pred)))
    assert metrics.pairwise_accuracy(pred, measured, groups=groups) == \
        pytest.approx(brute_pairwise(pred, measured, groups))


@settings(max_examples=150, deadline=None)
@given(paired(), st.integers(1, 6))
def test_top_k_recall_and_peak(pair, k):
    pred, measured = pair
    k_eff = min(k, len(pred))
    kth_best = sorted(measured, reverse=True)[k_eff - 1]
    top = brute_top(pred, k_eff)
    assert metrics.top_k_recall(pred, measured, k) == \
        pytest.approx(sum(measured[i] >= kth_best for i in top) / k_eff)
    expected_peak = max(measured[i] for i in top) / max(measured) if max(measured) > 0 else 0.0
    assert metrics.peak_at_k(pred, measured, k) == pytest.approx(expected_peak)


@settings(max_examples=150, deadline=None)
@given(paired())
def test_rank_correlations(pair):
    pred, measured = pair
    assert metrics.spearman(pred, measured) == pytest.approx(brute_spearman(pred, measured))
    assert metrics.kendall_tau(pred, measured) == pytest.approx(brute_kendall(pred, measured))


def test_perfect_and_reversed_orders():
    measured = [1.0, 2.0, 3.0, 4.0, 5.0]
    for metric in (metrics.pairwise_accuracy, metrics.spearman, metrics.kendall_tau):
        assert metric(measured, measured) == pytest.approx(1.0)
    assert metrics.pairwise_accuracy(measured[::-1], measured) == 0.0
    assert metrics.spearman(measured[::-1], measured) == pytest.approx(-1.0)


def test_length_mismatch_is_refused():
    with pytest.raises(ValueError, match="same length"):
        metrics.spearman([1.0, 2.0], [1.0])
