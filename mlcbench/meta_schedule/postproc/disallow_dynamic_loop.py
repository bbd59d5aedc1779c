"""DisallowDynamicLoop: reject schedules with a loop whose extent is not a constant."""
from __future__ import annotations

from ...tir.function import PrimFunc
from ...tir.functor import post_order_visit
from ...tir.stmt import For
from ..block_analysis import const_extent
from .postproc import Postproc


class DisallowDynamicLoop(Postproc):
    """False when some loop of some PrimFunc has a symbolic extent.

    >>> DisallowDynamicLoop().apply(sch)        # doctest: +SKIP
    True
    """

    def apply(self, sch) -> bool:
        dynamic = []
        for func in sch.mod.functions.values():
            if isinstance(func, PrimFunc):
                post_order_visit(func.body, lambda n: dynamic.append(n) if isinstance(
                    n, For) and const_extent(n) is None else None)
        return not dynamic
