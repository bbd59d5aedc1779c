"""mlcbench.runtime.timing: interleaved rounds, the best round, unsteady flags, one ratio
convention."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from mlcbench.ir.errors import RuntimeError_
from mlcbench.runtime import timing


def _scripted(*seconds):
    """A timer that returns the given per-round figures in turn, recording its calls."""
    values = iter(seconds)
    log = []

    def timer(min_repeat_ms):
        log.append(min_repeat_ms)
        return next(values)
    timer.log = log
    return timer


def test_rounds_are_interleaved_and_the_best_round_counts():
    order = []

    def recording(name, figures):
        inner = _scripted(*figures)
        return lambda ms: order.append(name) or inner(ms)
    result = timing.compare({"ours": recording("ours", [3e-3, 1e-3, 2e-3]),
                             "numpy": recording("numpy", [4e-3, 5e-3, 4e-3])},
                            rounds=3, min_repeat_ms=7, settle_ms=0)
    assert order == ["ours", "numpy"] * 3
    assert result["ours"].rounds == (3e-3, 1e-3, 2e-3) and result["ours"].best == 1e-3
    assert result.speedup("ours", "numpy") == pytest.approx(4.0)


def test_after_the_pause_each_contender_runs_untimed_before_its_batch():
    ours, numpy = _scripted(9.0, 1e-3, 9.0, 3e-3), _scripted(9.0, 2e-3, 9.0, 2e-3)
    result = timing.compare({"ours": ours, "numpy": numpy}, rounds=2, min_repeat_ms=5,
                            settle_ms=1, warm_ms=30)
    # The warm runs (9 s each) are discarded; only the batches after them count.
    assert ours.log == numpy.log == [30, 5, 30, 5]
    assert result["ours"].rounds == (1e-3, 3e-3) and result["numpy"].rounds == (2e-3, 2e-3)


def test_without_a_pause_nothing_runs_untimed():
    timer = _scripted(1e-3, 2e-3)
    result = timing.compare({"k": timer}, rounds=2, min_repeat_ms=5, settle_ms=0, warm_ms=30)
    assert timer.log == [5, 5] and result["k"].rounds == (1e-3, 2e-3)


def test_speed_ratio_says_faster_or_slower_never_a_fraction():
    assert timing.speed_ratio(3.4449, "numpy") == "3.44x faster than numpy"
    assert timing.speed_ratio(0.48, "onnxruntime") == "2.08x slower than onnxruntime"
    assert timing.speed_ratio(1.0, "numpy") == "as fast as numpy (1.00x)"
    assert timing.speed_ratio(0.996, "numpy") == "as fast as numpy (1.00x)"
    assert timing.speed_ratio(1.006, "numpy") == "1.01x faster than numpy"


def test_steady_rounds_are_not_flagged():
    result = timing.compare({"ours": _scripted(1.0e-3, 1.1e-3, 1.05e-3),
                             "numpy": _scripted(2e-3, 2.1e-3, 2.02e-3)},
                            rounds=3, settle_ms=0)
    text = result.describe("ours", "numpy")
    assert text == "ours 1 ms, numpy 2 ms: 2.00x faster than numpy"


def test_a_contender_whose_best_rounds_disagree_is_flagged():
    result = timing.compare({"ours": _scripted(1e-3, 3e-3, 2e-3),
                             "numpy": _scripted(2e-3, 2e-3, 2e-3)}, rounds=3, settle_ms=0)
    assert not result["ours"].steady and result["numpy"].steady
    assert result["ours"].disagreement == pytest.approx(1.0)
    text = result.describe("ours", "numpy")
    assert "unsteady: ours varied by more than 20%" in text and "rerun" in text


@given(st.lists(st.floats(1e-6, 1.0), min_size=1, max_size=8), st.floats(0.0, 1.0))
def test_flag_follows_the_two_best_rounds(rounds, margin):
    result = timing.compare({"k": _scripted(*rounds)}, rounds=len(rounds), settle_ms=0,
                            margin=margin)
    ordered = sorted(rounds)
    expected = len(ordered) < 2 or ordered[1] / ordered[0] - 1 <= margin
    assert result["k"].steady == expected and result["k"].best == ordered[0]


def test_real_timers_time_numpy_and_a_kernel():
    import mlcbench as tvm
    from mlcbench import te
    a = te.placeholder((64,), name="a")
    b = te.compute((64,), lambda i: a[i] * 2, name="b")
    lib = tvm.build(tvm.IRModule({"main": te.create_prim_func([a, b])}))
    x, y = tvm.nd.array(np.ones(64, "float32")), tvm.nd.empty((64,), "float32")
    result = timing.compare({"ours": timing.kernel(lib, "main", x, y),
                             "numpy": timing.call(lambda: x.numpy() * 2)},
                            rounds=2, min_repeat_ms=1, settle_ms=0)
    assert all(t.best > 0 and len(t.rounds) == 2 for t in result.timings.values())
    np.testing.assert_array_equal(y.numpy(), 2)


@pytest.mark.parametrize("contenders,rounds", [({}, 3), ({"k": _scripted()}, 0)])
def test_compare_needs_a_contender_and_a_round(contenders, rounds):
    with pytest.raises(RuntimeError_, match="at least one contender and one round"):
        timing.compare(contenders, rounds=rounds)


def test_seconds_are_printed_in_a_readable_unit():
    assert [timing.format_seconds(s) for s in (2.5, 0.0123, 6.1e-5)] == \
        ["2.50 s", "12.3 ms", "61 us"]


class _Clock:
    """Stands in for the ``time`` module: sleeping advances the wall clock, and the other
    threads of the process use a whole core until ``busy_until`` (a spinning worker)."""

    def __init__(self, busy_until: float):
        self.now, self.process, self.busy_until = 0.0, 0.0, busy_until

    def perf_counter(self):
        return self.now

    def process_time(self):
        return self.process

    def thread_time(self):
        return 0.0                              # the waiting thread itself uses nothing

    def sleep(self, seconds):
        busy = max(0.0, min(self.now + seconds, self.busy_until) - self.now)
        self.now += seconds
        self.process += busy


@pytest.mark.parametrize("busy_ms, cap_ms, expected_ms", [
    (0, 2000, 5),        # idle: one quiet window
    (100, 2000, 105),    # a spinner for 100 ms: until the first window without it
    (1000, 120, 120),    # a spinner that outlives the cap: the cap
    (100, 0, 0)])        # no settling asked for
def test_settle_waits_while_other_threads_spin_at_most_its_cap(monkeypatch, busy_ms, cap_ms,
                                                                expected_ms):
    clock = _Clock(busy_ms / 1e3)
    monkeypatch.setattr(timing, "time", clock)
    assert timing.settle(cap_ms) == pytest.approx(expected_ms / 1e3, abs=timing.QUIET_WINDOW_S)


def test_settle_sees_a_real_spinning_thread():
    import threading
    import time
    stop = threading.Event()
    thread = threading.Thread(target=lambda: [None for _ in iter(stop.is_set, True)])
    thread.start()
    try:    # the spinner never stops: the cap (thrice, in case the OS paused it a while)
        waited = max(timing.settle(50) for _ in range(3))
    finally:
        stop.set()
        thread.join()
    assert waited >= 0.05
    start = time.perf_counter()
    assert timing.settle(5000) < 1.0 and time.perf_counter() - start < 1.0
