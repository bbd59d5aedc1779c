"""What folding the weights at build time saves: a small MLP imported from PyTorch.

Run: ``python benchmarks/fold_weights.py [--rounds 5]`` (needs torch).

The 784-128-10 MLP (``nn.Linear`` stores its weight as ``(out, in)``, so the imported
graph transposes each weight) goes through ``from_fx`` and is built twice: by
``relax.build`` as it is (FoldConstant first: the transposes run once, at build time)
and with FoldConstant taken out of the pipeline (the transposes run on every call).
Both run at batch 1 in the VM and are timed against torch in the same run; the ratios
are ``reference / ours`` (above 1: ours is faster).
"""
from __future__ import annotations

import argparse

import numpy as np

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir.transform import Sequential
from mlcbench.target import Target

from timing import call, compare


def _without_folding():
    passes = [p for p in relax.get_pipeline("default").passes if p.info.name != "FoldConstant"]
    return Sequential(passes, name="default_without_folding")


def main() -> None:
    import torch
    from mlcbench.relax.frontend.torch import from_fx
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    host = Target("llvm")
    print(f"host CPU {host.mcpu}, vector width {host.vector_width_bits} bits, "
          f"{host.num_cores} cores")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                              torch.nn.Linear(128, 10)).eval()
    mod = from_fx(torch.fx.symbolic_trace(net), [((1, 784), "float32")])
    x = torch.randn(1, 784)
    data = tvm.nd.array(x.numpy())
    expected = net(x).detach().numpy()
    contenders = {}
    for name, pipeline in [("folded", "default"), ("unfolded", _without_folding())]:
        vm = relax.VirtualMachine(relax.build(mod, "llvm", pipeline=pipeline), tvm.cpu())
        np.testing.assert_allclose(vm["main"](data).numpy(), expected, rtol=1e-4, atol=1e-4)
        contenders[name] = call(lambda vm=vm: vm["main"](data))
    with torch.no_grad():
        contenders["torch"] = call(lambda: net(x))
    best = compare(contenders, rounds=args.rounds)
    for name in ("folded", "unfolded"):
        print(f"{name:9s} {best[name] * 1e6:8.1f} us per call   torch / ours "
              f"{best['torch'] / best[name]:5.2f}")
    print(f"torch     {best['torch'] * 1e6:8.1f} us per call")


if __name__ == "__main__":
    main()
