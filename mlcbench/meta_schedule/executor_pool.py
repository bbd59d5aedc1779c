"""A pool of remote workers with :class:`~.worker_pool.WorkerPool`'s interface.

``ExecutorPool(executor).map(fn, arg_tuples)`` returns the same :class:`Outcome` list as
a local ``WorkerPool``, so builders and runners take either. ``executor`` is any
``concurrent.futures.Executor`` or a Dask ``distributed.Client`` (whose workers may run
on other machines)::

    from distributed import Client
    pool = ExecutorPool(Client("tcp://scheduler:8786"), timeout_sec=30,
                        resources={"measure": 1})
    outcomes = pool.map(run_artifact_bytes, calls)
    outcomes[0].worker, outcomes[0].cpu     # "tcp://10.0.0.5:40123", "AMD EPYC 7763 ..."

On the worker each call runs, by default, in a local ``WorkerPool`` process of its own
(``isolate=True``): a candidate that segfaults or hangs then costs that process, not
the Dask worker, and ``timeout_sec`` holds there as it does locally. A Dask worker that
dies or disappears while it runs a call anyway is recovered from here: the call is
submitted again, once (``retries``), to another worker; if that one dies too, the
outcome is a "crash" naming both. The scheduler's own resubmission of such calls
(``distributed.scheduler.allowed-failures``, a setting of the whole scheduler: Dask has
no per-task one) is therefore turned off while ``map`` waits for its calls, and put
back as it was when the last ``map`` on that scheduler returns, so that a call is never
run more than ``retries + 1`` times and other work on a shared cluster keeps Dask's
resubmission outside tuning batches.

A worker is given only the calls it can run at once (its threads, or fewer where the
``resources`` run out), the next one as one comes back: Dask counts every call queued
on a worker that dies as killed by it, and a candidate that kills its worker must not
take innocent ones down with it.

A batch never waits forever: when no call has come back for ``patience_sec`` (the
cluster lost every worker with the resources, the scheduler stopped answering), the
calls still out are cancelled and come back as "timeout" outcomes that say so.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import os
import socket
import sys
import threading
import time
import traceback

from ..ir.errors import TuningError
from ..target.target import host_cpu_model
from .worker_pool import Outcome, WorkerPool

__all__ = ["ExecutorPool", "as_executor", "is_dask_client", "worker_identity"]


class ExecutorPool:
    """Calls spread over ``executor``'s workers (see the module docstring).

    Parameters
    ----------
    timeout_sec
        Seconds one call may take on its worker (with ``isolate``; None: no limit).
    resources
        Dask resources each call holds while it runs: ``{"measure": 1}`` with workers
        started by ``dask worker --resources measure=1`` runs one call at a time per
        worker. Ignored by other executors.
    isolate
        Run each call in a process of its own on the worker (see the module docstring).
    retries
        How many times a call whose Dask worker died is submitted again elsewhere.
    patience_sec
        Seconds the batch waits with no call coming back before it gives up on the calls
        still out (default: twice ``timeout_sec`` plus two minutes for a worker's restart,
        or ten minutes without a time limit).
    """

    def __init__(self, executor, timeout_sec: float | None = None,
                 resources: dict | None = None, isolate: bool = True, retries: int = 1,
                 patience_sec: float | None = None):
        if is_dask_client(executor):
            self.backend = _DaskBackend(executor, resources)
        elif isinstance(executor, concurrent.futures.Executor):
            self.backend = _FuturesBackend(executor)
        else:
            raise TuningError(f"ExecutorPool: expected a concurrent.futures.Executor or a "
                              f"dask distributed.Client, found {type(executor).__name__}")
        self.executor, self.timeout_sec = executor, timeout_sec
        self.isolate, self.retries = isolate, retries
        if patience_sec is None:
            patience_sec = 600.0 if timeout_sec is None else 2 * timeout_sec + 120.0
        if patience_sec <= 0:
            raise TuningError(f"ExecutorPool: patience_sec must be positive, found "
                              f"{patience_sec}")
        self.patience_sec = patience_sec
        self.lost = 0             # calls submitted again after their worker died

    def map(self, fn, arg_tuples) -> list[Outcome]:
        """``fn(*args)`` for every tuple of ``arg_tuples`` on the workers; outcomes in order."""
        calls = [tuple(args) for args in arg_tuples]
        with self.backend.holding():
            return self._map(fn, calls)

    def _map(self, fn, calls) -> list[Outcome]:
        outcomes: list[Outcome | None] = [None] * len(calls)
        waiting = list(enumerate(calls))[::-1]        # pop() hands them out in order
        pending: dict = {}                            # future -> (index, workers died on)
        try:
            while waiting or pending:
                self._submit_what_fits(fn, waiting, pending)
                done = self.backend.first_done(list(pending), self.patience_sec)
                if not done:
                    self._give_up(pending, waiting, outcomes)
                    break
                for future in done:
                    index, lost_on = pending.pop(future)
                    outcome, died_on = self.backend.outcome(future, self.patience_sec)
                    # Only a dead worker earns a retry: an error or timeout is the candidate's own.
                    if died_on is not None and len(lost_on) < self.retries:
                        self.lost += 1
                        retry = self._submit(fn, calls[index], avoid=lost_on + [died_on])
                        pending[retry] = (index, lost_on + [died_on])
                        continue
                    if died_on is not None:
                        outcome = _lost(lost_on + [died_on])
                    outcomes[index] = outcome
        except BaseException:
            # Ctrl-C: calls not started yet must not run after tuning stopped
            self.backend.cancel(list(pending))
            raise
        return outcomes

    def _submit_what_fits(self, fn, waiting: list, pending: dict) -> None:
        """Submit waiting calls while the workers have room for them (one at least when
        none is out; see the module docstring)."""
        room = self.backend.capacity() - len(pending)
        while waiting and (room > 0 or not pending):
            index, args = waiting.pop()
            pending[self._submit(fn, args)] = (index, [])
            room -= 1

    def _give_up(self, pending: dict, waiting: list, outcomes: list) -> None:
        """No call came back for ``patience_sec``: the calls still out are cancelled, and
        they and the calls not submitted yet come back as timeouts."""
        self.backend.cancel(list(pending))
        gone = Outcome("timeout", message=(
            f"the executor returned no call for {self.patience_sec:g} s (patience_sec); "
            f"this one was cancelled without being measured"))
        for index, lost_on in pending.values():
            outcomes[index] = dataclasses.replace(
                gone, worker=str(lost_on[-1]) if lost_on else None)
        for index, _ in waiting:
            outcomes[index] = gone

    def _submit(self, fn, args, avoid=()):
        return self.backend.submit(call_on_worker, (fn, args, self.timeout_sec, self.isolate),
                                   avoid)

    def worker_identities(self) -> dict:
        """``{worker: (host, cpu)}`` of the workers that can take a call now (empty for
        executors that do not say which workers they have)."""
        return self.backend.identities()

    def shutdown(self) -> None:
        """The executor belongs to the caller: it stays open."""


def _lost(workers: list) -> Outcome:
    where = " and then ".join(str(w) for w in workers)
    return Outcome("crash", message=(
        f"the worker died while running it, {len(workers)} time"
        f"{'s' * (len(workers) != 1)} ({where}); it was not measured"), worker=str(workers[-1]))


def as_executor(obj):
    """``obj`` when it is a Dask Client or a ``concurrent.futures.Executor``, else None."""
    if is_dask_client(obj) or isinstance(obj, concurrent.futures.Executor):
        return obj
    return None


def is_dask_client(obj) -> bool:
    """Whether ``obj`` is a ``distributed.Client`` (without importing Dask when it is not
    in use)."""
    distributed = sys.modules.get("distributed")
    return distributed is not None and isinstance(obj, distributed.Client)


class _FuturesBackend:
    """Any ``concurrent.futures.Executor``: a lost process breaks the whole executor,
    so nothing is submitted again."""

    def __init__(self, executor):
        self.executor = executor

    def holding(self):
        return contextlib.nullcontext()

    def capacity(self) -> float:
        return float("inf")       # the executor queues them itself

    def submit(self, fn, args, avoid):
        return self.executor.submit(fn, *args)

    def first_done(self, futures, patience_sec):
        done, _ = concurrent.futures.wait(futures, timeout=patience_sec,
                                          return_when=concurrent.futures.FIRST_COMPLETED)
        return done

    def outcome(self, future, patience_sec):
        try:
            return future.result(), None
        except concurrent.futures.BrokenExecutor as err:
            return Outcome("crash", message=f"the executor broke: {err}"), None
        except Exception:
            return Outcome("error", message=traceback.format_exc()), None

    def cancel(self, futures) -> None:
        for future in futures:
            future.cancel()

    def identities(self) -> dict:
        return {}


class _DaskBackend:
    """A Dask client: calls hold ``resources``; a call whose worker died comes back as
    ``KilledWorker`` at once (see the module docstring) and is resubmitted elsewhere."""

    def __init__(self, client, resources):
        self.client, self.resources = client, dict(resources or {})

    @contextlib.contextmanager
    def holding(self):
        """The scheduler resubmits no call of a dead worker while this is held."""
        self.client.run_on_scheduler(_hold_no_retries)
        try:
            yield
        finally:
            self.client.run_on_scheduler(_release_no_retries)

    def workers(self) -> list[str]:
        """Addresses of the workers that have every resource a call holds."""
        return [address for address, slots in self._slots().items() if slots > 0]

    def capacity(self) -> int:
        """How many calls the workers can run at once."""
        return sum(self._slots().values())

    def _slots(self) -> dict[str, int]:
        """``{worker: calls it can run at once}``: its threads, or fewer where the
        resources a call holds run out first."""
        infos = self.client.scheduler_info(n_workers=-1)["workers"]
        slots = {}
        for address, info in infos.items():
            have = info.get("resources", {})
            slots[address] = min([int(info.get("nthreads", 1))]
                                 + [int(have.get(name, 0) // amount)
                                    for name, amount in self.resources.items() if amount > 0])
        return slots

    def submit(self, fn, args, avoid):
        # A retry prefers the workers the call has not died on. Only a preference: a call
        # restricted to a worker that dies too would wait for its address forever (a
        # restarted worker comes back under a new one).
        others = [w for w in self.workers() if w not in avoid] if avoid else None
        where = dict(workers=others, allow_other_workers=True) if others else {}
        # pure=False: two equal calls are two measurements, not one cached result.
        return self.client.submit(fn, *args, pure=False, resources=self.resources or None,
                                  **where)

    def first_done(self, futures, patience_sec):
        """The futures that finished, failed or lost their result (the worker holding it
        died: Dask waits for no one to compute it again); none after ``patience_sec``."""
        from distributed import wait
        deadline = time.monotonic() + patience_sec
        while time.monotonic() < deadline:
            lost = [f for f in futures if f.status == "lost"]
            if lost:
                return lost
            try:
                # Woken every second to notice futures whose result was lost.
                return wait(futures, timeout=1.0, return_when="FIRST_COMPLETED").done
            except TimeoutError:
                continue
        return set()

    def outcome(self, future, patience_sec):
        try:
            return self._read(future, patience_sec)
        finally:
            # Released once read: a result left on a worker that dies later would be
            # computed again behind our back (a second measurement nobody reads).
            self.client.cancel([future])

    def _read(self, future, patience_sec):
        from distributed import KilledWorker
        deadline = time.monotonic() + patience_sec
        while future.status == "finished" and time.monotonic() < deadline:
            try:
                return future.result(timeout=1.0), None
            except TimeoutError:
                continue        # the fetch waits while the result is lost: look again
        if future.status == "finished":       # a result that never arrived
            return None, "a worker whose result never arrived"
        if future.status != "error":          # lost, cancelled, or pending once more
            return None, "a worker that lost the result"
        error = future.exception()
        if isinstance(error, KilledWorker):
            return None, getattr(error.last_worker, "address", str(error.last_worker))
        return Outcome("error", message="".join(traceback.format_exception(error))), None

    def cancel(self, futures) -> None:
        self.client.cancel(futures)

    def identities(self) -> dict:
        workers = self.workers()
        if not workers:
            needs = ", ".join(f"{k}={v}" for k, v in self.resources.items())
            raise TuningError(
                f"the Dask cluster has no worker with the resources {needs} that every "
                f"measurement holds; start workers with `dask worker <scheduler> "
                f"--resources {needs.replace(', ', ',')}` (or LocalCluster(resources=...))")
        return self.client.run(worker_identity, workers=workers)


# Run on the scheduler. Holds are counted there, so that two tuning runs on one cluster
# put the setting back only when the second one is done.
_HOLDS, _SAVED = "_mlcbench_retry_holds", "_mlcbench_saved_allowed_failures"


def _hold_no_retries(dask_scheduler=None) -> int:
    holds = getattr(dask_scheduler, _HOLDS, 0)
    if holds == 0:
        setattr(dask_scheduler, _SAVED, dask_scheduler.allowed_failures)
        dask_scheduler.allowed_failures = 0
    setattr(dask_scheduler, _HOLDS, holds + 1)
    return holds + 1


def _release_no_retries(dask_scheduler=None) -> int:
    holds = max(getattr(dask_scheduler, _HOLDS, 1) - 1, 0)
    setattr(dask_scheduler, _HOLDS, holds)
    if holds == 0 and hasattr(dask_scheduler, _SAVED):
        dask_scheduler.allowed_failures = getattr(dask_scheduler, _SAVED)
    return holds


# -- the worker side ----------------------------------------------------------------------
_IDENTITY: list = []             # [(host, cpu)] once known
_LOCAL = threading.local()       # this thread's WorkerPool per time limit


def worker_identity() -> tuple[str, str]:
    """``(host name, CPU model)`` of the machine this runs on."""
    if not _IDENTITY:
        _IDENTITY.append((socket.gethostname(), host_cpu_model()))
    return _IDENTITY[0]


def _worker_name() -> str:
    """The Dask worker's address, else ``host:pid``."""
    try:
        from distributed import get_worker
        # On a Dask worker its address; elsewhere (a thread pool) the host and process.
        return get_worker().address
    except (ImportError, ValueError):
        return f"{socket.gethostname()}:{os.getpid()}"


def call_on_worker(fn, args, timeout_sec, isolate) -> Outcome:
    """Runs on a remote worker: ``fn(*args)`` as an Outcome naming this worker."""
    host, cpu = worker_identity()
    if isolate:
        # One pool per thread and time limit: a WorkerPool is not shared between threads.
        pools = _LOCAL.__dict__.setdefault("pools", {})
        pool = pools.setdefault(timeout_sec, WorkerPool(1, timeout_sec))
        (outcome,) = pool.map(fn, [args])
    else:
        started = time.perf_counter()
        try:
            outcome = Outcome("ok", value=fn(*args))
        except Exception:
            outcome = Outcome("error", message=traceback.format_exc())
        outcome = dataclasses.replace(outcome, seconds=time.perf_counter() - started)
    return dataclasses.replace(outcome, worker=_worker_name(), host=host, cpu=cpu)
