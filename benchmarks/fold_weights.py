"""What folding the weights at build time saves: a small MLP imported from PyTorch, the
packing of dense weights, and the batch norms and weight packing of a network from the
onnx wheel.

Run: ``python benchmarks/fold_weights.py [--rounds 5] [--model resnet50|shufflenet|none]``
(the MLP needs torch, the network onnx and onnxruntime).

The 784-128-10 MLP (``nn.Linear`` stores its weight as ``(out, in)``, so the imported
graph transposes each weight) goes through ``from_fx`` and is built twice: by
``relax.build`` as it is (FoldConstant first: the transposes run once, at build time)
and with FoldConstant taken out of the pipeline (the transposes run on every call).
Both run at batch 1 in the VM and are timed against torch in the same run; the ratios
are ``reference / ours`` (above 1: ours is faster).

Two dense layers with a constant weight are built by ``relax.build`` as it is
(PrepackWeights packs the weight into the kernel's panels once, at build time) and with
PrepackWeights taken out (the kernel packs it on every call), timed against numpy.

The network (ResNet-50 by default: 53 convolutions, each followed by a batch norm) is
built as it is, without FoldBatchnormToConv2D (each batch norm stays, fused after its
convolution) and without PrepackWeights (each convolution packs its weight on every
call), all timed against onnxruntime in the same run.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir.transform import Sequential

from timing import host_line, call, compare


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
    print(host_line())
    mlp_figures(args.rounds)
    packing_figures(args.rounds)
    if args.model != "none":
        network_figures(args.model, args.rounds)


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


def _versions(mod, data, expected, versions, tolerance=1e-4):
    """{name: Timer} of ``mod`` built by each pipeline of ``versions``, outputs checked."""
    contenders = {}
    for name, pipeline in versions:
        start = time.perf_counter()
        vm = relax.VirtualMachine(relax.build(mod, "llvm", pipeline=pipeline), tvm.cpu())
        print(f"  {name:22s} built in {time.perf_counter() - start:5.1f} s")
        np.testing.assert_allclose(vm["main"](*data).numpy(), expected, rtol=tolerance,
                                   atol=tolerance)
        contenders[name] = call(lambda vm=vm: vm["main"](*data))
    return contenders


def _report(best, reference: str, unit: float, label: str) -> None:
    for name, seconds in best.items():
        ratio = "" if name == reference else \
            f"   {reference} / ours {best[reference] / seconds:6.3f}"
        print(f"  {name:22s} {seconds * unit:9.2f} {label} per call{ratio}")


def packing_figures(rounds: int) -> None:
    rng = np.random.default_rng(0)
    for m, k, n in [(128, 1024, 1024), (16, 1024, 1024)]:
        weight = rng.standard_normal((k, n)).astype("float32")
        x = rng.standard_normal((m, k)).astype("float32")
        bb = relax.BlockBuilder()
        var = relax.Var("x", relax.TensorStructInfo((m, k), "float32"))
        with bb.function("main", [var]):
            with bb.dataflow():
                gv = bb.emit_output(relax.op.matmul(var, relax.const(weight)))
            bb.emit_func_output(gv)
        print(f"dense {m}x{k}x{n}, constant weight (packed into panels at build time or on "
              f"every call)")
        contenders = _versions(bb.get(), [tvm.nd.array(x)], x @ weight,
                               [("prepacked", "default"),
                                ("packing per call", _without("PrepackWeights"))], 1e-3)
        contenders["numpy"] = call(lambda: x @ weight)
        best = compare(contenders, rounds=rounds)
        _report(best, "numpy", 1e3, "ms")
        print(f"  packing per call / prepacked "
              f"{best['packing per call'] / best['prepacked']:5.3f}")


def network_figures(model_name: str, rounds: int) -> None:
    import onnxruntime
    from mlcbench.relax.frontend.onnx import from_onnx
    from mlcbench.relay.testing import light_model_case
    model, inputs, stored = light_model_case(model_name)
    mod = from_onnx(model)
    print(f"{model_name} from the onnx wheel, batch 1, "
          f"{mod.script().count('batch_norm(')} batch norms")
    data = [tvm.nd.array(np.ascontiguousarray(a)) for a in inputs.values()]
    contenders = _versions(mod, data, stored, [
        ("default", "default"), ("batch norms kept", _without("FoldBatchnormToConv2D")),
        ("packing per call", _without("PrepackWeights"))], 1e-3)
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    contenders["onnxruntime"] = call(lambda: session.run(None, inputs))
    best = compare(contenders, rounds=rounds)
    _report(best, "onnxruntime", 1e3, "ms")
    for name in ("batch norms kept", "packing per call"):
        print(f"  {name} / default {best[name] / best['default']:5.3f}")


if __name__ == "__main__":
    main()
