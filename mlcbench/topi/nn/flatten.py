"""``nn.flatten``: (N, d1, d2, ...) -> (N, d1 * d2 * ...)."""
from __future__ import annotations

from ...te.operation import compute
from ...tir import op as tir_op
from ..utils import prod


def flatten(data):
    """Collapse every axis but the first, row-major (block ``compute``)."""
    inner = data.shape[1:]
    size = prod(inner)

    def fcompute(i, j):
        idx = []
        for extent in reversed(inner):
            idx.append(tir_op.floormod(j, extent))
            j = tir_op.floordiv(j, extent)
        return data[(i,) + tuple(reversed(idx))]
    return compute((data.shape[0], size), fcompute, tag="injective")
