"""Interval evaluation with symbolic ends."""
from mlcbench import tir
from mlcbench.arith import Analyzer, IntSet, eval_set, intersect, union

i, k, m, n = tir.Var("i"), tir.Var("k"), tir.Var("m"), tir.SizeVar("n")


def _text(s: IntSet):
    return (str(s.min_value), str(s.max_value))


def test_linear_relaxation():
    assert _text(eval_set(i * 4 + k, {k: tir.Range(0, 4)})) == ("i * 4", "i * 4 + 3")
    assert _text(eval_set(i - k, {k: tir.Range(0, 4)})) == ("i - 3", "i")
    assert _text(eval_set(k * -2, {k: tir.Range(0, 4)})) == ("-6", "0")


def test_correlated_terms_cancel_before_relaxing():
    assert _text(eval_set(k - k + i, {k: tir.Range(0, 4)})) == ("i", "i")


def test_div_mod_min_max():
    doms = {k: tir.Range(0, 16)}
    assert _text(eval_set(k // 4, doms)) == ("0", "3")
    assert _text(eval_set(k % 4, doms)) == ("0", "3")
    assert _text(eval_set((i * 16 + k) // 16, doms)) == ("i", "i")
    assert _text(eval_set(tir.min(k, 7), doms)) == ("0", "7")
    assert _text(eval_set(tir.max(k, i), doms)) == ("T.max(i, 0)", "T.max(i, 15)")


def test_symbolic_extent_and_unbounded():
    assert _text(eval_set(k, {k: tir.Range(0, n)})) == ("0", "n - 1")
    assert _text(eval_set(k * n, {k: tir.Range(0, 4)})) == ("0", "n * 3")
    assert eval_set(k * m, {k: tir.Range(0, 4)}).is_everything()     # sign of m unknown
    s = eval_set(k * k, {k: tir.Range(0, n)})
    assert s.is_everything()
    assert repr(s) == "IntSet[neg_inf, pos_inf]"


def test_union_and_intersect():
    a, b = IntSet.interval(i, i + 3), IntSet.interval(i + 1, i + 7)
    assert _text(union([a, b])) == ("i", "i + 7")
    assert _text(intersect([a, b])) == ("i + 1", "i + 3")
    assert IntSet.single_point(i).is_single_point()


def test_cover_range():
    s = eval_set(i * 4 + k, {k: tir.Range(0, 4)})
    rng = s.cover_range()
    assert str(rng.min) == "i * 4" and rng.extent.value == 4
    full = tir.Range(0, 64)
    assert IntSet.everything().cover_range(full, Analyzer()).extent.value == 64
