"""The nine light models of the onnx wheel (ResNet-50, SqueezeNet, VGG19, AlexNet,
DenseNet-121, Inception v1 and v2, ShuffleNet, ZFNet-512) through ``from_onnx``,
``relax.build`` (default schedules, untuned) and the VM, against onnxruntime.

Run: ``python benchmarks/models.py [--models squeezenet resnet50] [--rounds 3]
[--compile-only | --latency-only] [--tune-trials N [--tune-dir DIR]]``.

Per model: import seconds; ``relax.build`` seconds cold (an empty kernel cache) and from
the cache (a second process, same cache directory: the model cache's entry, see
``mlcbench.relax.model_cache``), each in a process of its own,
and the peak resident memory of the cold one (its ``ru_maxrss``: Python, the model and
the build); then, unless ``--compile-only``, our latency at batch 1 and onnxruntime's
(best mean of ``--rounds`` interleaved rounds, see ``timing.py``), their ratio (ours /
onnxruntime: above 1 means slower), and the largest difference from the output stored in
the wheel and from onnxruntime's. The input is the ramp onnx's backend test feeds these
models. The cache directory is a temporary one, removed at the end.

``--cpu-time`` (with ``OMP_NUM_THREADS=1``) times the calling thread's CPU seconds
instead of wall seconds, for a machine that other processes keep busy.

Winograd 3x3 convolutions are on by default where they pay (the NHWC convolutions a CPU
build makes, see ``mlcbench/relax/op/winograd.py``); ``--no-winograd`` builds with
``relax.conv2d.winograd=False`` (every convolution direct), ``--winograd`` with ``True``
(also NCHW convolutions), the compile and latency columns alike.

``--tune-trials N`` also tunes the model's kernels (``meta_schedule.tune_relax``, one budget
of N trials shared by the gradient task scheduler, 16 per round, each kernel's default and
two fastest programs measured again in turn at the end) and times the build with
each kernel's best record (``compile_relax``) beside the untuned one and onnxruntime, in
the same interleaved rounds. ``--tune-dir`` keeps the tuning database (one folder per
model); ``--tune-trials 0`` with it times the records already there without tuning.

``--latency-only`` skips the compile columns and builds with the usual kernel cache
(``MLCBENCH_CACHE_DIR`` or the default), so comparing schedules on the large models does
not rebuild them cold. With ``OMP_NUM_THREADS`` set (the threads of our parallel
kernels) onnxruntime gets as many intra-op threads: on a busy machine both sides can
then be compared on one core each.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import mlcbench
from mlcbench import relax
from mlcbench.ir.transform import PassContext
from mlcbench.relax.frontend.onnx import from_onnx
from mlcbench.relay.testing import light_model_case
from mlcbench.target import Target

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # the sibling timing.py
from timing import host_line, call, compare, thread_cpu  # noqa: E402

MODELS = ("squeezenet", "shufflenet", "bvlc_alexnet", "zfnet512", "vgg19", "inception_v1",
          "inception_v2", "resnet50", "densenet121")


def build_options(winograd: bool | None) -> PassContext:
    """The PassContext of every build: ``relax.conv2d.winograd`` set only when given."""
    return PassContext(config={} if winograd is None else {"relax.conv2d.winograd": winograd})


def _winograd_flag(winograd: bool | None) -> list:
    return [] if winograd is None else ["--winograd" if winograd else "--no-winograd"]


def measure_build(name: str, winograd: bool | None = None) -> dict:
    """In this process: import ``name``, time ``relax.build``, report the peak memory."""
    from mlcbench.codegen import kernel_cache
    from mlcbench.relax import model_cache
    model = light_model_case(name)[0]
    start = time.perf_counter()
    mod = from_onnx(model)
    imported, before = time.perf_counter(), os.times()
    with build_options(winograd):
        relax.build(mod, "llvm")
    built, after = time.perf_counter(), os.times()
    cpu = sum(after[:4]) - sum(before[:4])      # this process and its build workers
    peak_kb = _peak_kb()
    return {"import": imported - start, "build": built - imported, "build_cpu": cpu,
            "peak_mb": peak_kb / 1024,
            "cache_hits": kernel_cache.stats()["hits"] + model_cache.stats()["hits"]}


def _peak_kb() -> int:
    """This process's peak resident memory in kilobytes: ``VmHWM``, which belongs to the
    process's own memory map. ``ru_maxrss`` survives ``exec`` on Linux, so a child
    started by a parent that holds built models reported the parent's peak (3442 MB for
    every large model, against 955 for ResNet-50 measured alone)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss   # kilobytes on Linux


def build_in_child(name: str, cache_dir: str, winograd: bool | None = None) -> dict:
    """:func:`measure_build` in a fresh process whose kernel cache is ``cache_dir``."""
    env = dict(os.environ, MLCBENCH_CACHE_DIR=cache_dir)
    env.pop("MLCBENCH_KERNEL_CACHE", None)
    child = subprocess.run([sys.executable, __file__, "--build-only", name]
                           + _winograd_flag(winograd), env=env,
                           capture_output=True, text=True)
    if child.returncode != 0:
        raise SystemExit(f"building {name} failed:\n{child.stderr}")
    return json.loads(child.stdout.splitlines()[-1])


def measure_latency(name: str, args) -> dict:
    import onnxruntime as ort
    model, inputs, stored = light_model_case(name)
    (input_name, data), = inputs.items()
    mod = from_onnx(model)
    with build_options(args.winograd):
        ex = relax.build(mod, "llvm")
        tuned = tuned_build(name, mod, args)
    x = mlcbench.nd.array(data)
    vms = {"mlcbench": relax.VirtualMachine(ex, mlcbench.cpu())}
    if tuned is not None:
        vms["tuned"] = relax.VirtualMachine(tuned, mlcbench.cpu())
    outputs = {label: vm["main"](x).numpy() for label, vm in vms.items()}
    options = ort.SessionOptions()
    if os.environ.get("OMP_NUM_THREADS"):      # our kernels' thread count: the same cores
        options.intra_op_num_threads = int(os.environ["OMP_NUM_THREADS"])
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    theirs = session.run(None, {input_name: data})[0]
    timer = thread_cpu if args.cpu_time else call
    callables = {label: timer(lambda vm=vm: vm["main"](x)) for label, vm in vms.items()}
    callables["onnxruntime"] = timer(lambda: session.run(None, {input_name: data}))
    best = compare(callables, rounds=args.rounds, min_repeat_ms=200)
    result = {"ours_ms": best["mlcbench"] * 1e3, "ort_ms": best["onnxruntime"] * 1e3,
              "err_stored": max(float(np.abs(o - stored).max()) for o in outputs.values()),
              "err_ort": max(float(np.abs(o - theirs).max()) for o in outputs.values())}
    if tuned is not None:
        result["tuned_ms"] = best["tuned"] * 1e3
    return result


def tuned_build(name: str, mod, args):
    """The model built with its kernels' best tuning records (None without tuning)."""
    if not args.tune_trials and not args.tune_dir:
        return None
    from mlcbench import meta_schedule as ms
    target = Target("llvm")
    with tempfile.TemporaryDirectory(prefix="mlcbench-tune-") as scratch:
        work_dir = os.path.join(args.tune_dir or scratch, name)
        if args.tune_trials:
            # The default and the two fastest programs of each kernel measured again in
            # turn at the end: measured once, ResNet-50's 3x3 stride-2 128-channel default
            # met a busy spell (1.8 ms against 1.13 in the model) and lost to a program
            # that runs 1.75 ms in the model.
            ms.relax_integration.tune_relax(mod, None, target, work_dir,
                                            max_trials_global=args.tune_trials,
                                            num_trials_per_iter=16, seed=0,
                                            remeasure_top_k=2)
        database = ms.JSONDatabase(work_dir=work_dir)
        return ms.relax_integration.compile_relax(database, mod, target)


def measure(name: str, args) -> dict:
    if args.latency_only:
        return measure_latency(name, args)
    with tempfile.TemporaryDirectory(prefix="mlcbench-kernel-cache-") as cache_dir:
        cold = build_in_child(name, cache_dir, args.winograd)
        cached = build_in_child(name, cache_dir, args.winograd)
        if cached["cache_hits"] == 0:
            print(f"  ({name}: the second build found nothing in the cache; was the source "
                  "edited meanwhile?)", file=sys.stderr)
        result = {"import": cold["import"], "cold": cold["build"], "cached": cached["build"],
                  "cold_cpu": cold["build_cpu"], "cached_cpu": cached["build_cpu"],
                  "peak_mb": cold["peak_mb"]}
        if not args.compile_only:
            os.environ["MLCBENCH_CACHE_DIR"] = cache_dir
            result.update(measure_latency(name, args))
    return result


def print_row(name: str, r: dict) -> None:
    row = f"{name:<14}"
    if "cold" in r:
        row += (f"{r['import']:>9.1f}{r['cold']:>9.1f}{r['cached']:>9.2f}"
                f"{r['cold_cpu']:>9.1f}{r['cached_cpu']:>9.2f}{r['peak_mb']:>9.0f}")
    if "ours_ms" in r:
        row += (f"{r['ours_ms']:>10.1f}{r['ort_ms']:>9.2f}{r['ours_ms'] / r['ort_ms']:>8.1f}"
                f"{r['err_stored']:>12.1e}{r['err_ort']:>10.1e}")
    if "tuned_ms" in r:
        row += f"{r['tuned_ms']:>10.1f}{r['tuned_ms'] / r['ort_ms']:>8.2f}"
    print(row, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=MODELS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compile-only", action="store_true",
                        help="only the compile-time and memory columns (no latency)")
    parser.add_argument("--latency-only", action="store_true",
                        help="only the latency columns, built with the usual kernel cache")
    parser.add_argument("--cpu-time", action="store_true",
                        help="latency as the calling thread's CPU time (a busy machine; "
                             "only with OMP_NUM_THREADS=1)")
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--winograd", dest="winograd", action="store_true", default=None,
                        help="build with relax.conv2d.winograd=True (NCHW layers too)")
    choice.add_argument("--no-winograd", dest="winograd", action="store_false",
                        help="build with relax.conv2d.winograd=False (direct convolutions)")
    parser.add_argument("--tune-trials", type=int, default=0,
                        help="tune each model's kernels with this many trials in all")
    parser.add_argument("--tune-dir", default=None,
                        help="keep the tuning databases here (one folder per model); "
                             "with --tune-trials 0, time the records already there")
    parser.add_argument("--build-only", metavar="MODEL", choices=MODELS,
                        help=argparse.SUPPRESS)   # the child process of the compile columns
    args = parser.parse_args()
    if args.cpu_time and os.environ.get("OMP_NUM_THREADS") != "1":
        parser.error("--cpu-time counts the calling thread only: set OMP_NUM_THREADS=1")
    if args.build_only:
        print(json.dumps(measure_build(args.build_only, args.winograd)))
        return
    print(host_line() + (", thread CPU time" if args.cpu_time else ""))
    header = f"{'model':<14}"
    if not args.latency_only:
        header += (f"{'import s':>9}{'cold s':>9}{'cached s':>9}{'cold cpu':>9}"
                   f"{'cch cpu':>9}{'peak MB':>9}")
    if not args.compile_only:
        header += f"{'ours ms':>10}{'ort ms':>9}{'ratio':>8}{'err stored':>12}{'err ort':>10}"
    if (args.tune_trials or args.tune_dir) and not args.compile_only:
        header += f"{'tuned ms':>10}{'t ratio':>8}"
    print(header)
    for name in args.models:
        print_row(name, measure(name, args))
    if not args.latency_only:
        print("cold s / cached s = relax.build with an empty kernel cache / in a second process "
              "with the first one's cache, in wall seconds; cold cpu / cch cpu = the same "
              "builds' CPU seconds, build workers included (steadier on a busy machine); "
              "peak MB = the cold process's maximum resident memory")
    if not args.compile_only:
        print("ratio = mlcbench latency / onnxruntime latency in the same run (untuned, "
              "default schedules; above 1: slower)")
        if args.tune_trials or args.tune_dir:
            print(f"tuned ms / t ratio = the build with each kernel's best record "
                  f"({args.tune_trials} trials per model; 0: records from --tune-dir), and "
                  f"its ratio to onnxruntime; err columns: the worse of both builds")


if __name__ == "__main__":
    main()
