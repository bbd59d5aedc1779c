"""Small models end to end against onnxruntime, torch and numpy: where a few tiny kernels
meet the VM, the argument checks and the allocation of every call.

Run: ``python benchmarks/small_models.py [--rounds 30] [--threads 2]`` (two to three minutes;
onnxruntime and torch are optional).

Models: the digits MLP (64-128-10) and CNN of ``datasets/`` at batch 1 and 64, and a
784-128-10 MLP written with ``relax.frontend.nn`` (random weights) at batch 1. Each is
timed the way a user calls it, in two settings, each against onnxruntime given the same
model the same way:

- *weights constant*: ours is ``relax.build`` of the model with its weights bound
  (``BindParams``; the default pipeline then folds the weight transposes and packs the
  weights once), onnxruntime gets them as initializers (it packs them once too);
- *weights as arguments*: ours takes them on every call (``export_tvm``'s signature),
  onnxruntime takes them as graph inputs.

Ours flushes denormals to zero inside its kernels (``Target.flush_denormals``, on by
default); onnxruntime does not unless asked. The digits models' trained weights hold
denormals, on which an Intel core takes a microcode assist per multiply-add, so two more
columns give the comparison on equal terms: ours built with ``-flush-denormals=0`` and
onnxruntime with ``session.set_denormal_as_zero``.

Ours is ``vm["forward"](x)`` on a numpy ``x`` (argument checks and the copy in
included), onnxruntime ``session.run(None, {"x": x})``, torch the same ``nn.Sequential``
under ``no_grad``, numpy the model written with ``@``. Ratios are speed, the reference's
time over ours (above 1: ours is faster). Each figure is the best of ``--rounds``
interleaved rounds of short batches (:mod:`mlcbench.runtime.timing`): on a shared
machine a long batch is almost always interrupted.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("GOMP_SPINCOUNT", "10000")   # before libgomp loads

import numpy as np  # noqa: E402

import mlcbench  # noqa: E402
from mlcbench import datasets, relax  # noqa: E402
from mlcbench.driver.models import export_digits_model  # noqa: E402
from mlcbench.relax.frontend import nn  # noqa: E402
from mlcbench.target import Target  # noqa: E402
from e2e import numpy_forward, onnx_model  # noqa: E402
from timing import host_line, call, compare  # noqa: E402

CASES = [("mlp", 1), ("mlp", 64), ("cnn", 1), ("cnn", 64), ("nn784", 1)]


class MLP784(nn.Module):
    """The course's 784-128-10 MLP, written with relax.frontend.nn."""

    def __init__(self):
        self.fc1 = nn.Linear(784, 128)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def mlp784(batch: int):
    """``(mod, weights {name: array}, input, numpy forward, torch module)``."""
    rng = np.random.default_rng(0)
    shapes = {"fc1.weight": (128, 784), "fc1.bias": (128,), "fc2.weight": (10, 128),
              "fc2.bias": (10,)}
    state = {k: (rng.standard_normal(s) * 0.05).astype("float32") for k, s in shapes.items()}
    model = MLP784()
    model.load_state_dict(state)
    mod, _ = model.export_tvm(spec={"forward": {"x": nn.spec.Tensor((batch, 784), "float32")}})
    x = rng.random((batch, 784), dtype=np.float32)

    def forward(a):
        return np.maximum(a @ state["fc1.weight"].T + state["fc1.bias"], 0) \
            @ state["fc2.weight"].T + state["fc2.bias"]
    return mod, state, x, forward


def digits(name: str, batch: int):
    mod, arrays = export_digits_model(name, batch)
    names = [p.name_hint for p in mod["forward"].params[1:]]
    params = datasets.load_mlp_params() if name == "mlp" else datasets.load_cnn_params()
    _, _, x_test, _ = datasets.load_digits(flat=name == "mlp")
    x = np.ascontiguousarray(x_test[:batch])
    return mod, dict(zip(names, [a.numpy() for a in arrays])), x, numpy_forward(name, params)


def onnx_mlp(weights: dict, batch: int):
    """The 784-128-10 MLP written with ``onnx.helper`` (Gemm with transB, as exporters do)."""
    from onnx import TensorProto, helper, numpy_helper
    node = helper.make_node
    nodes = [node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], transB=1),
             node("Relu", ["h"], ["r"]),
             node("Gemm", ["r", "fc2.weight", "fc2.bias"], ["y"], transB=1)]
    graph = helper.make_graph(
        nodes, "mlp784", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 784])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 10])],
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def initializers_as_inputs(model):
    """The same model with its initializers turned into graph inputs."""
    from onnx import helper, numpy_helper
    graph = model.graph
    inputs = list(graph.input) + [
        helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in graph.initializer]
    feeds = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    new = helper.make_graph(list(graph.node), graph.name, inputs, list(graph.output))
    return helper.make_model(new, opset_imports=list(model.opset_import),
                             ir_version=model.ir_version), feeds


def ort_runners(model, threads: int):
    """``{setting: run(x)}`` for both settings, or {} without onnxruntime."""
    try:
        import onnxruntime
    except ImportError:
        return {}
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads

    def session(m):
        return onnxruntime.InferenceSession(m.SerializeToString(), options,
                                            providers=["CPUExecutionProvider"])
    constant = session(model)
    as_inputs, feeds = initializers_as_inputs(model)
    arguments = session(as_inputs)
    options.add_session_config_entry("session.set_denormal_as_zero", "1")
    flushing = session(model)
    return {"const": lambda x: constant.run(None, {"x": x})[0],
            "args": lambda x: arguments.run(None, {"x": x, **feeds})[0],
            "ftz": lambda x: flushing.run(None, {"x": x})[0]}


def torch_runner(weights: dict, threads: int):
    """The 784-128-10 MLP in torch (``no_grad``), or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    net = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                              torch.nn.Linear(128, 10)).eval()
    net.load_state_dict({k.replace("fc1", "0").replace("fc2", "2"): torch.from_numpy(v)
                         for k, v in weights.items()})

    def run(x):
        with torch.no_grad():
            return net(torch.from_numpy(x)).numpy()
    return run


def ours(mod, weights: dict, target, bound: bool):
    """``run(x)``: the model built with its weights bound as constants, or taking them."""
    if bound:
        mod = relax.transform.BindParams("forward", weights)(mod)
    vm = relax.VirtualMachine(relax.build(mod, target), mlcbench.cpu())
    function, args = vm["forward"], [mlcbench.nd.array(w) for w in weights.values()]
    if bound:
        return lambda x: function(x)
    return lambda x: function(x, *args)


def measure(name: str, batch: int, rounds: int, threads: int) -> dict:
    if name == "nn784":
        mod, weights, x, forward = mlp784(batch)
        model = onnx_mlp(weights, batch)
    else:
        mod, weights, x, forward = digits(name, batch)
        model = onnx_model(name, datasets.load_mlp_params() if name == "mlp"
                           else datasets.load_cnn_params(), batch)
    target = Target(f"llvm --num-cores={threads}")
    runs = {"ours const": ours(mod, weights, target, True),
            "ours args": ours(mod, weights, target, False), "numpy": forward,
            "ours ieee": ours(mod, weights, Target(f"{target} -flush-denormals=0"), True)}
    runs.update({f"ort {k}": v for k, v in ort_runners(model, threads).items()})
    torch_run = torch_runner(weights, threads) if name == "nn784" else None
    if torch_run:
        runs["torch"] = torch_run
    expected = forward(x)
    for key, run in runs.items():
        got = run(x)
        got = got.numpy() if hasattr(got, "numpy") else got
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4, err_msg=key)
    return compare({k: call(lambda run=run: run(x)) for k, run in runs.items()}, rounds,
                   min_repeat_ms=1)


def ratio(best: dict, reference: str, ours_key: str) -> str:
    return f"{best[reference] / best[ours_key]:7.2f}x" if reference in best else f"{'-':>8}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    print(host_line(args.threads) + " (for us, onnxruntime and torch)")
    print(f"{'model':<11}{'ours us':>9}{'ort us':>8}{'vs ort':>8}{'vs torch':>9}"
          f"{'vs numpy':>9} |{'ours args':>10}{'ort args':>9}{'vs ort':>8} |"
          f"{'ieee us':>8}{'ort ftz':>8}{'vs ftz':>7}")
    start = time.perf_counter()
    for name, batch in CASES:
        best = measure(name, batch, args.rounds, args.threads)
        ort = f"{best['ort const'] * 1e6:8.1f}" if "ort const" in best else f"{'-':>8}"
        ort_args = f"{best['ort args'] * 1e6:9.1f}" if "ort args" in best else f"{'-':>9}"
        print(f"{name + ' b' + str(batch):<11}{best['ours const'] * 1e6:9.1f}{ort}"
              f"{ratio(best, 'ort const', 'ours const')}"
              f"{ratio(best, 'torch', 'ours const'):>9}{ratio(best, 'numpy', 'ours const')} |"
              f"{best['ours args'] * 1e6:10.1f}{ort_args}"
              f"{ratio(best, 'ort args', 'ours args')} |{best['ours ieee'] * 1e6:8.1f}"
              f"{best.get('ort ftz', float('nan')) * 1e6:8.1f}"
              f"{ratio(best, 'ort ftz', 'ours const')[1:]}", flush=True)
    print(f"ratios: the reference's time / ours (above 1: ours is faster); 'vs torch' only "
          f"for the nn MLP; 'ieee': ours built with -flush-denormals=0 (IEEE denormals), "
          f"'ort ftz': onnxruntime with session.set_denormal_as_zero (weights constant); "
          f"{time.perf_counter() - start:.0f} s in all")


if __name__ == "__main__":
    main()
