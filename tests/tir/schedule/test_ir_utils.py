"""ir_utils.find_first: the first node in pre-order, its parents, and an early stop."""
from helpers.schedule_testing import make_matmul

from mlcbench.tir import Schedule
from mlcbench.tir.schedule.ir_utils import find_all, find_first, find_loop
from mlcbench.tir.stmt import BlockRealize, For


def _scheduled():
    sch = Schedule(make_matmul(16, 16, 16))
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.split(i, [None, 4])
    return sch.mod["main"]


def test_find_first_is_the_first_hit_of_find_all_with_the_same_parents():
    func = _scheduled()
    for predicate in (lambda n: isinstance(n, For), lambda n: isinstance(n, BlockRealize)):
        first, every = find_first(func.body, predicate), find_all(func, predicate)
        assert first.node is every[0].node and first.parents == every[0].parents


def test_find_first_stops_at_the_hit_and_says_none_when_nothing_matches():
    func = _scheduled()
    seen = []
    outer = find_first(func.body, lambda n: seen.append(n) or isinstance(n, For))
    total = []
    find_all(func, lambda n: total.append(n) or False)
    assert isinstance(outer.node, For) and len(seen) < len(total)
    assert find_first(func.body, lambda n: False) is None
    innermost = find_all(func, lambda n: isinstance(n, For))[-1].node
    located = find_loop(func, innermost.loop_var, "test")
    assert located.node is innermost and [p.loop_var.name for p in located.loops()] == [
        "i_0", "i_1", "j"]
