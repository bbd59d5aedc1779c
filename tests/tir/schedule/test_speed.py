"""Applying a primitive and re-printing a small function must feel instant (< 50 ms
measured; the bound here is generous so a loaded CI machine does not flake)."""
import time

from mlcbench.tir import Schedule
from helpers.schedule_testing import make_matmul


matmul = make_matmul(128, 128, 128)


def apply_and_print():
    sch = Schedule(matmul)
    _, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    return sch.mod.script() + str(sch.trace)


def test_primitive_plus_print_is_fast():
    apply_and_print()
    timings = []
    for _ in range(5):
        start = time.perf_counter()
        apply_and_print()
        timings.append(time.perf_counter() - start)
    assert min(timings) < 0.2, f"best of 5: {min(timings) * 1000:.1f} ms"
