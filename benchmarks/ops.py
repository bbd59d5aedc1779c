"""Default-scheduled operators against numpy (and onnxruntime's single-op models).

Run: ``python benchmarks/ops.py [--rounds 5] [--threads 2]``.

Each operator is written with ``mlcbench.topi``, scheduled by
``dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())`` and built. The table
gives milliseconds and the ratio ``reference time / our time`` (above 1: ours is
faster). Every contender is timed the same way by ``timing.compare``: the best mean
per call over several rounds in which ours and the references run one after another.
"""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("GOMP_SPINCOUNT", "10000")   # before libgomp loads

import numpy as np  # noqa: E402

import mlcbench  # noqa: E402
from mlcbench import dlight, te, topi  # noqa: E402
from mlcbench.target import Target  # noqa: E402
from mlcbench.topi import testing as ref  # noqa: E402
from timing import call, compare, kernel  # noqa: E402


def _dense(m, k, n):
    x, w = te.placeholder((m, k), name="x"), te.placeholder((n, k), name="w")
    arrays = [_rand(m, k), _rand(n, k)]
    return [x, w], topi.nn.dense(x, w), arrays, lambda a, b: a @ b.T, ("Gemm", {"transB": 1})


def _conv(c_in, c_out, size, kernel):
    pad = kernel // 2
    x = te.placeholder((1, c_in, size, size), name="x")
    w = te.placeholder((c_out, c_in, kernel, kernel), name="w")
    arrays = [_rand(1, c_in, size, size), _rand(c_out, c_in, kernel, kernel)]
    return ([x, w], topi.nn.conv2d_nchw(x, w, 1, pad, 1), arrays,
            lambda a, b: ref.conv2d_nchw_python(a, b, 1, (pad,) * 4),
            ("Conv", {"pads": [pad] * 4, "kernel_shape": [kernel, kernel]}))


def _softmax(rows, cols):
    x = te.placeholder((rows, cols), name="x")

    def numpy_softmax(a):
        e = np.exp(a - a.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return [x], topi.nn.softmax(x), [_rand(rows, cols)], numpy_softmax, ("Softmax", {"axis": 1})


def _layer_norm(rows, cols):
    x = te.placeholder((rows, cols), name="x")
    g, b = te.placeholder((cols,), name="g"), te.placeholder((cols,), name="b")

    def numpy_layer_norm(a, gamma, beta):
        mean = a.mean(axis=1, keepdims=True)
        var = a.var(axis=1, keepdims=True)
        return (a - mean) / np.sqrt(var + 1e-5) * gamma + beta
    return ([x, g, b], topi.nn.layer_norm(x, g, b, axis=[1]),
            [_rand(rows, cols), _rand(cols), _rand(cols)], numpy_layer_norm,
            ("LayerNormalization", {"axis": 1, "epsilon": 1e-5}))


WORKLOADS = {
    "dense 1x784x128": lambda: _dense(1, 784, 128),
    "dense 128x1024x1024": lambda: _dense(128, 1024, 1024),
    "dense 1024x1024x1024": lambda: _dense(1024, 1024, 1024),
    "conv2d 3x3 56x56 64->64": lambda: _conv(64, 64, 56, 3),
    "conv2d 1x1 56x56 64->256": lambda: _conv(64, 256, 56, 1),
    "softmax 128x1000": lambda: _softmax(128, 1000),
    "layer_norm 128x768": lambda: _layer_norm(128, 768),
}


def _rand(*shape):
    return np.random.default_rng(len(shape)).standard_normal(shape).astype("float32")


def onnx_session(op_type, attrs, arrays, out_shape, threads):
    """An onnxruntime session of a one-node model, or None without onnxruntime."""
    try:
        import onnx  # noqa: F401 (the helper below needs it)
        import onnxruntime
    except ImportError:
        return None
    from onnx import TensorProto, helper
    names = [f"in{n}" for n in range(len(arrays))]
    if op_type == "LayerNormalization":
        names = names[:1] + ["gamma", "beta"]
    inputs = [helper.make_tensor_value_info(nm, TensorProto.FLOAT, a.shape)
              for nm, a in zip(names, arrays)]
    output = helper.make_tensor_value_info("out", TensorProto.FLOAT, out_shape)
    node = helper.make_node(op_type, names, ["out"], **attrs)
    graph = helper.make_graph([node], "single_op", inputs, [output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    feeds = dict(zip(names, arrays))
    return lambda: session.run(None, feeds)


def measure(name, rounds, threads):
    inputs, output, arrays, numpy_fn, (op_type, attrs) = WORKLOADS[name]()
    target = Target(f"llvm --num-cores={threads}")
    mod = mlcbench.IRModule({"main": te.create_prim_func(inputs + [output])})
    with target:
        mod = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(mod)
    lib = mlcbench.build(mod, target=target)
    out = np.zeros([int(s) for s in output.shape], "float32")
    lib["main"](*arrays, out)
    np.testing.assert_allclose(out, numpy_fn(*arrays), rtol=2e-3, atol=2e-3)
    contenders = {"ours": kernel(lib, "main", *arrays, out),
                  "numpy": call(lambda: numpy_fn(*arrays))}
    session = onnx_session(op_type, attrs, arrays, out.shape, threads)
    if session is not None:
        contenders["ort"] = call(session)
    best = compare(contenders, rounds)
    return best["ours"], best["numpy"], best.get("ort")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", nargs="*", default=None, help="workload names to run")
    args = parser.parse_args()
    print(f"{'workload':<26}{'ours ms':>9}{'numpy ms':>10}{'vs numpy':>10}"
          f"{'ort ms':>9}{'vs ort':>8}")
    for name in args.only or WORKLOADS:
        ours, theirs, ort = measure(name, args.rounds, args.threads)
        ort_cols = f"{ort * 1e3:>9.3f}{ort / ours:>7.2f}x" if ort else f"{'-':>9}{'-':>8}"
        print(f"{name:<26}{ours * 1e3:>9.3f}{theirs * 1e3:>10.3f}{theirs / ours:>9.2f}x"
              f"{ort_cols}", flush=True)
    print(f"threads: {args.threads}; ratio = reference time / ours (above 1: ours faster)")


if __name__ == "__main__":
    main()
