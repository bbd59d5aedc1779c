"""The digits CNN tuned kernel by kernel with ``tune_relax``, against its default build.

Run: ``python benchmarks/tune_cnn.py [--batch 64] [--trials 128] [--work-dir DIR]``.

The model's kernels (after LegalizeOps, FuseOps and FuseTIR) are extracted as tasks,
weighted by how often the model calls them, and tuned with one budget shared by the
gradient task scheduler; each kernel's ``--remeasure`` fastest programs are measured
again at the end, in turn (``remeasure_top_k``). ``compile_relax`` then builds the
model with each kernel's best record (kernels without one keep the default schedule).
Both builds classify the test images as numpy does; their latencies are measured in
interleaved rounds (best of ``--rounds``), as is numpy's forward pass.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("GOMP_SPINCOUNT", "10000")   # before libgomp loads

import numpy as np  # noqa: E402

import mlcbench  # noqa: E402
from mlcbench import datasets, relax  # noqa: E402
from mlcbench import meta_schedule as ms  # noqa: E402
from mlcbench.driver.models import export_digits_model  # noqa: E402
from mlcbench.target import Target  # noqa: E402
from timing import call, compare, host_line, kernel  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--trials", type=int, default=128)
    parser.add_argument("--per-iter", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--remeasure", type=int, default=4,
                        help="programs of each kernel measured again at the end")
    args = parser.parse_args()
    print(host_line(args.threads))
    target = Target(f"llvm --num-cores={args.threads}")
    mod, weights = export_digits_model("cnn", args.batch)
    tasks = ms.relax_integration.extract_tasks(mod, target)
    print(f"{len(tasks)} tasks: " + ", ".join(f"{t.task_name} (x{t.weight})" for t in tasks))
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="tune_cnn_")
    start = time.perf_counter()
    database = ms.tune_relax(mod, None, target, work_dir, max_trials_global=args.trials,
                             num_trials_per_iter=args.per_iter, seed=args.seed,
                             remeasure_top_k=args.remeasure)
    tuning_seconds = time.perf_counter() - start

    default = relax.VirtualMachine(relax.build(mod, target), mlcbench.cpu())
    tuned = relax.VirtualMachine(ms.compile_relax(database, mod, target), mlcbench.cpu())
    _, _, x_test, _ = datasets.load_digits(flat=False)
    x = np.ascontiguousarray(x_test[:args.batch])
    params = datasets.load_cnn_params()
    numpy_forward = lambda images: datasets.cnn_forward(images, params)  # noqa: E731
    for vm in (default, tuned):
        np.testing.assert_allclose(vm["forward"](x, *weights).numpy(), numpy_forward(x),
                                   rtol=1e-4, atol=1e-5)
    best = compare({"default": kernel(default, "forward", x, *weights),
                    "tuned": kernel(tuned, "forward", x, *weights),
                    "numpy": call(lambda: numpy_forward(x))}, args.rounds, min_repeat_ms=20)
    print(f"\nCNN batch {args.batch}, {args.trials} trials in {tuning_seconds:.0f} s "
          f"({tuning_seconds / args.trials:.2f} s per trial), {args.threads} threads")
    print(f"{'build':<9}{'ms':>9}{'default / this':>16}{'numpy / this':>14}")
    for name in ("default", "tuned", "numpy"):
        print(f"{name:<9}{best[name] * 1e3:>9.3f}{best['default'] / best[name]:>15.2f}x"
              f"{best['numpy'] / best[name]:>13.2f}x")


if __name__ == "__main__":
    main()
