"""Fuzz the TensorIR Schedule: random primitive sequences, built and checked vs numpy.

Run: ``python benchmarks/fuzz_schedules.py --cases 10000 [--workers 2] [--seed 0]``.

Each case picks a workload (matmul, mm_relu, a small conv2d, softmax) and applies a
random sequence of primitives to random blocks and loops: split, reorder, fuse,
parallel, vectorize, unroll, compute_at, reverse_compute_at, cache_write, cache_read,
decompose_reduction, compute_inline, and the pairs compute_at then cache_read/cache_write
and cache_read/cache_write then compute_at/reverse_compute_at. A refused primitive must
raise ScheduleError and leave ``sch.mod`` and ``sch.trace`` untouched; an applied
schedule must build, give numpy's answer and replay from its trace to the same IR. The report counts

* applied / refused primitives, and cases whose schedule changed the IR;
* wrong results (numbers differ, or a refusal that changed the schedule, or a trace
  that replays to different IR);
* crashes: exceptions other than ScheduleError, and worker processes that died (a
  segfault in compiled code) -- builds run in worker processes, so a death is counted
  and the worker restarted.

The generator takes a ``draw(n) -> int in [0, n)`` function, so the same code runs from
``random.Random`` here and from a hypothesis ``data.draw`` in
``tests/tir/schedule/test_random_schedules_full.py``.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import time
import traceback
from multiprocessing.connection import wait

import numpy as np

import mlcbench
from mlcbench import te, topi
from mlcbench.ir import assert_structural_equal
from mlcbench.ir.errors import ScheduleError
from mlcbench.tir import Schedule, Trace
from mlcbench.tir.schedule.ir_utils import walk
from mlcbench.tir.stmt import Block

PRIMITIVES = ("split", "reorder", "fuse", "parallel", "vectorize", "unroll", "compute_at",
              "reverse_compute_at", "cache_write", "decompose_reduction", "compute_inline",
              "cache_read", "compute_at_then_cache", "cache_then_compute_at")


# -- workloads ---------------------------------------------------------------------------
def _matmul():
    A, B = te.placeholder((12, 8), name="A"), te.placeholder((8, 6), name="B")
    k = te.reduce_axis((0, 8), name="k")
    C = te.compute((12, 6), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C]), lambda a, b: a @ b


def _mm_relu():
    A, B = te.placeholder((8, 12), name="A"), te.placeholder((12, 10), name="B")
    k = te.reduce_axis((0, 12), name="k")
    Y = te.compute((8, 10), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    return te.create_prim_func([A, B, topi.nn.relu(Y)]), lambda a, b: np.maximum(a @ b, 0)


def _conv2d():
    data = te.placeholder((1, 2, 6, 6), name="data")
    kernel = te.placeholder((3, 2, 3, 3), name="kernel")
    out = topi.nn.conv2d_nchw(data, kernel, 1, 1, 1)
    return te.create_prim_func([data, kernel, out]), conv2d_reference


def _softmax():
    x = te.placeholder((5, 12), name="x")
    return te.create_prim_func([x, topi.nn.softmax(x)]), softmax_reference


def conv2d_reference(data, kernel):
    """3x3, stride 1, padding 1 NCHW convolution as a sum of nine shifted taps."""
    padded = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1)))
    height, width = data.shape[2:]
    out = np.zeros((data.shape[0], kernel.shape[0], height, width), "float32")
    for dy in range(3):
        for dx in range(3):
            window = padded[:, :, dy:dy + height, dx:dx + width]
            out += np.einsum("nchw,fc->nfhw", window, kernel[:, :, dy, dx])
    return out


def softmax_reference(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


WORKLOAD_MAKERS = {"matmul": _matmul, "mm_relu": _mm_relu, "conv2d": _conv2d,
                   "softmax": _softmax}
_WORKLOADS: dict = {}


def workload(name: str):
    """``(PrimFunc, numpy reference of the inputs)``, made once per process."""
    if name not in _WORKLOADS:
        _WORKLOADS[name] = WORKLOAD_MAKERS[name]()
    return _WORKLOADS[name]


# -- the generator -----------------------------------------------------------------------
def block_names(sch) -> list:
    """Names of every block of ``main`` but the root, in program order."""
    names = []
    walk(sch.mod["main"].body,
         lambda node, _: names.append(node.name_hint) if isinstance(node, Block) else None)
    return [n for n in names if n != "root"]


def _pick(draw, items):
    return items[draw(len(items))]


def _any_loop(sch, draw):
    """A handle to a loop of a random block (None when that block has no loops)."""
    loops = sch.get_loops(_pick(draw, block_names(sch)))
    return _pick(draw, loops) if loops else None


def _loop_action(sch, draw, kind):
    """Handles are fetched here; the returned closure applies only the primitive."""
    block = _pick(draw, block_names(sch))
    loops = sch.get_loops(block)
    if not loops:
        return None
    pick = _pick(draw, loops)
    if kind == "split":
        factor = 1 + draw(6)
        factors = [None, factor] if draw(2) else [factor, None]
        return lambda: sch.split(pick, factors=factors)
    if kind == "reorder":
        other = _pick(draw, loops)
        return None if other is pick else (lambda: sch.reorder(other, pick))
    if kind == "fuse":
        n = draw(len(loops))
        return None if n + 1 >= len(loops) else (lambda: sch.fuse(loops[n], loops[n + 1]))
    return lambda: getattr(sch, kind)(pick)


def _block_action(sch, draw, kind):
    block = sch.get_block(_pick(draw, block_names(sch)))
    if kind in ("compute_at", "reverse_compute_at"):
        loop = _any_loop(sch, draw)
        return None if loop is None else (lambda: getattr(sch, kind)(block, loop))
    if kind == "decompose_reduction":
        loops = sch.get_loops(block)
        return None if not loops else (lambda: sch.decompose_reduction(block, _pick(draw, loops)))
    if kind == "cache_write":
        scope = _pick(draw, ["global", "local"])
        return lambda: sch.cache_write(block, 0, scope)
    if kind == "cache_read":
        index, scope = draw(3), _pick(draw, ["global", "local", "shared"])
        return lambda: sch.cache_read(block, index, scope)
    return lambda: sch.compute_inline(block)


def _pair_step(sch, draw, kind) -> str:
    """Two checked steps: compute_at then a cache primitive, or a cache primitive whose
    copy block is then moved under a random loop (the course's tiling flow)."""
    if kind == "compute_at_then_cache":
        first = _checked(sch, "compute_at", _block_action(sch, draw, "compute_at"))
        if first != "applied":
            return first
        return _checked(sch, "cache", _block_action(sch, draw, _pick(
            draw, ["cache_read", "cache_write"])))
    reading = draw(2)
    before = set(block_names(sch))
    first = _checked(sch, "cache", _block_action(sch, draw, "cache_read" if reading
                                                 else "cache_write"))
    added = [name for name in block_names(sch) if name not in before]
    if first != "applied" or not added:
        return first
    loop = _any_loop(sch, draw)
    if loop is None:
        return "skipped"
    move = sch.compute_at if reading else sch.reverse_compute_at
    copy = sch.get_block(added[0])
    return _checked(sch, "move", lambda: move(copy, loop))


def random_step(sch, draw) -> str:
    """Apply one random primitive: ``"applied"``, ``"refused"`` or ``"skipped"``.

    Raises AssertionError when a refusal changed the schedule."""
    kind = _pick(draw, PRIMITIVES)
    if kind in ("compute_at_then_cache", "cache_then_compute_at"):
        return _pair_step(sch, draw, kind)
    maker = _block_action if kind in PRIMITIVES[6:] else _loop_action
    return _checked(sch, kind, maker(sch, draw, kind))


def _checked(sch, kind, action) -> str:
    """Run ``action``: "applied", "refused" (schedule unchanged) or "skipped" (None)."""
    if action is None:
        return "skipped"
    mod_before, trace_before = sch.mod, str(sch.trace)
    try:
        action()
    except ScheduleError:
        assert sch.mod is mod_before, f"refused {kind} changed sch.mod"
        assert str(sch.trace) == trace_before, f"refused {kind} changed sch.trace"
        return "refused"
    return "applied"


def random_schedule(draw, max_steps: int = 6):
    """``(workload name, Schedule, {"applied": n, "refused": n})`` of a random case."""
    name = _pick(draw, sorted(WORKLOAD_MAKERS))
    sch = Schedule(workload(name)[0])
    counts = {"applied": 0, "refused": 0, "skipped": 0}
    for _ in range(1 + draw(max_steps)):
        counts[random_step(sch, draw)] += 1
    return name, sch, counts


# -- checking ----------------------------------------------------------------------------
_BUILDS: dict = {}


def build_cached(func):
    """Build ``func``, reusing the library of an identical script built before."""
    key = func.script()
    if key not in _BUILDS:
        if len(_BUILDS) > 256:
            _BUILDS.clear()
        _BUILDS[key] = mlcbench.build(func, target="llvm")
    return _BUILDS[key]


def check_schedule(name, sch, seed: int = 0) -> None:
    """Build, run on random data and compare with numpy; replay the trace (JSON too)."""
    func, reference = workload(name)
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal([int(s.value) for s in buf.shape]).astype("float32")
              for _, buf in func.buffer_params()]
    nd = [mlcbench.nd.array(a) for a in arrays]
    build_cached(sch.mod["main"])["main"](*nd)
    np.testing.assert_allclose(nd[-1].numpy(), reference(*arrays[:-1]), rtol=1e-4, atol=1e-5)
    replayed = Schedule(func)
    Trace.from_json(sch.trace.as_json()).apply_to_schedule(replayed)
    assert_structural_equal(replayed.mod["main"], sch.mod["main"])


def run_case(case_seed: int) -> dict:
    """One fuzz case; never raises. ``outcome`` is ok, wrong or crash."""
    rng = random.Random(case_seed)
    result = {"seed": case_seed, "applied": 0, "refused": 0, "outcome": "ok", "detail": ""}
    sch = None
    try:
        name, sch, counts = random_schedule(rng.randrange)
        result.update(applied=counts["applied"], refused=counts["refused"], workload=name)
        check_schedule(name, sch, case_seed)
    except AssertionError as err:
        result.update(outcome="wrong", detail=f"{err}\n{sch.trace if sch else ''}")
    except Exception:  # noqa: BLE001 -- counting every other exception is the point
        result.update(outcome="crash", detail=f"{traceback.format_exc()}\n"
                                              f"{sch.trace if sch else ''}")
    return result


# -- the multi-process driver ------------------------------------------------------------
def _worker(conn, run_case) -> None:
    """Run the case seeds received on ``conn`` and send back their results."""
    while True:
        case_seed = conn.recv()
        if case_seed is None:
            return
        conn.send(run_case(case_seed))


class WorkerPool:
    """Worker processes that each run one case at a time: ``run_case(seed) -> dict``.

    A worker that dies (a segfault in compiled code) or runs one case longer than
    ``timeout`` seconds is replaced, and its case is reported as ``lost(seed, outcome,
    detail)`` with outcome ``"crash"`` or ``"hang"``: neither stops the run."""

    def __init__(self, size: int, run_case, lost, timeout: float | None = None):
        self.ctx = mp.get_context("fork")
        self.run_case, self.lost, self.timeout = run_case, lost, timeout
        self.slots = [self._start() for _ in range(size)]

    def _start(self):
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(child, self.run_case), daemon=True)
        proc.start()
        return {"proc": proc, "conn": parent, "case": None, "deadline": None}

    def _send(self, slot, case_seed) -> None:
        slot["case"] = case_seed
        slot["deadline"] = None if self.timeout is None else time.monotonic() + self.timeout
        slot["conn"].send(case_seed)

    def _wait_time(self, busy) -> float | None:
        deadlines = [s["deadline"] for s in busy if s["deadline"] is not None]
        return None if not deadlines else max(0.0, min(deadlines) - time.monotonic())

    def run(self, seeds, on_result) -> None:
        pending = list(reversed(seeds))
        while pending or any(s["case"] is not None for s in self.slots):
            for slot in self.slots:
                if slot["case"] is None and pending:
                    self._send(slot, pending.pop())
            busy = [s for s in self.slots if s["case"] is not None]
            ready = wait([s["conn"] for s in busy] + [s["proc"].sentinel for s in busy],
                         timeout=self._wait_time(busy))
            for index, slot in enumerate(self.slots):
                if slot["case"] is not None:
                    self._collect(index, slot, ready, on_result)

    def _collect(self, index, slot, ready, on_result) -> None:
        """Hand on the slot's result, or replace a worker that died or ran too long."""
        died = slot["proc"].sentinel in ready
        if slot["conn"] in ready and slot["conn"].poll():
            try:
                on_result(slot["conn"].recv())
                slot["case"] = None
                return
            except EOFError:        # the worker died: its end of the pipe closed
                died = True
        if died:
            slot["proc"].join()
            outcome, detail = "crash", f"worker died (exit {slot['proc'].exitcode})"
        elif slot["deadline"] is not None and time.monotonic() >= slot["deadline"]:
            outcome, detail = "hang", f"no result within {self.timeout:g} s"
            slot["proc"].kill()
            slot["proc"].join()
        else:
            return
        on_result(self.lost(slot["case"], outcome, detail))
        self.slots[index] = self._start()

    def close(self) -> None:
        for slot in self.slots:
            slot["conn"].send(None)
            slot["proc"].join(timeout=5)


def _lost_case(case_seed: int, outcome: str, detail: str) -> dict:
    return {"seed": case_seed, "applied": 0, "refused": 0, "outcome": outcome,
            "detail": detail}


def fuzz(cases: int, workers: int, seed: int) -> dict:
    """Run ``cases`` cases; totals and up to five failing cases (seed, detail)."""
    totals = {"cases": 0, "applied": 0, "refused": 0, "changed": 0, "wrong": 0, "crash": 0,
              "failures": []}

    def on_result(result):
        totals["cases"] += 1
        totals["applied"] += result["applied"]
        totals["refused"] += result["refused"]
        totals["changed"] += result["applied"] > 0
        if result["outcome"] != "ok":
            totals[result["outcome"]] += 1
            if len(totals["failures"]) < 5:
                totals["failures"].append(result)

    seeds = [seed * 1_000_003 + i for i in range(cases)]
    if workers <= 1:
        for case_seed in seeds:
            on_result(run_case(case_seed))
        return totals
    pool = WorkerPool(workers, run_case, _lost_case)
    try:
        pool.run(seeds, on_result)
    finally:
        pool.close()
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=max(1, mp.cpu_count()))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    totals = fuzz(args.cases, args.workers, args.seed)
    seconds = time.perf_counter() - start
    print(f"cases {totals['cases']} in {seconds:.0f} s ({args.workers} workers, "
          f"seed {args.seed})")
    print(f"primitives applied {totals['applied']}, refused {totals['refused']}; "
          f"cases with an applied primitive {totals['changed']}")
    print(f"wrong results {totals['wrong']}, crashes {totals['crash']}")
    for failure in totals["failures"]:
        print(f"--- case seed {failure['seed']} ({failure['outcome']}): "
              f"rerun with run_case({failure['seed']})\n{failure['detail']}")


if __name__ == "__main__":
    main()
