"""Default-scheduled operators against numpy (and onnxruntime's single-op models).

Run: ``python benchmarks/ops.py [--rounds 5] [--threads 2] [--only softmax pool]``;
``--threads 1 --cpu-time`` counts CPU seconds of the calling thread (a busy machine);
``--mcpu haswell`` schedules and builds for another CPU than the host's (one whose
instructions the host runs): on an AVX-512 host, the AVX2 schedules of 8-lane targets.

Each operator is written with ``mlcbench.topi``, scheduled by
``dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())`` and built. The table
gives milliseconds and the ratio ``reference time / our time`` (above 1: ours is
faster). Every contender is timed the same way by ``timing.compare``: the best mean
per call over several rounds in which ours and the references run one after another.
The reductions and normalizations (softmax, log_softmax, layer_norm, batch_norm,
pooling) run at the shapes of a transformer block and of the ONNX light models.
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
from timing import host_line, call, compare, thread_cpu, kernel  # noqa: E402


def _dense(m, k, n):
    x, w = te.placeholder((m, k), name="x"), te.placeholder((n, k), name="w")
    arrays = [_rand(m, k), _rand(n, k)]
    return [x, w], topi.nn.dense(x, w), arrays, lambda a, b: a @ b.T, ("Gemm", {"transB": 1})


def _matmul(m, k, n):
    x, w = te.placeholder((m, k), name="x"), te.placeholder((k, n), name="w")
    arrays = [_rand(m, k), _rand(k, n)]
    return [x, w], topi.nn.matmul(x, w), arrays, lambda a, b: a @ b, ("MatMul", {})


def _batch_matmul_nt(batch, m, n, k):
    x = te.placeholder((batch, m, k), name="x")
    w = te.placeholder((batch, n, k), name="w")
    arrays = [_rand(batch, m, k), _rand(batch, n, k)]
    return ([x, w], topi.nn.batch_matmul(x, w, transpose_b=True), arrays,
            lambda a, b: a @ b.transpose(0, 2, 1), ("Einsum", {"equation": "bmk,bnk->bmn"}))


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


def _log_softmax(rows, cols):
    x = te.placeholder((rows, cols), name="x")
    return ([x], topi.nn.log_softmax(x), [_rand(rows, cols)], ref.log_softmax_python,
            ("LogSoftmax", {"axis": 1}))


def _attention_softmax(heads, rows, cols):
    x = te.placeholder((heads, rows, cols), name="x")
    return ([x], topi.nn.softmax(x), [_rand(heads, rows, cols)], ref.softmax_python,
            ("Softmax", {"axis": -1}))


def _batch_norm(c, size):
    x = te.placeholder((1, c, size, size), name="x")
    params = [te.placeholder((c,), name=n) for n in ("gamma", "beta", "mean", "var")]
    rng = np.random.default_rng(c)
    arrays = [_rand(1, c, size, size)] + [rng.standard_normal(c).astype("float32")
                                          for _ in range(3)]
    arrays.append(rng.uniform(0.5, 2.0, c).astype("float32"))   # a variance is positive
    return ([x] + params, topi.nn.batch_norm(x, *params)[0], arrays, ref.batch_norm_python,
            ("BatchNormalization", {"epsilon": 1e-5}))


def _pool(kind, c, size, kernel, stride, pad, ceil=False):
    """NCHW max or average pooling (padded taps counted, as ``count_include_pad=1``);
    ``ceil`` keeps a last partial window (``ceil_mode=1``, max pooling only here)."""
    x = te.placeholder((1, c, size, size), name="x")
    out = topi.nn.pool2d(x, (kernel,) * 2, (stride,) * 2, (1, 1), (pad,) * 4, kind,
                         ceil_mode=ceil)
    attrs = {"kernel_shape": [kernel] * 2, "strides": [stride] * 2, "pads": [pad] * 4,
             "ceil_mode": int(ceil)}
    if kind == "avg":
        attrs["count_include_pad"] = 1
    return ([x], out, [_rand(1, c, size, size)],
            lambda a: _numpy_pool(a, kind, kernel, stride, pad, ceil),
            ("MaxPool" if kind == "max" else "AveragePool", attrs))


def _numpy_pool(a, kind, kernel, stride, pad, ceil=False):
    fill = -np.inf if kind == "max" else 0.0
    size = a.shape[-1]
    outputs = -(-(size + 2 * pad - kernel) // stride) + 1 if ceil else None
    extra = max(0, (outputs - 1) * stride + kernel - size - 2 * pad) if ceil else 0
    padded = np.pad(a, [(0, 0), (0, 0), (pad, pad + extra), (pad, pad + extra)],
                    constant_values=fill)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (kernel, kernel), axis=(2, 3))
    windows = windows[:, :, ::stride, ::stride]
    return windows.max(axis=(4, 5)) if kind == "max" else windows.mean(axis=(4, 5))


def _global_avg_pool(c, size):
    x = te.placeholder((1, c, size, size), name="x")
    return ([x], topi.nn.global_avg_pool2d(x), [_rand(1, c, size, size)],
            lambda a: a.mean(axis=(2, 3), keepdims=True), ("GlobalAveragePool", {}))


WORKLOADS = {
    "dense 1x784x128": lambda: _dense(1, 784, 128),
    "dense 128x1024x1024": lambda: _dense(128, 1024, 1024),
    "dense 1024x1024x1024": lambda: _dense(1024, 1024, 1024),
    # a transformer block's feed-forward layers, the weight passed on every call
    "dense 128x768x3072": lambda: _dense(128, 768, 3072),
    "matmul 128x3072x768": lambda: _matmul(128, 3072, 768),
    "dense 64x4096x4096": lambda: _dense(64, 4096, 4096),
    # a few rows (a batch of 8 or 16 tokens), the weight passed on every call
    "dense 8x1024x1024": lambda: _dense(8, 1024, 1024),
    "dense 16x4096x4096": lambda: _dense(16, 4096, 4096),
    # the second operand transposed, with rows of 8 KB
    "batch_matmul 8x64x128x2048 nt": lambda: _batch_matmul_nt(8, 64, 128, 2048),
    "conv2d 3x3 56x56 64->64": lambda: _conv(64, 64, 56, 3),
    "conv2d 1x1 56x56 64->256": lambda: _conv(64, 256, 56, 1),
    # Reductions and normalizations at the shapes of a transformer block and of the
    # ONNX light models (resnet50, densenet121, inception, squeezenet, vgg19).
    "softmax 1x1000": lambda: _softmax(1, 1000),
    "softmax 128x1000": lambda: _softmax(128, 1000),
    "softmax 12x128x128": lambda: _attention_softmax(12, 128, 128),
    "log_softmax 128x1000": lambda: _log_softmax(128, 1000),
    "layer_norm 128x768": lambda: _layer_norm(128, 768),
    "batch_norm 1x64x112x112": lambda: _batch_norm(64, 112),
    "batch_norm 1x128x28x28": lambda: _batch_norm(128, 28),
    "max_pool 3x3/2 1x64x112x112": lambda: _pool("max", 64, 112, 3, 2, 1),
    # SqueezeNet's, Inception v1's (ceil mode) and AlexNet's max pools.
    "max_pool 3x3/2c 1x96x111x111": lambda: _pool("max", 96, 111, 3, 2, 0, ceil=True),
    "max_pool 3x3/2c 1x256x55x55": lambda: _pool("max", 256, 55, 3, 2, 0, ceil=True),
    "max_pool 3x3/2c 1x512x27x27": lambda: _pool("max", 512, 27, 3, 2, 0, ceil=True),
    "max_pool 3x3/2c 1x192x56x56": lambda: _pool("max", 192, 56, 3, 2, 0, ceil=True),
    "max_pool 3x3/2c 1x480x28x28": lambda: _pool("max", 480, 28, 3, 2, 0, ceil=True),
    "max_pool 3x3/2c 1x832x14x14": lambda: _pool("max", 832, 14, 3, 2, 0, ceil=True),
    "max_pool 3x3/1 1x192x28x28": lambda: _pool("max", 192, 28, 3, 1, 1),
    "max_pool 3x3/1 1x480x14x14": lambda: _pool("max", 480, 14, 3, 1, 1),
    "max_pool 3x3/2 1x64x55x55": lambda: _pool("max", 64, 55, 3, 2, 0),
    "max_pool 2x2/2 1x128x112x112": lambda: _pool("max", 128, 112, 2, 2, 0),
    "avg_pool 3x3/1 1x192x28x28": lambda: _pool("avg", 192, 28, 3, 1, 1),
    "global_avg_pool 1x2048x7x7": lambda: _global_avg_pool(2048, 7),
    "global_avg_pool 1x1000x13x13": lambda: _global_avg_pool(1000, 13),
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


def measure(name, rounds, threads, cpu_time=False, mcpu=None):
    inputs, output, arrays, numpy_fn, (op_type, attrs) = WORKLOADS[name]()
    target = Target(f"llvm {f'-mcpu={mcpu} ' if mcpu else ''}--num-cores={threads}")
    mod = mlcbench.IRModule({"main": te.create_prim_func(inputs + [output])})
    with target:
        mod = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(mod)
    lib = mlcbench.build(mod, target=target)
    out = np.zeros([int(s) for s in output.shape], "float32")
    lib["main"](*arrays, out)
    np.testing.assert_allclose(out, numpy_fn(*arrays), rtol=2e-3, atol=2e-3)
    if cpu_time:
        buffers = [mlcbench.nd.array(a) for a in arrays + [out]]
        contenders = {"ours": thread_cpu(lambda: lib["main"](*buffers))}
    else:
        contenders = {"ours": kernel(lib, "main", *arrays, out)}
    contenders["numpy"] = (thread_cpu if cpu_time else call)(lambda: numpy_fn(*arrays))
    session = onnx_session(op_type, attrs, arrays, out.shape, threads)
    if session is not None:
        contenders["ort"] = (thread_cpu if cpu_time else call)(session)
    best = compare(contenders, rounds)
    return best["ours"], best["numpy"], best.get("ort")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--cpu-time", action="store_true",
                        help="time the calling thread's CPU seconds (with --threads 1)")
    parser.add_argument("--only", nargs="*", default=None,
                        help="run the workloads whose names contain one of these words")
    parser.add_argument("--mcpu", default=None,
                        help="schedule and build for this CPU (e.g. haswell) instead of the host's")
    args = parser.parse_args()
    if args.cpu_time and args.threads != 1:
        parser.error("--cpu-time counts the calling thread only: use it with --threads 1")
    names = [n for n in WORKLOADS if not args.only or any(w in n for w in args.only)]
    print(host_line(args.threads) + (", thread CPU time" if args.cpu_time else ""))
    if args.mcpu:
        print(f"ours built for -mcpu={args.mcpu} "
              f"({Target('llvm -mcpu=' + args.mcpu).vector_lanes(32)} float32 lanes)")
    print(f"{'workload':<30}{'ours ms':>9}{'numpy ms':>10}{'vs numpy':>10}"
          f"{'ort ms':>9}{'vs ort':>8}")
    for name in names:
        ours, theirs, ort = measure(name, args.rounds, args.threads, args.cpu_time, args.mcpu)
        ort_cols = f"{ort * 1e3:>9.3f}{ort / ours:>7.2f}x" if ort else f"{'-':>9}{'-':>8}"
        print(f"{name:<30}{ours * 1e3:>9.3f}{theirs * 1e3:>10.3f}{theirs / ours:>9.2f}x"
              f"{ort_cols}", flush=True)
    print("ratio = reference time / ours (above 1: ours faster)")


if __name__ == "__main__":
    main()
