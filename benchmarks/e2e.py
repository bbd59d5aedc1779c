"""Whole models through Relax: the digits MLP and CNN, fused and unfused, against numpy
(and onnxruntime running the same model, when installed).

Run: ``python benchmarks/e2e.py [--rounds 3] [--threads 2]`` (about half a minute).

For each model and batch the table gives the VM's latency with the default pipeline
(LegalizeOps, FuseOps, FuseTIR ...) and with LegalizeOps only (one kernel per op), the
ratio ``unfused / fused`` and ``reference / fused`` (above 1: the fused build is
faster); kernels launched per forward before and after fusion; the planned storage of
the intermediate tensors against their sum (no reuse): storage is shared by tensors that
are never alive together, and an elementwise kernel (bias add, relu) writes its output
over an input that dies at the call. Timings drift on a shared
machine, so each figure is the best of several rounds run one after another.
"""
from __future__ import annotations

import argparse
import os
import resource
import time

os.environ.setdefault("GOMP_SPINCOUNT", "10000")   # before libgomp loads

import numpy as np  # noqa: E402

import mlcbench  # noqa: E402
from mlcbench import datasets, relax  # noqa: E402
from mlcbench.driver.models import export_digits_model  # noqa: E402
from mlcbench.relax.transform.legalize_ops import LegalizeOps  # noqa: E402
from mlcbench.target import Target  # noqa: E402
from timing import call, compare, host_line, kernel  # noqa: E402

CASES = [("mlp", 1), ("mlp", 64), ("cnn", 1), ("cnn", 64)]


def kernel_launches(mod, func="forward") -> int:
    """PrimFunc calls one run of ``func`` makes (through fused Relax functions too)."""
    count = []

    def visit(expr):
        if not isinstance(expr, relax.Call):
            return
        if isinstance(expr.op, mlcbench.ir.Op) and expr.op.name == "relax.call_tir":
            count.append(1)
        elif isinstance(expr.op, mlcbench.ir.GlobalVar) and isinstance(mod[expr.op],
                                                                        relax.Function):
            count.append(kernel_launches(mod, expr.op.name_hint))

    relax.analysis.post_order_visit(mod[func], visit)
    return sum(count)


def numpy_forward(name, params):
    if name == "mlp":
        return lambda x: datasets.mlp_forward(x, params)
    return lambda x: datasets.cnn_forward(x, params)


def onnx_model(name: str, params: dict, batch: int):
    """The model written with ``onnx.helper`` (weights as initializers), or None."""
    try:
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    node = helper.make_node
    if name == "mlp":
        shape, out = [batch, 64], "logits"
        weights = {"w0": params["w0"], "b0": params["b0"], "w1": params["w1"], "b1": params["b1"]}
        nodes = [node("Gemm", ["x", "w0", "b0"], ["h"], transB=1), node("Relu", ["h"], ["r"]),
                 node("Gemm", ["r", "w1", "b1"], [out], transB=1)]
    else:
        shape, out = [batch, 1, 8, 8], "probs"
        weights = {key.replace(".", "_"): value for key, value in params.items()}
        nodes = [node("Conv", ["x", "conv_weight", "conv_bias"], ["c"], pads=[1, 1, 1, 1]),
                 node("Relu", ["c"], ["cr"]),
                 node("MaxPool", ["cr"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                 node("Flatten", ["p"], ["f"]),
                 node("Gemm", ["f", "fc1_weight", "fc1_bias"], ["h"], transB=1),
                 node("Relu", ["h"], ["hr"]),
                 node("Gemm", ["hr", "fc2_weight", "fc2_bias"], ["z"], transB=1),
                 node("Softmax", ["z"], [out], axis=1)]
    graph = helper.make_graph(
        nodes, f"digits_{name}", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [batch, 10])],
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def onnx_runner(name, params, batch, threads):
    """``run(x)`` with onnxruntime, or None when onnx / onnxruntime are not installed."""
    try:
        import onnxruntime
    except ImportError:
        return None
    model = onnx_model(name, params, batch)
    if model is None:
        return None
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    return lambda x: session.run(None, {"x": x})[0]


def measure(name, batch, rounds, threads):
    """One row of the table (a dict of figures)."""
    mod, weights = export_digits_model(name, batch)
    params = datasets.load_mlp_params() if name == "mlp" else datasets.load_cnn_params()
    _, _, x_test, _ = datasets.load_digits(flat=name == "mlp")
    x = np.ascontiguousarray(x_test[:batch])
    expected = numpy_forward(name, params)(x)
    target = Target(f"llvm --num-cores={threads}")
    fused_mod = relax.get_pipeline("zero")(mod)
    unfused_mod = LegalizeOps()(mod)
    fused = relax.VirtualMachine(relax.build(fused_mod, target, pipeline="vm_lowering"),
                                 mlcbench.cpu())
    unfused = relax.VirtualMachine(relax.build(unfused_mod, target, pipeline="vm_lowering"),
                                   mlcbench.cpu())
    ort = onnx_runner(name, params, batch, threads)
    for run in [lambda a: fused["forward"](a, *weights).numpy(),
                lambda a: unfused["forward"](a, *weights).numpy()] + ([ort] if ort else []):
        np.testing.assert_allclose(run(x), expected, rtol=1e-4, atol=1e-5)
    contenders = {"fused": kernel(fused, "forward", x, *weights),
                  "unfused": kernel(unfused, "forward", x, *weights),
                  "numpy": call(lambda: numpy_forward(name, params)(x))}
    if ort:
        contenders["ort"] = call(lambda: ort(x))
    best = compare(contenders, rounds, min_repeat_ms=20)
    memory = relax.analysis.estimate_memory_usage(unfused_mod)["forward"]
    return {"best": {key: best.get(key) for key in ("fused", "unfused", "numpy", "ort")},
            "kernels": (kernel_launches(unfused_mod), kernel_launches(fused_mod)),
            "memory": (memory.storage_bytes, memory.intermediate_bytes)}


def format_row(name, batch, row) -> str:
    best = row["best"]
    fused = best["fused"]
    ort = (f"{best['ort'] * 1e3:>8.3f}{best['ort'] / fused:>7.2f}x" if best["ort"]
           else f"{'-':>8}{'-':>8}")
    before, after = row["kernels"]
    planned, total = row["memory"]
    return (f"{name} b{batch:<4}{fused * 1e3:>9.3f}{best['unfused'] * 1e3:>10.3f}"
            f"{best['unfused'] / fused:>8.2f}x{best['numpy'] * 1e3:>9.3f}"
            f"{best['numpy'] / fused:>8.2f}x{ort}{before:>5} -> {after:<3}"
            f"{planned / 1024:>8.1f} / {total / 1024:<7.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    start = time.perf_counter()
    print(host_line(args.threads))
    print(f"{'model':<9}{'fused ms':>9}{'unfused ms':>10}{'vs unf':>9}{'numpy ms':>9}"
          f"{'vs np':>9}{'ort ms':>8}{'vs ort':>8}{'kernels':>12}{'plan / sum KiB':>20}")
    for name, batch in CASES:
        print(format_row(name, batch, measure(name, batch, args.rounds, args.threads)),
              flush=True)
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # KiB on Linux
    print(f"threads: {args.threads}; ratio = other time / fused time (above 1: fused "
          f"faster); kernels = launched per forward, unfused -> fused; plan / sum = planned "
          f"storage of the unfused intermediates / their sum without reuse\n"
          f"peak RSS {rss_mib:.0f} MiB; {time.perf_counter() - start:.0f} s in all")


if __name__ == "__main__":
    main()
