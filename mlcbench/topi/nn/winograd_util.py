"""Winograd's minimal filtering algorithm F(m, r): the transform matrices.

A 1-D correlation of ``r`` filter taps ``g`` over ``alpha = m + r - 1`` inputs ``d`` gives
``m`` outputs with ``alpha`` multiplications instead of ``m * r``::

    y = A^T [(G g) * (B^T d)]        A: alpha x m, B: alpha x alpha, G: alpha x r

The matrices come from Cook-Toom polynomial multiplication read backwards (the
transposition principle): a product of polynomials ``h = g * u`` evaluated at ``alpha``
points (``alpha - 1`` finite ones and infinity, where a polynomial's value is its leading
coefficient) and interpolated back is ``h = V_alpha^-1 [(V_r g) * (V_m u)]``, with
``V_n`` the n-column evaluation matrix. Correlation is the transpose of that product in
``u``, so ``A = V_m``, ``G = V_r`` and ``B = V_alpha^-1``. Everything is computed in exact
rationals and rounded to the working float type only at the end, so the rounding error
is that of one conversion, not of a float matrix inverse.

The finite points are the ones TVM uses (Barabasz et al., "Error analysis and improving
the accuracy of Winograd convolution", 2018): small, symmetric, and powers of two, which
keeps the entries of ``B`` and ``G`` near 1.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...ir.errors import InvalidValueError

# Finite interpolation points of F(m, 3) by tile size m (alpha - 1 points).
INTERPOLATION_POINTS = {
    2: (0, -1, 1),
    4: (0, -1, 1, Fraction(1, 2), -2),
    6: (0, -1, 1, Fraction(1, 2), Fraction(-1, 2), 2, -2),
}

TILE_SIZES = tuple(sorted(INTERPOLATION_POINTS))


def _evaluation(points, columns: int) -> list:
    """Rows ``[p^0 .. p^(columns-1)]`` for each finite point, then infinity's row."""
    rows = [[Fraction(p) ** k for k in range(columns)] for p in points]
    rows.append([Fraction(int(k == columns - 1)) for k in range(columns)])
    return rows


def _inverse(matrix: list) -> list:
    """Gauss-Jordan inverse in exact rationals (the evaluation matrix is invertible
    because the points are distinct)."""
    n = len(matrix)
    work = [list(row) + [Fraction(int(i == j)) for j in range(n)] for i, row in
            enumerate(matrix)]
    for col in range(n):
        pivot = next(r for r in range(col, n) if work[r][col] != 0)
        work[col], work[pivot] = work[pivot], work[col]
        scale = work[col][col]
        work[col] = [v / scale for v in work[col]]
        for r in range(n):
            if r != col and work[r][col] != 0:
                factor = work[r][col]
                work[r] = [a - factor * b for a, b in zip(work[r], work[col])]
    return [row[n:] for row in work]


def winograd_matrices_exact(tile_size: int, kernel_size: int = 3) -> tuple:
    """``(A, B, G)`` of F(tile_size, kernel_size) as lists of Fractions."""
    if kernel_size != 3:
        raise InvalidValueError(f"winograd: only 3-tap kernels have interpolation points "
                                f"here, found kernel size {kernel_size}")
    if tile_size not in INTERPOLATION_POINTS:
        raise InvalidValueError(f"winograd: tile size must be one of {TILE_SIZES}, found "
                                f"{tile_size!r}")
    points = INTERPOLATION_POINTS[tile_size]
    alpha = tile_size + kernel_size - 1
    a_matrix = _evaluation(points, tile_size)
    g_matrix = _evaluation(points, kernel_size)
    b_matrix = _inverse(_evaluation(points, alpha))
    return a_matrix, b_matrix, g_matrix


def winograd_transform_matrices(tile_size: int, kernel_size: int = 3,
                                dtype: str = "float32") -> tuple:
    """``(A, B, G)`` as numpy arrays of ``dtype``: A is alpha x m, B alpha x alpha,
    G alpha x r, so that ``A.T @ ((G @ g) * (B.T @ d))`` correlates ``d`` with ``g``."""
    return tuple(np.array([[float(v) for v in row] for row in m], dtype=dtype)
                 for m in winograd_matrices_exact(tile_size, kernel_size))
