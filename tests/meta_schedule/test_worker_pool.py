import operator
import os
import signal
import time

import pytest

from mlcbench.ir import TuningError
from mlcbench.meta_schedule.worker_pool import WorkerPool
from helpers.tuning_testing import call_with


@pytest.fixture(scope="module")
def pool():
    pool = WorkerPool(max_workers=2, timeout_sec=1)
    yield pool
    pool.shutdown()


def test_results_come_back_in_order_from_reused_workers(pool):
    outcomes = pool.map(operator.mul, [(n, n) for n in range(10)])
    assert [o.value for o in outcomes] == [n * n for n in range(10)]
    assert all(o.ok for o in outcomes)
    pids = {o.value for o in pool.map(os.getpid, [()] * 6)}
    assert len(pids) <= 2 and os.getpid() not in pids


def test_errors_crashes_and_timeouts_are_outcomes_and_workers_are_replaced(pool):
    restarts = pool.restarts
    error, crash, timeout, ok = pool.map(
        call_with, [(operator.truediv, 1, 0), (os.abort,), (time.sleep, 30), (operator.add, 1, 2)])
    assert error.status == "error" and "ZeroDivisionError" in error.message
    assert crash.status == "crash" and "SIGABRT" in crash.message
    assert timeout.status == "timeout" and "time limit of 1 s" in timeout.message
    assert ok.value == 3 and pool.restarts == restarts + 2


def test_an_unpicklable_call_is_an_error_not_a_hang(pool):
    (outcome,) = pool.map(operator.add, [(lambda: 1, 2)])
    assert outcome.status == "error" and "could not send the call" in outcome.message


def test_interrupting_a_call_stops_its_worker():
    pool = WorkerPool(max_workers=1, timeout_sec=60)
    pool.map(operator.add, [(1, 2)])              # started and idle
    (worker,) = pool._idle

    def interrupt(signum, frame):
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            pool.map(time.sleep, [(30,)])
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert worker.process.poll() is not None       # the sleeping worker was killed
    assert pool.map(operator.add, [(2, 2)])[0].value == 4
    pool.shutdown()


def test_max_workers_is_checked():
    with pytest.raises(TuningError, match="max_workers must be at least 1"):
        WorkerPool(max_workers=0)



def test_a_spare_worker_takes_over_after_a_timeout_at_normal_priority():
    pool = WorkerPool(max_workers=1, timeout_sec=1, spares=1)
    try:
        (first,) = pool.map(os.getpid, [()])
        (spare,) = pool._spare
        timeout, after = pool.map(call_with, [(time.sleep, 30), (os.sched_getscheduler, 0)])
        assert timeout.status == "timeout"
        # The call after the timeout ran in the spare, back at normal priority ...
        assert after.value == os.SCHED_OTHER
        assert pool.map(os.getpid, [()])[0].value == spare.process.pid != first.value
        # ... and a new spare was started in its place.
        assert len(pool._spare) == 1 and pool._spare[0] is not spare
    finally:
        pool.shutdown()
    assert spare.process.poll() is not None and not pool._spare
