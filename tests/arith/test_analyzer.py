"""The Analyzer's questions: proofs, bounds, constraints, bindings."""
import pytest

from mlcbench import tir
from mlcbench.arith import Analyzer, ConstIntBound
from mlcbench.ir import IRError

i, j, n = tir.Var("i"), tir.Var("j"), tir.Var("n")


@pytest.fixture
def ana():
    analyzer = Analyzer()
    analyzer.bind(i, tir.Range(0, 16))
    analyzer.bind(j, tir.Range(0, 4))
    return analyzer


def test_const_int_bound(ana):
    assert ana.const_int_bound(i * 4 + j) == ConstIntBound(0, 63)
    assert tuple(ana.const_int_bound(i - j)) == (-3, 15)
    assert ana.const_int_bound((i * 4 + j) // 8) == ConstIntBound(0, 7)
    assert ana.const_int_bound(i % 3) == ConstIntBound(0, 2)
    assert ana.const_int_bound(tir.min(i, j)) == ConstIntBound(0, 3)
    assert ana.const_int_bound(n) == ConstIntBound(-2**31, 2**31 - 1)
    assert ana.const_int_bound(tir.SizeVar("m")).min_value == 0


def test_can_prove(ana):
    assert ana.can_prove(i * 4 + j < 64)
    assert not ana.can_prove(i * 4 + j < 63)
    assert ana.can_prove_equal((i * 4 + j) // 4, i)
    assert not ana.can_prove_equal(i, j)
    assert ana.can_prove_greater_equal(i - j, -3)
    assert ana.can_prove_less(i, 16)


def test_constraint_scope_adds_and_removes_facts(ana):
    with ana.constraint_scope(i < 10):
        assert ana.can_prove(i <= 9)
        assert ana.const_int_bound(i).max_value == 9
    assert not ana.can_prove(i <= 9)
    with ana.constraint_scope((n < 10) & (i + j < n)):
        assert ana.can_prove(i + j < n)
        assert ana.can_prove(n > i + j)
        assert ana.can_prove(i + j + 1 <= n)
        assert ana.can_prove(n <= 9)
    assert not ana.can_prove(i + j < n)


def test_symbolic_facts_are_remembered(ana):
    cond = tir.Var("flag", "bool")
    with ana.constraint_scope(cond):
        assert ana.can_prove(cond)
    with ana.constraint_scope(~cond):
        assert str(ana.simplify(cond)) == "T.bool(False)"


def test_bind_expression_substitutes(ana):
    ana.bind(n, 8)
    assert str(ana.simplify(n * 2 + i)) == "i + 16"
    with pytest.raises(IRError, match="already bound"):
        ana.bind(n, 9)
    ana.bind(n, 9, allow_override=True)
    assert ana.simplify(n).value == 9


def test_bind_symbolic_range():
    ana = Analyzer()
    m = tir.SizeVar("m")
    ana.bind(i, tir.Range(0, m))
    assert ana.can_prove(i >= 0)
    assert not ana.can_prove(i < 100)


def test_int_set_relaxes_given_vars(ana):
    k = tir.Var("k")
    s = ana.int_set(i * 4 + k, {k: tir.Range(0, 4)})
    assert str(s.min_value) == "i * 4" and str(s.max_value) == "i * 4 + 3"
