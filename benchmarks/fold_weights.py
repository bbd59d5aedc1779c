"""What folding the weights at build time saves: a small MLP imported from PyTorch, and
the batch norms of a network from the onnx wheel.

Run: ``python benchmarks/fold_weights.py [--rounds 5] [--model resnet50|shufflenet|none]``
(the MLP needs torch, the network onnx and onnxruntime).

The 784-128-10 MLP (``nn.Linear`` stores its weight as ``(out, in)``, so the imported
graph transposes each weight) goes through ``from_fx`` and is built twice: by
``relax.build`` as it is (FoldConstant first: the transposes run once, at build time)
and with FoldConstant taken out of the pipeline (the transposes run on every call).
Both run at batch 1 in the VM and are timed against torch in the same run; the ratios
are ``reference / ours`` (above 1: ours is faster).

The network (ResNet-50 by default: 53 convolutions, each followed by a batch norm) is
built by ``relax.build`` as it is (FoldBatchnormToConv2D folds every batch norm into the
convolution before it) and with FoldBatchnormToConv2D taken out (each batch norm is a
kernel of its own, run on every call), and both are timed against onnxruntime in the
same run.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir.transform import Sequential
from mlcbench.target import Target

from timing import call, compare


def _without(pass_name: str):
    passes = [p for p in relax.get_pipeline("default").passes if p.info.name != pass_name]
    return Sequential(passes, name=f"default_without_{pass_name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--model", default="resnet50",
                        help="light model of the onnx wheel for the batch-norm figures "
                             "(resnet50, shufflenet, densenet121, inception_v2) or none")
    args = parser.parse_args()
    host = Target("llvm")
    print(f"host CPU {host.mcpu}, vector width {host.vector_width_bits} bits, "
          f"{host.num_cores} cores")
    mlp_figures(args.rounds)
    if args.model != "none":
        batchnorm_figures(args.model, args.rounds)


def mlp_figures(rounds: int) -> None:
    import torch
    from mlcbench.relax.frontend.torch import from_fx
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                              torch.nn.Linear(128, 10)).eval()
    mod = from_fx(torch.fx.symbolic_trace(net), [((1, 784), "float32")])
    x = torch.randn(1, 784)
    data = tvm.nd.array(x.numpy())
    expected = net(x).detach().numpy()
    contenders = {}
    for name, pipeline in [("folded", "default"), ("unfolded", _without("FoldConstant"))]:
        vm = relax.VirtualMachine(relax.build(mod, "llvm", pipeline=pipeline), tvm.cpu())
        np.testing.assert_allclose(vm["main"](data).numpy(), expected, rtol=1e-4, atol=1e-4)
        contenders[name] = call(lambda vm=vm: vm["main"](data))
    with torch.no_grad():
        contenders["torch"] = call(lambda: net(x))
    best = compare(contenders, rounds=rounds)
    print("784-128-10 MLP from from_fx, batch 1 (weight transposes folded or not)")
    for name in ("folded", "unfolded"):
        print(f"{name:9s} {best[name] * 1e6:8.1f} us per call   torch / ours "
              f"{best['torch'] / best[name]:5.2f}")
    print(f"torch     {best['torch'] * 1e6:8.1f} us per call")


def batchnorm_figures(model_name: str, rounds: int) -> None:
    import onnxruntime
    from mlcbench.relax.frontend.onnx import from_onnx
    from mlcbench.relay.testing import light_model_case
    model, inputs, stored = light_model_case(model_name)
    mod = from_onnx(model)
    print(f"{model_name} from the onnx wheel, batch 1: {mod.script().count('batch_norm(')} "
          f"batch norms (folded into the convolutions or not)")
    data = [tvm.nd.array(np.ascontiguousarray(a)) for a in inputs.values()]
    contenders = {}
    for name, pipeline in [("folded", "default"),
                           ("unfolded", _without("FoldBatchnormToConv2D"))]:
        start = time.perf_counter()
        ex = relax.build(mod, "llvm", pipeline=pipeline)
        print(f"{name:9s} built in {time.perf_counter() - start:5.1f} s")
        vm = relax.VirtualMachine(ex, tvm.cpu())
        np.testing.assert_allclose(vm["main"](*data).numpy(), stored, rtol=1e-3, atol=1e-5)
        contenders[name] = call(lambda vm=vm: vm["main"](*data))
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    contenders["onnxruntime"] = call(lambda: session.run(None, inputs))
    best = compare(contenders, rounds=rounds)
    for name in ("folded", "unfolded"):
        print(f"{name:9s} {best[name] * 1e3:8.2f} ms per call   onnxruntime / ours "
              f"{best['onnxruntime'] / best[name]:5.3f}")
    print(f"onnxruntime {best['onnxruntime'] * 1e3:6.2f} ms per call;  unfolded / folded "
          f"{best['unfolded'] / best['folded']:5.3f}")


if __name__ == "__main__":
    main()
