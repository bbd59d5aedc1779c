"""Winograd convolution against the direct convolution and onnxruntime.

Run: ``python benchmarks/winograd.py [--trials 16] [--threads 2] [--rounds 5]``.

For ResNet's 3x3 stride-1 layers (64x56x56, 128x28x28, 256x14x14, as many output
channels as input, padding 1, batch 1) it times, in one run and the same way
(``timing.compare``: best mean per call over interleaved rounds):

- ``direct``: ``topi.nn.conv2d_nchw`` under the default CPU schedule (dlight);
- ``winograd``: the ``conv2d_nchw_winograd.x86`` template, the fastest of its hand-picked
  configs (F(4x4, 3x3) and F(2x2, 3x3), 8 output channels by a 16-tile vector), or with
  ``--trials N`` the best of N configs measured by the XGB tuner as well;
- ``nhwc direct`` and ``nhwc winograd``: ``relax.nn.conv2d`` in NHWC with the weight a
  constant, built by ``relax.build`` as a CPU model's convolutions are (with
  ``relax.conv2d.winograd`` False, and by default: the input transform, a batched matmul
  with the weight transformed at build time, the output transform), called through the
  VM with NHWC data;
- ``ort``: onnxruntime's Conv (the same threads).

The table gives milliseconds and ``ort / ours`` ratios (above 1: ours is faster). The
Winograd kernel transforms its weight on every call here; in a model whose weight is a
constant that transform can be done once (``conv2d_winograd_weight_transform``).
"""
from __future__ import annotations

import argparse
import os
import tempfile

os.environ.setdefault("GOMP_SPINCOUNT", "10000")   # before libgomp loads

import numpy as np  # noqa: E402

import mlcbench  # noqa: E402
from mlcbench import autotvm, dlight, te, topi  # noqa: E402
from mlcbench.target import Target  # noqa: E402
from mlcbench.topi import testing as ref  # noqa: E402
from ops import onnx_session  # noqa: E402
from timing import host_line, compare, kernel  # noqa: E402

LAYERS = [(64, 56), (128, 28), (256, 14)]
# (tile_size, output channels per register tile, vector of tiles)
HAND_CONFIGS = [(4, 8, 16), (2, 8, 16), (4, 4, 16)]


def _args(channels, size):
    return (("TENSOR", (1, channels, size, size), "float32"),
            ("TENSOR", (channels, channels, 3, 3), "float32"), (1, 1), (1, 1, 1, 1), (1, 1),
            "float32")


def _direct(channels, size, target):
    x = te.placeholder((1, channels, size, size), name="x")
    w = te.placeholder((channels, channels, 3, 3), name="w")
    out = topi.nn.conv2d_nchw(x, w, 1, 1, 1)
    mod = mlcbench.IRModule({"main": te.create_prim_func([x, w, out])})
    with target:
        mod = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(mod)
    return mlcbench.build(mod, target=target)


def _relax_nhwc(data, weight, target, winograd: bool):
    """The VM function of an NHWC convolution with ``weight`` (OIHW) as a constant,
    built with the Winograd rule on or off, and its NHWC input."""
    from mlcbench import relax
    from mlcbench.ir.transform import PassContext
    bb = relax.BlockBuilder()
    nhwc = data.transpose(0, 2, 3, 1).copy()
    x = relax.Var("x", relax.TensorStructInfo(nhwc.shape, "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.nn.conv2d(
                x, relax.const(weight.transpose(2, 3, 1, 0).copy()), padding=1,
                data_layout="NHWC", kernel_layout="HWIO"))
        bb.emit_func_output(out)
    config = {} if winograd else {"relax.conv2d.winograd": False}
    with PassContext(config=config):
        ex = relax.build(bb.get(), target)
    return relax.VirtualMachine(ex, mlcbench.cpu())["main"], mlcbench.nd.array(nhwc)


def _hand_config(space, tile, co, vector):
    for index in range(len(space)):
        cfg = space.get(index)
        if (cfg["tile_size"].val, cfg["tile_co"].size[-1], cfg["tile_p"].val,
                cfg["parallel"].val) == (tile, co, vector, 1) and cfg["tile_rc"].size[-1] == 1:
            return cfg
    return None


def _tuned_config(task, trials):
    log = tempfile.mktemp(suffix=".log")
    option = autotvm.measure_option(builder=autotvm.LocalBuilder(),
                                    runner=autotvm.LocalRunner(number=3, repeat=1))
    autotvm.tuner.XGBTuner(task).tune(n_trial=trials, measure_option=option,
                                      callbacks=[autotvm.callback.log_to_file(log)])
    best = autotvm.apply_history_best(log).best_record(task.target, task.workload)
    os.remove(log)
    return None if best is None else best[1]


def measure(channels, size, trials, threads, rounds):
    target = Target(f"llvm --num-cores={threads}")
    rng = np.random.default_rng(channels)
    data = rng.standard_normal((1, channels, size, size)).astype("float32")
    weight = rng.standard_normal((channels, channels, 3, 3)).astype("float32")
    expected = ref.conv2d_nchw_python(data, weight, 1, (1, 1, 1, 1))
    out = np.zeros(expected.shape, "float32")
    contenders = {"direct": kernel(_direct(channels, size, target), "main", data, weight, out)}
    from timing import call
    for name, winograd in (("nhwc direct", False), ("nhwc winograd", True)):
        function, nhwc = _relax_nhwc(data, weight, target, winograd)
        got = function(nhwc).numpy().transpose(0, 3, 1, 2)
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3 * np.abs(expected).max())
        contenders[name] = call(lambda function=function, nhwc=nhwc: function(nhwc))
    task = autotvm.task.create("conv2d_nchw.x86", _args(channels, size), target, None,
                               "winograd")
    configs = {f"F({t}x{t}) co{c} p{v}": _hand_config(task.config_space, t, c, v)
               for t, c, v in HAND_CONFIGS}
    if trials:
        configs["tuned"] = _tuned_config(task, trials)
    for name, cfg in configs.items():
        if cfg is None:
            continue
        lib = mlcbench.build(task.instantiate_module(cfg), target=target)
        lib["main"](data, weight, out)
        np.testing.assert_allclose(out, expected, rtol=1e-3, atol=1e-3 * np.abs(expected).max())
        contenders[name] = kernel(lib, "main", data, weight, out)
    session = onnx_session("Conv", {"pads": [1] * 4, "kernel_shape": [3, 3]},
                           [data, weight], expected.shape, threads)
    if session is not None:
        contenders["ort"] = call(session)
    return compare(contenders, rounds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    print(host_line(opts.threads) + f"; tuning trials: {opts.trials}")
    for channels, size in LAYERS:
        best = measure(channels, size, opts.trials, opts.threads, opts.rounds)
        ort = best.pop("ort", None)
        direct = best.pop("direct")
        nhwc = {name: best.pop(name) for name in ("nhwc direct", "nhwc winograd")}
        name, wino = min(best.items(), key=lambda kv: kv[1])
        ratio = f"{ort / wino:5.2f}x" if ort else "  n/a"
        ort_ms = f"{ort * 1e3:7.2f}" if ort else "    n/a"
        print(f"conv 3x3 {channels}x{size}x{size}: direct {direct * 1e3:7.2f} ms, "
              f"winograd {wino * 1e3:7.2f} ms ({name}), ort {ort_ms} ms | "
              f"direct/winograd {direct / wino:5.2f}x, ort/winograd {ratio}, "
              f"ort/direct {ort / direct if ort else float('nan'):5.2f}x")
        for other, seconds in sorted(best.items()):
            print(f"    {other}: {seconds * 1e3:7.2f} ms")
        nhwc_ratio = f"{ort / nhwc['nhwc winograd']:5.2f}x" if ort else "  n/a"
        print(f"    NHWC through relax.build: direct {nhwc['nhwc direct'] * 1e3:7.2f} ms, "
              f"winograd {nhwc['nhwc winograd'] * 1e3:7.2f} ms | direct/winograd "
              f"{nhwc['nhwc direct'] / nhwc['nhwc winograd']:5.2f}x, ort/winograd {nhwc_ratio}")


if __name__ == "__main__":
    main()
