"""Worker processes that run one function call each under a time limit.

Tuning compiles and runs code nobody has checked: a candidate may crash its process
(a segfault), loop forever, or take the CPU for seconds. Each call therefore runs in a
separate worker process; the pool waits at most ``timeout_sec`` for it, and a worker
that crashed or overran is killed and replaced while the other calls go on::

    pool = WorkerPool(max_workers=2, timeout_sec=10)
    outcomes = pool.map(build_one, [(mod_a, "llvm"), (mod_b, "llvm")])
    outcomes[0].status        # "ok", "error" (it raised), "timeout" or "crash"

Workers are plain ``python -c "...worker_pool._serve(...)"`` subprocesses talking
over two pipes, not ``multiprocessing`` children: those would import the user's
``__main__`` again (a script calling ``tune_tir`` at top level would start tuning in
every worker). Workers stay alive between calls, so a call costs a pipe round trip, not
a Python start-up; they ignore Ctrl-C (the parent stops them) and die with the parent.
"""
from __future__ import annotations

import ctypes
import os
import pickle
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait

from ..ir.errors import TuningError

__all__ = ["Outcome", "WorkerPool"]


@dataclass(frozen=True)
class Outcome:
    """The end of one call: ``status`` is "ok" (``value`` holds the result), "error"
    (``message`` holds the traceback), "timeout" or "crash"; ``seconds`` is wall time.
    A pool of remote workers (:mod:`.executor_pool`) also says which ``worker`` ran the
    call, on which ``host`` and ``cpu`` (None where the pool does not say)."""

    status: str
    value: object = None
    message: str | None = None
    seconds: float = 0.0
    worker: str | None = None
    host: str | None = None
    cpu: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class _Worker:
    """One worker subprocess and the parent's ends of its two pipes."""

    def __init__(self, extra_path: list[str], background: bool = False):
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        env = dict(os.environ)
        # the child finds the same modules as the parent (tests and notebooks add paths)
        env["PYTHONPATH"] = os.pathsep.join([p for p in extra_path if p]
                                            + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        # stdin closed: a worker never reads the terminal the user is typing into.
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER_PRELUDE + _WORKER_MAIN, str(to_child_r),
             str(from_child_w), str(os.getpid()), str(int(background))],
            pass_fds=(to_child_r, from_child_w), env=env, stdin=subprocess.DEVNULL)
        # The child's ends, closed here: only then does EOF show when the child dies.
        os.close(to_child_r)
        os.close(from_child_w)
        self.send_conn = Connection(to_child_w, readable=False)
        self.recv_conn = Connection(from_child_r, writable=False)

    def wait_ready(self, limit_sec: float = 120.0) -> bool:
        """Wait for the worker's start-up message, so its imports do not count
        against the time limit of its first call."""
        try:
            return self.recv_conn.poll(limit_sec) and self.recv_conn.recv() == ("ready", None)
        except (EOFError, OSError):
            return False

    def describe_death(self) -> str:
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "the worker closed its pipe but did not exit"
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else "?"
            return f"the worker process died from signal {name} ({-code})"
        return f"the worker process exited with code {code}"

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.send_conn.close()
        self.recv_conn.close()


class WorkerPool:
    """Up to ``max_workers`` worker processes, started on first use and reused.

    ``timeout_sec`` (None: no limit) bounds each call. Functions and arguments are
    pickled, so functions must be importable by name (defined at a module's top level).
    ``spares`` workers are kept started beside them, so that a worker stopped after a
    timeout or crash is replaced without waiting for a Python start-up; a spare starts
    at idle CPU priority (it does not slow a measurement running meanwhile).
    """

    def __init__(self, max_workers: int = 1, timeout_sec: float | None = None,
                 spares: int = 0):
        if max_workers < 1:
            raise TuningError(f"WorkerPool: max_workers must be at least 1, found {max_workers}")
        if spares < 0:
            raise TuningError(f"WorkerPool: spares must be at least 0, found {spares}")
        self.max_workers, self.timeout_sec, self.spares = max_workers, timeout_sec, spares
        self._idle: list[_Worker] = []
        self._spare: list[_Worker] = []      # started, perhaps still importing
        self.restarts = 0          # workers replaced after a crash or a timeout

    def map(self, fn, arg_tuples, timeout_sec: float | None = None) -> list[Outcome]:
        """``fn(*args)`` for every tuple in ``arg_tuples`` spread over the workers, in
        order; ``timeout_sec`` bounds each of these calls instead of the pool's limit."""
        limit = self.timeout_sec if timeout_sec is None else timeout_sec
        # Reversed, so pop() hands out the calls in their given order.
        pending = list(enumerate(arg_tuples))[::-1]
        outcomes: list[Outcome | None] = [None] * len(pending)
        busy: dict[Connection, tuple] = {}          # recv_conn -> (worker, index, started)
        self._start_workers(min(self.max_workers, len(pending)))
        try:
            while pending or busy:
                while pending and len(busy) < self.max_workers:
                    self._dispatch(fn, *pending.pop(), busy, outcomes)
                self._collect(busy, outcomes, limit)
        except BaseException:
            # Ctrl-C (or any failure here): a call still running, a hung kernel perhaps,
            # must not outlive the tuning run
            for worker, _, _ in busy.values():
                self._retire(worker, keep=False)
            raise
        return outcomes

    def start(self, count: int | None = None) -> None:
        """Start ``count`` workers (default ``max_workers``) now, in this thread: Linux
        stops a worker when the thread that started it ends, so a pool used from a
        passing thread is started by the thread that outlives it."""
        self._start_workers(min(count or self.max_workers, self.max_workers))

    def _dispatch(self, fn, index: int, args, busy: dict, outcomes: list) -> None:
        worker = self._take_worker()
        try:
            worker.send_conn.send((fn, tuple(args)))
        except (OSError, pickle.PicklingError, AttributeError, TypeError) as err:
            # A call that does not pickle leaves the worker sound; a broken pipe does not.
            outcomes[index] = Outcome("error", message=f"could not send the call: {err}")
            self._retire(worker, keep=isinstance(err, (pickle.PicklingError, AttributeError,
                                                       TypeError)))
            return
        busy[worker.recv_conn] = (worker, index, time.perf_counter())

    def _collect(self, busy: dict, outcomes: list, limit: float | None) -> None:
        """Wait for the first call to end (or overrun ``limit``) and record its outcome."""
        if not busy:
            return
        now = time.perf_counter()
        wait_for = None
        if limit is not None:
            # Wake up no later than the first call's deadline.
            wait_for = max(0.0, min(started + limit - now for _, _, started in busy.values()))
        for conn in wait(list(busy), timeout=wait_for):
            worker, index, started = busy.pop(conn)
            outcomes[index] = self._receive(worker, time.perf_counter() - started)
        if limit is None:
            return
        now = time.perf_counter()
        for conn, (worker, index, started) in list(busy.items()):
            if now - started >= limit:
                del busy[conn]
                outcomes[index] = Outcome("timeout", message=(
                    f"no result after the time limit of {limit:g} s; the worker "
                    "was stopped"), seconds=now - started)
                self._retire(worker, keep=False)

    def _receive(self, worker: _Worker, seconds: float) -> Outcome:
        try:
            status, payload = worker.recv_conn.recv()
        except (EOFError, OSError):
            message = worker.describe_death()
            self._retire(worker, keep=False)
            return Outcome("crash", message=message, seconds=seconds)
        self._idle.append(worker)
        if status == "ok":
            return Outcome("ok", value=payload, seconds=seconds)
        return Outcome("error", message=payload, seconds=seconds)

    def _start_workers(self, count: int) -> None:
        """Start workers until ``count`` are idle, all at once (each takes a Python
        start-up and ``import mlcbench``)."""
        self._idle = [w for w in self._idle if w.process.poll() is None]
        needed = count - len(self._idle)
        # Spares first: they have (mostly) done their imports already.
        fresh = [self._spare.pop(0) for _ in range(min(needed, len(self._spare)))]
        for spare in fresh:
            # Needed now: a spare still importing at idle priority would starve on a busy host.
            _normal_priority(spare.process.pid)
        # All started before any is waited for: their start-ups overlap.
        fresh += [_Worker(list(sys.path)) for _ in range(needed - len(fresh))]
        while len(self._spare) < self.spares:
            self._spare.append(_Worker(list(sys.path), background=True))
        for worker in fresh:
            if not worker.wait_ready():
                reason = worker.describe_death()
                worker.kill()
                raise TuningError(f"WorkerPool: a worker process did not start ({reason})")
            self._idle.append(worker)

    def _take_worker(self) -> _Worker:
        while self._idle:
            worker = self._idle.pop()
            if worker.process.poll() is None:
                return worker
            self._retire(worker, keep=False)
        self._start_workers(1)
        return self._idle.pop()

    def _retire(self, worker: _Worker, keep: bool) -> None:
        if keep:
            self._idle.append(worker)
            return
        worker.kill()
        self.restarts += 1

    def shutdown(self) -> None:
        """Stop every idle and spare worker (a busy one is stopped when its call ends)."""
        while self._idle or self._spare:
            worker = self._idle.pop() if self._idle else self._spare.pop()
            try:
                worker.send_conn.send(None)
            except OSError:
                pass
            worker.kill()

    def __del__(self):
        try:
            self.shutdown()
        except Exception:  # interpreter shutdown: modules may already be gone
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()


# -- the worker side ----------------------------------------------------------------------
_WORKER_MAIN = ("import sys; from mlcbench.meta_schedule.worker_pool import _serve; "
                "_serve(*map(int, sys.argv[1:]))")
# A spare lowers itself for its imports (see WorkerPool's spares) before anything else,
# where Linux lets it come back to nice 0 (root, or RLIMIT_NICE of at least 20).
_WORKER_PRELUDE = (
    "import os, resource, sys\n"
    "_nice = resource.getrlimit(resource.RLIMIT_NICE)[0]\n"
    "if sys.argv[4] == '1' and hasattr(os, 'SCHED_IDLE') and (\n"
    "        os.geteuid() == 0 or _nice == resource.RLIM_INFINITY or _nice >= 20):\n"
    "    try: os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
    "    except OSError: pass\n")


def _normal_priority(pid: int = 0) -> None:
    """Process ``pid`` (0: this one) back from idle priority: measurements run at normal
    priority (Linux lets a process leave SCHED_IDLE for SCHED_OTHER at nice 0)."""
    try:
        os.sched_setscheduler(pid, os.SCHED_OTHER, os.sched_param(0))
    except (OSError, AttributeError):
        pass


def _die_with_parent(parent_pid: int) -> None:
    """Ask Linux to kill this worker when the parent dies (a hung kernel would otherwise
    outlive a killed tuning run)."""
    try:
        libc = ctypes.CDLL(None)
        libc.prctl(1, signal.SIGKILL)          # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:             # the parent died before prctl took effect
        os._exit(1)


def _serve(recv_fd: int, send_fd: int, parent_pid: int, background: int = 0) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent_pid)
    if background:              # the imports are done
        _normal_priority()
    recv_conn, send_conn = Connection(recv_fd, writable=False), Connection(send_fd,
                                                                           readable=False)
    send_conn.send(("ready", None))
    while True:
        try:
            message = recv_conn.recv()
        except EOFError:
            return
        if message is None:
            return
        try:
            fn, args = message
            reply = ("ok", fn(*args))
        except BaseException:  # the parent decides what a failure means
            # The traceback as text: an exception object may not pickle.
            reply = ("error", traceback.format_exc())
        try:
            send_conn.send(reply)
        # A result that does not pickle is reported, and the worker lives on.
        except Exception:
            send_conn.send(("error", "the result could not be sent back:\n"
                            + traceback.format_exc()))

