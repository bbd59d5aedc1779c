"""Golden simplifications: one rule per line, printed as TVMScript expressions."""
import pytest

from mlcbench import tir
from mlcbench.arith import Analyzer
from mlcbench.ir import assert_structural_equal
from mlcbench.tir import expr as E

i, j, k, x = (tir.Var(name) for name in "ijkx")
n = tir.SizeVar("n")


@pytest.fixture
def ana():
    analyzer = Analyzer()
    analyzer.bind(i, tir.Range(0, 16))
    analyzer.bind(j, tir.Range(0, 4))
    analyzer.bind(k, tir.Range(0, 8))
    return analyzer


GOLDEN = [
    # identities and constant folding
    (lambda: x * 1 + 0, "x"),
    (lambda: E.Mul(x, E.const(0), x.dtype), "0"),
    (lambda: x - x, "0"),
    (lambda: tir.min(x, x), "x"),
    (lambda: E.Add(E.const(2), E.const(3), x.dtype) * x, "x * 5"),
    # canonical order: larger coefficients first, otherwise the user's order
    (lambda: j + i * 4, "i * 4 + j"),
    (lambda: i + j, "i + j"),
    (lambda: j + i, "j + i"),
    (lambda: (i + 1) * 4 - 4, "i * 4"),
    (lambda: (i * 4 + j) - i * 4, "j"),
    (lambda: n - i * 4 + 2, "n - i * 4 + 2"),
    # no growth: the factored form stays
    (lambda: (i + j) * 4, "(i + j) * 4"),
    # floordiv / floormod
    (lambda: (i * 4 + j) // 4, "i"),
    (lambda: (i * 4 + j) % 4, "j"),
    (lambda: x // 1, "x"),
    (lambda: x % 1, "0"),
    (lambda: (x // 4) // 8, "x // 32"),
    (lambda: (x % 8) % 4, "x % 4"),
    (lambda: (x * 6) // 6, "x"),
    (lambda: j % 4, "j"),
    (lambda: j // 4, "0"),
    (lambda: (x // 8) * 8 + x % 8, "x"),
    (lambda: (i * 4 + j) // 8, "i // 2"),
    (lambda: (i * 32 + j * 8 + k) // 32 * 128 + (i * 32 + j * 8 + k) % 32, "i * 128 + j * 8 + k"),
    (lambda: (i * 4 + j + 8) // 4, "i + 2"),
    (lambda: E.Div(i * 4 + j, E.const(4), i.dtype), "i"),
    # comparisons, logic, min/max, select
    (lambda: i < 16, "T.bool(True)"),
    (lambda: i * 4 + j < 64, "T.bool(True)"),
    (lambda: i >= 16, "T.bool(False)"),
    (lambda: i + 1 < 5, "i < 4"),
    (lambda: ~(x < 3), "x >= 3"),
    (lambda: (i < 16) & (x < 3), "x < 3"),
    (lambda: (i < 0) | (x < 3), "x < 3"),
    (lambda: tir.min(i, 16), "i"),
    (lambda: tir.max(i, 20), "20"),
    (lambda: tir.min(tir.min(x, 4), 8), "T.min(x, 4)"),
    (lambda: E.Select(j < 4, i, x), "i"),
    (lambda: tir.if_then_else(i >= 16, x, i), "i"),
]


@pytest.mark.parametrize("build, expected", GOLDEN, ids=[g[1] for g in GOLDEN])
def test_golden(ana, build, expected):
    assert str(ana.simplify(build())) == expected


def test_floor_div_rules_structurally(ana):
    assert_structural_equal(ana.simplify((i * 4 + j) // 4), i)
    assert_structural_equal(ana.simplify((i * 4 + j) % 8), (i % 2) * 4 + j)


def test_int64_keeps_dtype():
    a, b = tir.Var("a", "int64"), tir.Var("b", "int64")
    ana = Analyzer()
    ana.bind(b, tir.Range(E.const(0, "int64"), E.const(4, "int64")))
    result = ana.simplify((a * 4 + b) // 4)
    assert result is a
    result = ana.simplify((a * 4 + b) % 4 + a)
    assert result.dtype == "int64" and str(result) == "b + a"


def test_floats_are_only_folded():
    f = tir.Var("f", "float32")
    expr = (f + E.const(1.0)) - E.const(1.0)
    assert Analyzer().simplify(expr) is expr
    folded = Analyzer().simplify(E.Add(E.const(1.5), E.const(2.0), E.const(1.5).dtype) * f)
    assert_structural_equal(folded, E.const(3.5) * f)


def test_let_of_constant_is_inlined():
    expr = E.Let(x, E.const(3), x * 4 + 1)
    assert str(Analyzer().simplify(expr)) == "13"


def test_unknown_sign_blocks_division_rule():
    # x may be negative: (x * 4 + 3) // 4 is x, but (x * 4 + y) // 4 is not, y unknown
    y = tir.Var("y")
    assert str(Analyzer().simplify((x * 4 + y) // 4)) == "x + y // 4"
    assert str(Analyzer().simplify((x * 4 + 3) // 4)) == "x"


def test_simplify_is_fast(ana):
    """Catches a rule set that blows up (seconds per call), not a slow machine: about
    0.7 ms per call on a quiet 2-core host, and 3-6 ms seen on a loaded one, so the
    bound is 20 ms (the speed itself is a benchmark's business)."""
    import time
    expr = ((i * 4 + j) * 8 + k) // 32 * 128 + ((i * 4 + j) * 8 + k) % 32
    start = time.perf_counter()
    for _ in range(100):
        ana.simplify(expr)
    per_call = (time.perf_counter() - start) / 100
    assert per_call < 2e-2, f"{per_call * 1e6:.0f} us per simplification"
    start = time.perf_counter()
    for _ in range(100):
        ana.simplify((i * 4 + j) // 4)
    assert (time.perf_counter() - start) / 100 < 5e-3


@pytest.mark.parametrize("choose", ["if_then_else", "select"])
def test_decided_condition_simplifies_only_the_branch_taken(ana, monkeypatch, choose):
    """``i < 16`` holds (i in [0, 16)): the result is the simplified true branch, and the
    false branch is never visited (an unrolled Winograd transform chooses among 36
    expressions this way, once per copy)."""
    from mlcbench.arith.simplify import ExprSimplifier
    taken, untaken = (i * 4 + j) // 4, (k * 8 + j) // 8
    build = tir.if_then_else if choose == "if_then_else" else \
        (lambda c, a, b: E.Select(c, a, b))
    expr = build(i < 16, taken, untaken)
    seen = []
    visit = ExprSimplifier.visit

    def recording(self, node):
        seen.append(node)
        return visit(self, node)
    monkeypatch.setattr(ExprSimplifier, "visit", recording)
    assert str(ana.simplify(expr)) == "i"
    assert any(node is taken for node in seen)
    assert not any(node is untaken for node in seen)
    # Undecided, both branches are simplified.
    seen.clear()
    assert str(ana.simplify(build(x < 16, taken, untaken))).count("//") == 0
    assert any(node is untaken for node in seen)
