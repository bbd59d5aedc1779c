"""Detecting and inverting split / fuse index maps."""
from mlcbench import tir
from mlcbench.arith import (Analyzer, IterMapLevel, detect_iter_map, inverse_affine_map,
                            is_affine_binding, normalize_iter_map_to_expr)
from mlcbench.tir import Range

i0, i1, f, a, b, c, vi, vj = (tir.Var(name) for name in
                              ["i0", "i1", "f", "a", "b", "c", "vi", "vj"])
SPLIT = {i0: Range(0, 8), i1: Range(0, 4)}


def _ints(exprs):
    return [e.value for e in exprs]


def test_split_binding_is_one_fused_iterator():
    result = detect_iter_map([i0 * 4 + i1], SPLIT, check_level=IterMapLevel.BIJECTIVE)
    assert result.errors == [] and _ints(result.extents) == [32]
    assert str(normalize_iter_map_to_expr(result.indices[0])) == "i0 * 4 + i1"


def test_fused_loop_split_into_two_indices():
    result = detect_iter_map([f // 8, f % 8], {f: Range(0, 32)}, check_level="bijective")
    assert _ints(result.extents) == [4, 8]


def test_overlapping_digits_are_rejected():
    result = detect_iter_map([f // 4, f % 8], {f: Range(0, 32)})
    assert not result and "overlapping" in result.errors[0]


def test_resplit_of_a_fuse_shares_the_fused_iterator():
    indices = [(i0 * 4 + i1) // 8, (i0 * 4 + i1) % 8]
    result = detect_iter_map(indices, SPLIT, check_level="bijective")
    assert _ints(result.extents) == [4, 8]


def test_is_affine_binding():
    assert is_affine_binding([i0 * 4 + i1], SPLIT)
    assert is_affine_binding([i0 + 2, i1], SPLIT)
    assert is_affine_binding([i0], SPLIT)                  # surjective: i1 unused is fine
    assert not is_affine_binding([i0 * 4 + i1, i1], SPLIT)  # i1 used twice
    assert not is_affine_binding([i0, i1 * i0], SPLIT)      # not affine
    assert not is_affine_binding([i0 + i1], SPLIT)          # digits overlap


def test_bijective_requires_every_iterator():
    result = detect_iter_map([i0], SPLIT, check_level="bijective")
    assert not result and "i1" in result.errors[0]


def test_inverse_of_split_and_fuse():
    assert {v.name: str(e) for v, e in inverse_affine_map([i0 * 4 + i1], SPLIT, [vi]).items()} \
        == {"i0": "vi // 4", "i1": "vi % 4"}
    inverse = inverse_affine_map([f // 8, f % 8], {f: Range(0, 32)}, [vi, vj])
    assert str(inverse[f]) == "vi * 8 + vj"


def test_inverse_of_resplit_round_trips():
    doms = {a: Range(0, 2), b: Range(0, 4), c: Range(0, 8)}
    fused = a * 32 + b * 8 + c
    indices = [fused // 16, fused % 16]
    inverse = inverse_affine_map(indices, doms, [vi, vj])
    ana = Analyzer()
    for va in range(2):
        for vb in range(4):
            for vc in range(8):
                env = {a: va, b: vb, c: vc}
                outs = [ana.simplify(tir.substitute(ix, env)).value for ix in indices]
                back = {var: ana.simplify(tir.substitute(e, {vi: outs[0], vj: outs[1]})).value
                        for var, e in inverse.items()}
                assert back == env


def test_symbolic_extent_and_offsets():
    n = tir.SizeVar("n")
    doms = {i0: Range(0, 8), i1: Range(0, n)}
    assert detect_iter_map([i0 * n + i1], doms, check_level="bijective")
    inverse = inverse_affine_map([i0 + 3, i1], {i0: Range(2, 8), i1: Range(0, 4)}, [vi, vj])
    assert str(inverse[i0]) == "vi - 3"
