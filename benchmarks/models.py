"""The nine light models of the onnx wheel (ResNet-50, SqueezeNet, VGG19, AlexNet,
DenseNet-121, Inception v1 and v2, ShuffleNet, ZFNet-512) through ``from_onnx``,
``relax.build`` (default schedules, untuned) and the VM, against onnxruntime.

Run: ``python benchmarks/models.py [--models squeezenet resnet50] [--rounds 3]``.

Per model: import and build seconds, our latency at batch 1 and onnxruntime's (best mean
of ``--rounds`` interleaved rounds, see ``timing.py``), their ratio (ours / onnxruntime:
above 1 means slower), and the largest difference from the output stored in the wheel and
from onnxruntime's. The input is the ramp onnx's backend test feeds these models.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import numpy as np

import mlcbench
from mlcbench import relax
from mlcbench.relax.frontend.onnx import from_onnx
from mlcbench.relay.testing import light_model_case
from mlcbench.target import Target

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # the sibling timing.py
from timing import call, compare  # noqa: E402

MODELS = ("squeezenet", "shufflenet", "bvlc_alexnet", "zfnet512", "vgg19", "inception_v1",
          "inception_v2", "resnet50", "densenet121")


def measure(name: str, rounds: int) -> dict:
    import onnxruntime as ort
    model, inputs, stored = light_model_case(name)
    (input_name, data), = inputs.items()
    start = time.perf_counter()
    mod = from_onnx(model)
    imported = time.perf_counter()
    ex = relax.build(mod, "llvm")
    built = time.perf_counter()
    vm = relax.VirtualMachine(ex, mlcbench.cpu())
    x = mlcbench.nd.array(data)
    ours = vm["main"](x).numpy()
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    theirs = session.run(None, {input_name: data})[0]
    best = compare({"mlcbench": call(lambda: vm["main"](x)),
                    "onnxruntime": call(lambda: session.run(None, {input_name: data}))},
                   rounds=rounds, min_repeat_ms=200)
    return {"import": imported - start, "build": built - imported,
            "ours_ms": best["mlcbench"] * 1e3, "ort_ms": best["onnxruntime"] * 1e3,
            "err_stored": float(np.abs(ours - stored).max()),
            "err_ort": float(np.abs(ours - theirs).max())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=list(MODELS))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    host = Target("llvm")
    print(f"host CPU {host.mcpu}, vector width {host.vector_width_bits} bits, "
          f"{os.cpu_count()} cores")
    print(f"{'model':<14}{'import s':>9}{'build s':>9}{'ours ms':>10}{'ort ms':>9}"
          f"{'ratio':>8}{'err stored':>12}{'err ort':>10}")
    for name in args.models:
        r = measure(name, args.rounds)
        print(f"{name:<14}{r['import']:>9.1f}{r['build']:>9.1f}{r['ours_ms']:>10.1f}"
              f"{r['ort_ms']:>9.2f}{r['ours_ms'] / r['ort_ms']:>8.1f}"
              f"{r['err_stored']:>12.1e}{r['err_ort']:>10.1e}", flush=True)
    print("ratio = mlcbench latency / onnxruntime latency in the same run (untuned, "
          "default schedules; above 1: slower)")


if __name__ == "__main__":
    main()
