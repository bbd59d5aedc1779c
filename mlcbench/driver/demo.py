"""``mlcbench demo``: parse, print, lower, build, check and time kernels, headless.

Every figure beside numpy is the best of interleaved rounds, each after the process's
other threads went idle (:func:`mlcbench.runtime.timing.settle`), so the thread pool of
one step does not slow the next, and a busy machine is said, not hidden. The digits MLP
read "11.88x numpy" (1.08 ms) where it takes 0.06 ms alone: its parallel kernel ran
while OpenBLAS's workers still spun after numpy's batch. They spin for about 100 ms
after a call; the fixed 50 ms pause this demo took was too short.
"""
from __future__ import annotations

import time

import numpy as np

from ..runtime import timing

ROUNDS, MIN_REPEAT_MS, SETTLE_MS = 3, 20, 300     # SETTLE_MS: the longest wait for idle


def _against_numpy(ours: timing.Timer, numpy_fn) -> timing.Comparison:
    return timing.compare({"ours": ours, "numpy": timing.call(numpy_fn)}, rounds=ROUNDS,
                          min_repeat_ms=MIN_REPEAT_MS, settle_ms=SETTLE_MS)


def _gflops(flops: int, seconds: float) -> str:
    return f"{flops / seconds / 1e9:.1f} GFLOPS"


def run_demo(size: int = 512) -> int:
    from tqdm import tqdm

    from .. import nd
    from ..ir.instrument import PassTimingInstrument
    from ..ir.transform import PassContext
    from ..script import from_source
    from ..tir.transform import lower
    from .build import build
    from .kernels import MM_RELU, parallel_vectorized_matmul, register_tile, tiled_matmul_schedule

    report: list[str] = []
    steps = tqdm(total=9, desc="mlcbench demo", unit="step")

    steps.set_postfix_str("parse TVMScript")
    start = time.perf_counter()
    mod = from_source(MM_RELU)
    report.append(f"parsed mm_relu from TVMScript in {1e3 * (time.perf_counter() - start):.1f} ms")
    steps.update()

    steps.set_postfix_str("print")
    report.append("the module as mlcbench prints it:\n" + mod.script())
    steps.update()

    steps.set_postfix_str("lower")
    pass_timing = PassTimingInstrument()
    with PassContext(instruments=[pass_timing]):
        lowered = lower(mod)
    report.append("lowering passes:\n" + pass_timing.render())
    report.append("lowered mm_relu:\n" + lowered.script())
    steps.update()

    steps.set_postfix_str("build with LLVM")
    start = time.perf_counter()
    lib = build(mod, target="llvm")
    report.append(f"built mm_relu with LLVM in {1e3 * (time.perf_counter() - start):.1f} ms")
    steps.update()

    steps.set_postfix_str("run and check")
    rng = np.random.default_rng(0)
    a_np, b_np = (rng.random((128, 128), dtype=np.float32) for _ in range(2))
    a, b, c = nd.array(a_np), nd.array(b_np), nd.empty((128, 128), "float32")
    lib["mm_relu"](a, b, c)
    # Checked before timing: a fast wrong kernel must not be reported.
    np.testing.assert_allclose(c.numpy(), np.maximum(a_np @ b_np, 0), rtol=1e-4)
    report.append("mm_relu matches numpy (rtol 1e-4)")
    times = _against_numpy(timing.kernel(lib, "mm_relu", a, b, c),
                           lambda: np.maximum(a_np @ b_np, 0))
    report.append("mm_relu 128^3 as written (naive loops): " + times.describe("ours", "numpy"))
    steps.update()

    steps.set_postfix_str(f"parallel + vectorized {size}^3 matmul")
    mm = build(from_source(parallel_vectorized_matmul(size)), target="llvm")
    a_np, b_np = (rng.random((size, size), dtype=np.float32) for _ in range(2))
    a, b, c = nd.array(a_np), nd.array(b_np), nd.empty((size, size), "float32")
    mm["matmul"](a, b, c)
    np.testing.assert_allclose(c.numpy(), a_np @ b_np, rtol=1e-3)
    times = _against_numpy(timing.kernel(mm, "matmul", a, b, c), lambda: a_np @ b_np)
    flops = 2 * size ** 3
    report.append(f"matmul {size}^3, T.parallel rows + T.vectorized(16) columns: "
                  f"{times.describe('ours', 'numpy')} ({_gflops(flops, times['ours'].best)}"
                  f" against {_gflops(flops, times['numpy'].best)})")
    steps.update()

    steps.set_postfix_str(f"schedule a tiled {size}^3 matmul")
    sch = tiled_matmul_schedule(size)
    report.append("a matmul scheduled with primitives (sch.trace):\n" + str(sch.trace))
    lib = build(sch.mod)
    c = nd.empty((size, size), "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c.numpy(), a_np @ b_np, rtol=1e-3)
    times = _against_numpy(timing.kernel(lib, "main", a, b, c), lambda: a_np @ b_np)
    rows, cols = register_tile()
    report.append(f"tiled matmul {size}^3 ({rows}x{cols} register tile): "
                  f"{times.describe('ours', 'numpy')} ({_gflops(flops, times['ours'].best)})")
    steps.update()

    steps.set_postfix_str("default schedules (dlight) for a dense layer")
    report.append(_default_schedule_report(rng))
    steps.update()

    steps.set_postfix_str("digits MLP with relax.build")
    report.append(_digits_mlp_report())
    steps.update()
    steps.close()
    print("\n\n".join(report))
    return 0


def _default_schedule_report(rng) -> str:
    """Schedule ``topi.nn.dense`` + bias + relu with the default CPU rules and time it."""
    from .. import nd, te, topi
    from ..dlight import ApplyDefaultSchedule
    from ..dlight.cpu import default_rules
    from ..ir.module import IRModule
    from ..runtime import cpu
    from .build import build

    x, w, bias = (te.placeholder(s, name=n) for s, n in
                  (((128, 1024), "x"), ((1024, 1024), "w"), ((1024,), "bias")))
    out = topi.nn.relu(topi.add(topi.nn.dense(x, w), bias))
    mod = IRModule({"main": te.create_prim_func([x, w, bias, out])})
    unscheduled, scheduled = build(mod), build(ApplyDefaultSchedule(*default_rules())(mod))
    arrays = [rng.random(s, dtype=np.float32) for s in ((128, 1024), (1024, 1024), (1024,))]
    args = [nd.array(a) for a in arrays] + [nd.empty((128, 1024), "float32")]
    scheduled["main"](*args)
    expected = np.maximum(arrays[0] @ arrays[1].T + arrays[2], 0)
    np.testing.assert_allclose(args[-1].numpy(), expected, rtol=1e-3, atol=1e-3)
    # One call per repeat: the unscheduled kernel takes long enough to time alone.
    before = unscheduled.time_evaluator("main", cpu(), number=1, repeat=2)(*args).min
    times = _against_numpy(timing.kernel(scheduled, "main", *args),
                           lambda: np.maximum(arrays[0] @ arrays[1].T + arrays[2], 0))
    after = times["ours"].best
    return (f"dense 128x1024x1024 + bias + relu: as written {before * 1e3:.1f} ms, "
            f"default schedule {before / after:.0f}x faster than that; "
            + times.describe("ours", "numpy"))


def _digits_mlp_report() -> str:
    """The trained digits MLP exported, fused, built with relax.build and run by the VM."""
    from .. import datasets, nd, relax
    from ..runtime import cpu
    from .models import export_digits_model

    _, _, x_test, y_test = datasets.load_digits(flat=True)
    mod, weights = export_digits_model("mlp", batch=len(x_test))
    start = time.perf_counter()
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), cpu())
    built = time.perf_counter() - start
    logits = vm["forward"](x_test, *weights).numpy()
    params = datasets.load_mlp_params()
    expected = datasets.mlp_forward(x_test, params)
    np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-4)
    arrays = [nd.array(a) for a in (x_test, *weights)]
    times = _against_numpy(timing.kernel(vm, "forward", *arrays),
                           lambda: datasets.mlp_forward(x_test, params))
    accuracy = (logits.argmax(1) == y_test).mean()
    return (f"digits MLP (nn.Module -> relax.build, built in {built:.2f} s): accuracy "
            f"{accuracy:.1%} on {len(x_test)} test images (numpy: "
            f"{(expected.argmax(1) == y_test).mean():.1%}); per batch "
            + times.describe("ours", "numpy"))
