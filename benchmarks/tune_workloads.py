"""Where tuning pays: ResNet-50 and transformer-block (BERT-base, 128 tokens) kernels,
their default schedule against the machine's FMA peak, and ``ms.tune_tir`` against the
default where the default is below 80% of the peak.

Run: ``python benchmarks/tune_workloads.py [--survey-only] [--trials 256] [--only conv]``.

First every workload's default schedule (``dlight`` default CPU rules, what an untuned
build applies) is built, checked against numpy and timed: GFLOPS and share of the
peak (``mlcbench.driver.machine_peaks``). The weight of a convolution or a dense layer
is a constant of its model, so it is timed as ``relax.build`` runs the kernel: a
schedule that packs the weight packs it once, before the timing (``prepacked``), and
the tuner measures its candidates the same way (``tune_tir(constant_params=...)``). Then each one below ``--threshold`` of the peak
is tuned for ``--trials`` trials (default design space, evolutionary search, adaptive
measurement); the tuned program and the default are timed again in interleaved rounds
(best of ``--rounds``), and the ratio says whether tuning beat the default by 10%.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("GOMP_SPINCOUNT", "10000")   # before libgomp loads: see parallel.py

import numpy as np  # noqa: E402

import mlcbench  # noqa: E402
from mlcbench import dlight, te, topi  # noqa: E402
from mlcbench import meta_schedule as ms  # noqa: E402
from mlcbench.ir import structural_hash  # noqa: E402
from mlcbench.meta_schedule.default_schedule import default_schedule  # noqa: E402
from mlcbench.meta_schedule.prepacked import (prepacked_arguments,  # noqa: E402
                                              split_for_measurement)
from mlcbench.meta_schedule.utils import estimate_flops  # noqa: E402
from mlcbench.driver.machine_peaks import machine_peaks  # noqa: E402
from mlcbench.target import Target, host_cpu_name  # noqa: E402
from mlcbench.topi import testing as ref  # noqa: E402
from timing import compare, kernel  # noqa: E402

TARGET = "llvm --num-cores=2"


# Each workload: (inputs, output, numpy reference, indices of the constant inputs).
def _conv(c_in, c_out, size, k, stride=1):
    pad = k // 2
    x = te.placeholder((1, c_in, size, size), name="x")
    w = te.placeholder((c_out, c_in, k, k), name="w")
    return [x, w], topi.nn.conv2d_nchw(x, w, stride, pad, 1), (
        lambda a, b: ref.conv2d_nchw_python(a, b, stride, (pad,) * 4)), (1,)


def _dense(m, k, n):
    x, w = te.placeholder((m, k), name="x"), te.placeholder((n, k), name="w")
    return [x, w], topi.nn.dense(x, w), lambda a, b: a @ b.T, (1,)


def _batch_matmul(batch, m, n, k, transpose_b):
    a = te.placeholder((batch, m, k), name="a")
    b = te.placeholder((batch, n, k) if transpose_b else (batch, k, n), name="b")
    return [a, b], topi.nn.batch_matmul(a, b, transpose_b=transpose_b), (
        lambda x, y: x @ (np.swapaxes(y, 1, 2) if transpose_b else y)), ()


WORKLOADS = {
    "resnet50 conv 7x7/2 224 3->64": lambda: _conv(3, 64, 224, 7, stride=2),
    "resnet50 conv 1x1 56 64->256": lambda: _conv(64, 256, 56, 1),
    "resnet50 conv 3x3 56 64->64": lambda: _conv(64, 64, 56, 3),
    "resnet50 conv 3x3 28 128->128": lambda: _conv(128, 128, 28, 3),
    "resnet50 conv 1x1 14 256->1024": lambda: _conv(256, 1024, 14, 1),
    "resnet50 conv 3x3 7 512->512": lambda: _conv(512, 512, 7, 3),
    "bert dense 128x768x768": lambda: _dense(128, 768, 768),
    "bert dense 128x768x3072": lambda: _dense(128, 768, 3072),
    "bert dense 128x3072x768": lambda: _dense(128, 3072, 768),
    "bert q@k^T 12x128x128x64": lambda: _batch_matmul(12, 128, 128, 64, True),
    "bert attn@v 12x128x64x128": lambda: _batch_matmul(12, 128, 64, 128, False),
}


class Workload:
    """One kernel: its unscheduled module, default-scheduled library, arguments."""

    def __init__(self, name: str):
        inputs, output, self.reference, self.constants = WORKLOADS[name]()
        self.name = name
        self.mod = mlcbench.IRModule({"main": te.create_prim_func(inputs + [output])})
        self.flops = estimate_flops(self.mod)
        rng = np.random.default_rng(0)
        self.inputs = [rng.standard_normal([int(d) for d in t.shape]).astype("float32")
                       for t in inputs]
        self.out_shape = [int(d) for d in output.shape]
        with Target(TARGET):
            default = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(self.mod)
        self.default = self.built(default)

    def built(self, mod):
        """``(library, arguments)`` of a scheduled ``mod`` as its model runs it (a packed
        constant packed once), checked against numpy."""
        lib = mlcbench.build(split_for_measurement(mod, self.constants), target=TARGET)
        out = mlcbench.nd.array(np.zeros(self.out_shape, "float32"))
        args = [mlcbench.nd.array(a) for a in self.inputs] + [out]
        args = prepacked_arguments(lib, lib["main"], args)
        lib["main"](*args)
        np.testing.assert_allclose(out.numpy(), self.reference(*self.inputs), rtol=2e-3,
                                   atol=2e-3)
        return lib, args

    def timers(self, **built):
        return {label: kernel(lib, "main", *args) for label, (lib, args) in built.items()}

    def gflops(self, seconds: float) -> float:
        return self.flops / seconds / 1e9


def tune(workload: Workload, trials: int, seed: int, remeasure: int):
    """The tuned library, the tuning wall time per trial, and what the tuner picked:
    ``"default"`` (the default schedule won) or ``"tuned"``."""
    work_dir = tempfile.mkdtemp(prefix="tune_workloads_")
    start = time.perf_counter()
    database = ms.tune_tir(workload.mod, TARGET, work_dir, max_trials_global=trials,
                           num_trials_per_iter=32, seed=seed, progress_bar=False,
                           remeasure_top_k=remeasure, constant_params=workload.constants)
    per_trial = (time.perf_counter() - start) / trials
    record = database.query_tuning_record(workload.mod, TARGET)
    scheduled = record.as_schedule().mod
    default = default_schedule(workload.mod, Target(TARGET))
    picked = "default" if default is not None and structural_hash(
        default.mod) == structural_hash(scheduled) else "tuned"
    return workload.built(scheduled), per_trial, picked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threshold", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--remeasure", type=int, default=2,
                        help="programs measured again beside the default at the end "
                             "(remeasure_top_k; 0: none, the default included)")
    parser.add_argument("--survey-only", action="store_true")
    parser.add_argument("--only", nargs="*", default=None,
                        help="the workloads whose names contain one of these words")
    args = parser.parse_args()
    host = Target(TARGET)
    names = [n for n in WORKLOADS if not args.only or any(w in n for w in args.only)]
    workloads = [Workload(name) for name in names]
    timed = [(w, compare(w.timers(default=w.default), args.rounds)["default"])
             for w in workloads]
    # The peak after the kernels ran: a cached figure one of them beat is measured again.
    peaks = machine_peaks(kernel_gflops=max(w.gflops(s) for w, s in timed))
    print(f"host CPU {host_cpu_name()}, vector width {host.vector_width_bits} bits, "
          f"{host.num_cores} cores; {peaks.describe()}; load {os.getloadavg()[0]:.1f}")
    print(f"\n{'default schedule':<32}{'ms':>8}{'GFLOPS':>8}{'of peak':>8}")
    slow = []
    for w, seconds in timed:
        share = w.gflops(seconds) / peaks.gflops
        print(f"{w.name:<32}{seconds * 1e3:8.3f}{w.gflops(seconds):8.1f}{share:8.0%}")
        slow += [w] if share < args.threshold else []
    if args.survey_only or not slow:
        return
    print(f"\n{'tuned, ' + str(args.trials) + ' trials':<32}{'s/trial':>8}{'default':>9}"
          f"{'tuned':>8}{'of peak':>8}{'tuned/default':>15}  pick, load")
    for w in slow:
        tuned, per_trial, picked = tune(w, args.trials, args.seed, args.remeasure)
        best = compare(w.timers(default=w.default, tuned=tuned), args.rounds)
        speedup = best["default"] / best["tuned"]
        peaks = machine_peaks(kernel_gflops=w.gflops(best["tuned"]))
        print(f"{w.name:<32}{per_trial:8.2f}{w.gflops(best['default']):9.1f}"
              f"{w.gflops(best['tuned']):8.1f}{peaks.share(w.gflops(best['tuned'])):>8}"
              f"{speedup:14.2f}x  {picked}, {os.getloadavg()[0]:.1f}  "
              f"{'beats by 10%' if speedup >= 1.1 else 'not 10% faster'}", flush=True)


if __name__ == "__main__":
    main()
