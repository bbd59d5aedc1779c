"""Where a light model's time goes: each kernel of the VM's ``main``, timed per call.

Run: ``python benchmarks/profile_model.py shufflenet [--top 15] [--calls 20]``
(``OMP_NUM_THREADS=1`` in front: one thread for our kernels and for onnxruntime).

The model is imported with ``from_onnx``, built untuned (default schedules, the kernel
cache of ``MLCBENCH_CACHE_DIR`` used) and run ``--calls`` times as it is, then as many
times with every instruction of ``main`` timed with ``perf_counter`` around it (through
the VM's instruction list, so a native call of the whole function is not used there).
Kernels are printed by total time per model call, with their share of the profiled
time and against onnxruntime's best latency of the same model. Timing each instruction
adds about a microsecond, so the shares matter more than the sum.
"""
from __future__ import annotations

import argparse
import collections
import os
import time

import numpy as np

import mlcbench
from mlcbench import relax
from mlcbench.relax.frontend.onnx import from_onnx
from mlcbench.relay.testing import LIGHT_MODELS, light_model_case

from timing import host_line


def timed_instructions(function, totals: dict, counts: dict) -> list:
    """The function's closures, each wrapped to add its seconds to ``totals[label]``."""
    wrapped = []
    for run, record in zip(function._instructions, function._code["code"]):
        label = _label(record)

        def timed(regs, run=run, label=label):
            start = time.perf_counter()
            run(regs)
            totals[label] += time.perf_counter() - start
            counts[label] += 1
        wrapped.append(timed)
    return wrapped


def _label(record) -> str:
    if record[0] != "kernel":
        return f"({record[0]})"
    return record[1]


def profile(name: str, calls: int) -> tuple[dict, dict, float, float]:
    """``(seconds per call by label, kernel calls per model call by label, ms per
    profiled call, best ms of an unprofiled call)``."""
    model, inputs, _ = light_model_case(name)
    (data,) = inputs.values()
    vm = relax.VirtualMachine(relax.build(from_onnx(model), "llvm"), mlcbench.cpu())
    function = vm["main"]
    x = mlcbench.nd.array(data)
    unprofiled_ms = _best_ms(lambda: function(x), calls)
    totals, counts = collections.defaultdict(float), collections.defaultdict(int)
    function.native = None      # run the instruction list, not one native call of it all
    function._instructions = timed_instructions(function, totals, counts)
    start = time.perf_counter()
    for _ in range(calls):
        function(x)
    per_call = (time.perf_counter() - start) / calls
    return ({k: v / calls for k, v in totals.items()},
            {k: v // calls for k, v in counts.items()}, per_call * 1e3, unprofiled_ms)


def _best_ms(run, calls: int) -> float:
    run()                                         # warm-up, untimed
    best = np.inf
    for _ in range(calls):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def onnxruntime_ms(name: str, calls: int) -> float:
    import onnxruntime as ort
    model, inputs, _ = light_model_case(name)
    options = ort.SessionOptions()
    if os.environ.get("OMP_NUM_THREADS"):      # as many threads as our kernels get
        options.intra_op_num_threads = int(os.environ["OMP_NUM_THREADS"])
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return _best_ms(lambda: session.run(None, inputs), calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=LIGHT_MODELS)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    print(host_line())
    seconds, counts, total_ms, plain_ms = profile(args.model, args.calls)
    ort_ms = onnxruntime_ms(args.model, args.calls)
    print(f"{args.model}: best {plain_ms:.2f} ms per call, {total_ms:.2f} profiled; "
          f"onnxruntime best {ort_ms:.2f} ms (ratio {plain_ms / ort_ms:.1f})")
    print(f"{'kernel':<44}{'calls':>6}{'ms':>9}{'share':>8}{'x ort':>8}")
    for label, sec in sorted(seconds.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{label[:43]:<44}{counts[label]:>6}{sec * 1e3:>9.3f}"
              f"{sec * 1e3 / total_ms:>8.1%}{sec * 1e3 / ort_ms:>8.2f}")
    print("x ort = this kernel's milliseconds over onnxruntime's whole-model latency")


if __name__ == "__main__":
    main()
