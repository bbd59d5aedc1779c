"""PyTorch models through both frontends: import and build time, and latency against torch.

Run: ``python benchmarks/torch_models.py [--image 224] [--models resnet18,mobilenet_v2]``.

The networks are those of ``tests/relax/frontend/torch/test_models.py`` (ResNet-18,
MobileNetV2 at width 0.5, a small vision transformer, a BERT encoder block), random
weights, batch 1, in eval mode. For each: seconds to import through ``from_fx`` and
``from_exported_program`` (torch.fx tracing and torch.export included), seconds for
``relax.build`` (default schedules, no tuning), and the latency of torch's eager CPU
run and of the VM, as a ratio to torch measured in the same run (``benchmarks/timing``:
interleaved rounds, best mean). The imported modules are checked against torch first.
torch runs with denormals flushed to zero: the random-weight ResNet-18 makes denormal
activations, which slowed torch's run from 0.53 s to 0.92 s on a 2-core znver1 host.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import time

import numpy as np
import torch

import mlcbench as tvm
from mlcbench import relax
from mlcbench.relax.frontend.torch import from_exported_program, from_fx

from timing import host_line, call, compare

TESTS = os.path.join(os.path.dirname(__file__), "..", "tests", "relax", "frontend", "torch")


def reference_networks():
    spec = importlib.util.spec_from_file_location("torch_test_models",
                                                  os.path.join(TESTS, "test_models.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def models(nets, image: int) -> dict:
    """name -> (model, inputs as numpy arrays)."""
    rng = np.random.default_rng(0)
    picture = [rng.standard_normal((1, 3, image, image)).astype("float32")]
    tokens = [rng.standard_normal((1, 128, 64)).astype("float32"),
              np.zeros((1, 1, 1, 128), "float32")]
    torch.manual_seed(0)
    return {"resnet18": (nets.randomized(nets.ResNet18()), picture),
            "mobilenet_v2": (nets.randomized(nets.MobileNetV2()), picture),
            "vit": (nets.ViT(image=image, patch=max(8, image // 14)).eval(), picture),
            "bert_block_128": (nets.BertLayer().eval(), tokens)}


def import_with(frontend: str, model, inputs):
    info = [(x.shape, str(x.dtype)) for x in inputs]
    with torch.no_grad():
        if frontend == "fx":
            return from_fx(torch.fx.symbolic_trace(model), info)
        program = torch.export.export(model, tuple(torch.from_numpy(x) for x in inputs))
        return from_exported_program(program, unwrap_unit_return_tuple=True)


def measure_model(name, model, inputs) -> None:
    with torch.no_grad():
        expected = model(*(torch.from_numpy(x) for x in inputs)).numpy()
    args = [tvm.nd.array(x) for x in inputs]
    contenders, line = {}, []
    for frontend in ("fx", "export"):
        start = time.perf_counter()
        mod = import_with(frontend, model, inputs)
        imported = time.perf_counter()
        vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
        built = time.perf_counter()
        np.testing.assert_allclose(vm["main"](*args).numpy(), expected, rtol=1e-3, atol=1e-3)
        contenders[frontend] = call(lambda vm=vm: vm["main"](*args))
        line.append(f"{frontend}: import {imported - start:5.1f} s, build "
                    f"{built - imported:5.1f} s")
    torch_inputs = [torch.from_numpy(x) for x in inputs]

    def run_torch():
        with torch.no_grad():
            model(*torch_inputs)
    best = compare({"torch": call(run_torch), **contenders}, rounds=3, min_repeat_ms=200)
    ratios = ", ".join(f"{k} {best[k] / best['torch']:.2f}x" for k in contenders)
    print(f"{name:15s} torch {best['torch'] * 1e3:8.2f} ms | {ratios} | {'; '.join(line)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", type=int, default=224, help="image side (default 224)")
    parser.add_argument("--models", default="resnet18,mobilenet_v2,vit,bert_block_128")
    args = parser.parse_args()
    torch.set_flush_denormal(True)
    print(host_line())
    print(f"torch {torch.__version__} with {torch.get_num_threads()} threads; "
          f"images {args.image}x{args.image}")
    print("latency as a ratio to torch's eager run (lower is faster); mlcbench untuned")
    available = models(reference_networks(), args.image)
    for name in args.models.split(","):
        measure_model(name, *available[name])


if __name__ == "__main__":
    main()
