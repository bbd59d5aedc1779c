"""Integer arithmetic: simplification, bounds, interval sets and affine index maps.

The :class:`Analyzer` is the entry point, spelled as in TVM::

    from mlcbench import arith, tir
    i, j = tir.Var("i"), tir.Var("j")
    ana = arith.Analyzer()
    ana.bind(i, tir.Range(0, 16)); ana.bind(j, tir.Range(0, 4))
    ana.simplify((i * 4 + j) // 4)     # i
"""
from .analyzer import Analyzer, simplify
from .bound import ConstIntBound
from .int_set import IntSet, eval_set, intersect, union
from .iter_affine_map import (IterMapLevel, IterMapResult, IterMark, IterSplitExpr, IterSumExpr,
                              detect_iter_map, inverse_affine_iter_map, inverse_affine_map,
                              is_affine_binding, normalize_iter_map_to_expr)
