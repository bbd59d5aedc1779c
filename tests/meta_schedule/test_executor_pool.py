"""ExecutorPool over a concurrent.futures executor: outcomes in order, and a batch that
hears nothing back for ``patience_sec`` gives up on the calls still out instead of
waiting forever. (The Dask backend is tested in test_dask_runner.py.)"""
import concurrent.futures
import operator
import threading
import time

import pytest

from mlcbench.ir import TuningError
from mlcbench.meta_schedule.executor_pool import ExecutorPool


def _wait_for(event: threading.Event) -> str:
    event.wait(30)
    return "released"


def test_outcomes_come_back_in_order():
    with concurrent.futures.ThreadPoolExecutor(2) as executor:
        pool = ExecutorPool(executor, isolate=False)
        outcomes = pool.map(operator.add, [(1, 2), (3, 4), ("a", 1)])
    assert [o.status for o in outcomes] == ["ok", "ok", "error"]
    assert [o.value for o in outcomes[:2]] == [3, 7]
    assert "TypeError" in outcomes[2].message


def test_a_batch_that_hears_nothing_back_gives_up_on_the_calls_still_out():
    stuck = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(1) as executor:
        pool = ExecutorPool(executor, isolate=False, patience_sec=0.5)
        started = time.perf_counter()
        quick, waiting, queued = pool.map(
            lambda x: x() if callable(x) else x,
            [(5,), (lambda: _wait_for(stuck),), (6,)])
        waited = time.perf_counter() - started
        stuck.set()
    assert quick.ok and quick.value == 5
    assert waiting.status == queued.status == "timeout"
    assert "no call for 0.5 s (patience_sec)" in waiting.message
    assert waited < 10


def test_patience_defaults_from_the_time_limit_and_must_be_positive():
    with concurrent.futures.ThreadPoolExecutor(1) as executor:
        assert ExecutorPool(executor, timeout_sec=30).patience_sec == 180
        assert ExecutorPool(executor).patience_sec == 600
        with pytest.raises(TuningError, match="patience_sec must be positive, found 0"):
            ExecutorPool(executor, patience_sec=0)
