"""Apache TVM's figure for the CPU-GEMM schedule of ``matmul_schedule.py``, as a reference.

Run with a Python that has Apache TVM (``pip install apache-tvm`` in a separate
virtual environment; mlcbench never depends on it)::

    /path/to/tvm-venv/bin/python benchmarks/tvm_matmul.py [--n 1024] [--rounds 5]

or let ``matmul_schedule.py --tvm-python /path/to/tvm-venv/bin/python`` run it and add
its rows to the table. The schedule is the one ``matmul_schedule.schedule_matmul``
builds with mlcbench's primitives, spelled in TVM 0.27's API (``tvm.s_tir.Schedule``,
``get_sblock``): a ``rows x cols`` register tile (``cache_write`` "local" +
``reverse_compute_at``), the outer tiles fused and parallel, the init decomposed, and B
packed into ``cols``-wide panels by ``cache_read`` + ``transform_layout``. TVM runs
on ``--threads`` threads (``TVM_NUM_THREADS``), and numpy's ``a @ b`` is timed in the same process the
same way (best batch mean of several rounds, a pause before each batch). Prints one
JSON line: ``{"threads", "tvm_gflops", "numpy_gflops"}``.
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np


def schedule(n: int, rows: int, cols: int):
    from tvm import s_tir, te
    a, b = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    sch = s_tir.Schedule(te.create_prim_func([a, b, c]))
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, rows])
    j0, j1 = sch.split(j, factors=[None, cols])
    sch.reorder(i0, j0, k, i1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    # TVM asks for the parallel loop before decompose_reduction (compact dataflow).
    sch.parallel(sch.fuse(i0, j0))
    sch.unroll(i1)
    sch.vectorize(j1)
    init = sch.decompose_reduction(block, k)
    init_rows, init_cols = sch.get_loops(init)[-2:]
    sch.unroll(init_rows)
    sch.vectorize(init_cols)
    sch.vectorize(sch.get_loops(write_back)[-1])
    pack = sch.cache_read(sch.get_sblock("C_update"), 2, "global")   # reads: C_local, A, B
    sch.transform_layout(pack, ("write", 0), lambda kk, jj: (jj // cols, kk, jj % cols))
    pack_rows, pack_cols = sch.get_loops(pack)
    panel, col = sch.split(pack_cols, factors=[None, cols])
    sch.reorder(panel, pack_rows, col)
    sch.parallel(panel)
    sch.vectorize(col)
    return sch


def best_seconds(fn, rounds: int, min_repeat_s: float = 0.05, settle_s: float = 0.1) -> float:
    best = float("inf")
    for _ in range(rounds):
        time.sleep(settle_s)
        fn()
        start, count = time.perf_counter(), 0
        while time.perf_counter() - start < min_repeat_s:
            fn()
            count += 1
        best = min(best, (time.perf_counter() - start) / count)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--rows", type=int, default=4, help="register tile rows")
    parser.add_argument("--cols", type=int, default=16, help="register tile columns")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    # TVM sizes its thread pool when it starts (one thread on this 2-vCPU machine
    # unless told), so the count is set before the import.
    os.environ["TVM_NUM_THREADS"] = str(args.threads)
    import tvm
    n = args.n
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    dev = tvm.cpu()
    mod = schedule(n, args.rows, args.cols).mod
    threads = args.threads
    target = tvm.target.Target({"kind": "llvm", "mcpu": tvm.target.codegen.llvm_get_system_cpu(),
                                "num-cores": threads})
    lib = tvm.compile(mod, target=target)
    ta, tb = tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev)
    tc = tvm.runtime.tensor(np.zeros((n, n), "float32"), dev)
    lib["main"](ta, tb, tc)
    np.testing.assert_allclose(tc.numpy(), a @ b, rtol=1e-3)
    evaluator = lib.mod.time_evaluator("main", dev, number=1, min_repeat_ms=50)
    ours = theirs = float("inf")
    for _ in range(args.rounds):
        time.sleep(0.1)
        ours = min(ours, evaluator(ta, tb, tc).mean)
        theirs = min(theirs, best_seconds(lambda: a @ b, 1))
    flops = 2 * n ** 3
    print(json.dumps({"threads": threads, "tvm_gflops": flops / ours / 1e9,
                      "numpy_gflops": flops / theirs / 1e9}), flush=True)


if __name__ == "__main__":
    main()
