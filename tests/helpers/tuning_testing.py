"""Workloads, the course's stochastic schedule, misbehaving kernels and a fast fake
builder/runner shared by the tuning tests."""
from __future__ import annotations

import hashlib

from mlcbench import IRModule, te
from mlcbench.ir import structural_hash
from mlcbench.meta_schedule.builder import Builder, BuilderResult
from mlcbench.meta_schedule.runner import Runner, RunnerFuture, RunnerResult
from mlcbench.script import tir as T
from mlcbench.tir import For, Schedule, post_order_visit


def matmul_module(n: int = 128, m: int | None = None, k: int | None = None) -> IRModule:
    """C = A @ B with float32 (n, k) x (k, m) inputs, a single block "C" in "main"."""
    m, k = m or n, k or n
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="r")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return IRModule({"main": te.create_prim_func([A, B, C])})


def thread_bound(mod) -> IRModule:
    """``mod``'s block "C" with its two outer loops bound to blockIdx.x and threadIdx.x:
    the simplest program a GPU target builds."""
    sch = Schedule(mod)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    return sch.mod


def stochastic_schedule_mm(sch):
    """The course's stochastic matmul schedule: sampled tiles, split, reorder, decompose."""
    block = sch.get_block("C", func_name="main")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=sch.sample_perfect_tile(i, n=2))
    j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=2))
    k0, k1 = sch.split(k, factors=sch.sample_perfect_tile(k, n=2))
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.decompose_reduction(block, k0)
    return sch


# -- candidates that misbehave -------------------------------------------------------------
@T.prim_func
def segfaulting_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    # far outside the 16 bytes of A: an unmapped address
    A[T.int64(1099511627776)] = T.float32(1)


@T.prim_func
def aborting_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    T.evaluate(T.call_extern("int32", "abort"))


@T.prim_func
def hanging_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    T.evaluate(T.call_extern("int32", "sleep", 1000))


@T.prim_func
def unlinkable_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    T.evaluate(T.call_extern("int32", "no_such_function_anywhere", 1))


@T.prim_func
def fill_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in range(4):
        A[i] = T.float32(1)


@T.prim_func
def fill_wrong_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in range(4):
        A[i] = T.float32(2)


def call_with(fn, *args):
    """``fn(*args)``: lets a worker pool run functions it could not pickle by name."""
    return fn(*args)


def failing_build(mod, target):
    raise ValueError("this build always fails")


def sleeping_build(mod, target):
    import time
    time.sleep(1000)


def aborting_build(mod, target):
    import os
    os.abort()


# -- a fast fake builder and runner ----------------------------------------------------------
class FakeMeasurer:
    """A builder and a runner that compile nothing: the runner makes up a run time from
    the scheduled module's loops (an innermost loop of extent 8 is fastest), so search
    logic can be tested in milliseconds. Modules whose innermost extent is in
    ``failing_extents`` fail as if they crashed; ``delay`` seconds pass per candidate."""

    def __init__(self, failing_extents=(), delay: float = 0.0):
        self.failing_extents, self.delay = set(failing_extents), delay
        self.modules = {}
        self.measured = []           # structural hashes, in measuring order
        measurer = self

        class _Builder(Builder):
            def build(self, build_inputs):
                results = []
                for inp in build_inputs:
                    key = f"fake-{len(measurer.modules)}"
                    measurer.modules[key] = inp.mod
                    results.append(BuilderResult(key, None))
                return results

        class _Runner(Runner):
            def run(self, runner_inputs):
                return [RunnerFuture(measurer.measure(inp.artifact_path))
                        for inp in runner_inputs]

        self.builder, self.runner = _Builder(), _Runner()

    def measure(self, key) -> RunnerResult:
        import time
        time.sleep(self.delay)
        mod = self.modules[key]          # an artifact may run again (remeasure_top_k)
        self.measured.append(structural_hash(mod))
        extents = loop_extents(mod)
        if extents[-1] in self.failing_extents:
            return RunnerResult(None, "run crash: simulated")
        return RunnerResult([fake_seconds(extents)], None)


def loop_extents(mod) -> list:
    extents = []
    for func in mod.functions.values():
        post_order_visit(func.body, lambda n: extents.append(int(n.extent.value))
                         if isinstance(n, For) else None)
    return extents[::-1]         # post order puts the innermost first


def fake_seconds(extents) -> float:
    """A made-up run time: 1 ms, more the farther the innermost extent is from 8, plus a
    deterministic jitter so distinct programs rarely tie."""
    digest = hashlib.sha256(repr(extents).encode()).digest()
    jitter = int.from_bytes(digest[:4], "little") / 2 ** 32
    return 1e-3 * (1 + abs(extents[-1] - 8) / 8 + 0.05 * jitter)


# -- matmuls that misbehave, for tuning runs that must survive them -------------------------
@T.prim_func
def aborting_matmul(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                    C: T.Buffer((32, 32), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    T.evaluate(T.call_extern("int32", "abort"))


@T.prim_func
def hanging_matmul(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                   C: T.Buffer((32, 32), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    T.evaluate(T.call_extern("int32", "sleep", 1000))


@T.prim_func
def wrong_matmul(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                 C: T.Buffer((32, 32), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j in T.grid(32, 32):
        C[i, j] = A[i, j] + B[i, j]


MISBEHAVING = {1: aborting_matmul, 2: hanging_matmul, 3: wrong_matmul}


def sometimes_broken_space(sch):
    """The stochastic matmul schedule, except that one time in two the sampled choice
    swaps the program for one that aborts, hangs or computes the wrong thing."""
    from mlcbench import tir
    choice = sch.get(sch.sample_categorical([0, 1, 2, 3], [0.5, 0.2, 0.15, 0.15]))
    if choice in MISBEHAVING:
        return tir.Schedule(IRModule({"main": MISBEHAVING[choice]}))
    return stochastic_schedule_mm(sch)


def set_worker_cpu(cpu: str | None) -> None:
    """Make this process report ``cpu`` as its CPU model (None: the real one again), as a
    worker on other hardware would."""
    from mlcbench.meta_schedule import executor_pool
    host = executor_pool.worker_identity()[0]
    executor_pool._IDENTITY.clear()
    if cpu is not None:
        executor_pool._IDENTITY.append((host, cpu))
