"""Per-call cost of the Relax VM, and what memory planning saves on the course MLP.

Run: ``python benchmarks/relax_vm.py [--kernels 64]``.

A chain of K tiny kernels (``y = x + 1`` on 8 floats) is built with ``relax.build`` and
timed with the VM's ``time_evaluator`` for K = 1 and K = ``--kernels``, run as one native
call (:mod:`mlcbench.relax.vm_native`, the default for such a function) and by one
Python closure per kernel (``native_chains=False``). The slope is the time per kernel
call through the VM; minus the kernel's own time through ``lib.time_evaluator`` (a
direct ctypes call) it is the VM's *overhead per kernel call* (negative for the native
chain: it saves the ctypes call itself). The intercept is the fixed cost of one
``vm["main"](x)`` (argument checks, register setup). Timings drift on this machine:
read them as microseconds, not to the digit.
"""
from __future__ import annotations

import argparse

import numpy as np

import mlcbench as tvm
from mlcbench import relax, te

from timing import host_line


def chain(kernels: int) -> tvm.IRModule:
    x = relax.Var("x", relax.TensorStructInfo((8,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            value = x
            for _ in range(kernels):
                value = bb.emit_te(lambda t: te.compute(t.shape, lambda i: t[i] + 1.0), value,
                                   primfunc_name_hint="add_one")
            out = bb.emit_output(value)
        bb.emit_func_output(out)
    return bb.get()


def seconds_per_call(vm, x) -> float:
    result = vm.module.time_evaluator("main", tvm.cpu(), number=2000, repeat=5)(x)
    return min(result.results)


def vm_overhead(kernels: int) -> dict:
    x = np.zeros(8, dtype="float32")
    times = {}
    for k in (1, kernels):
        ex = relax.build(chain(k), "llvm", pipeline="vm_lowering")     # one call per kernel
        for native in (True, False):
            vm = relax.VirtualMachine(ex, tvm.cpu(), native_chains=native)
            times[k, native] = seconds_per_call(vm, x)
    kernel = ex.lib.function_names[0]
    a, b = tvm.nd.array(x), tvm.nd.empty((8,), "float32")
    raw = min(ex.lib.time_evaluator(kernel, tvm.cpu(), number=20000, repeat=5)(a, b).results)
    checked = min(tvm.runtime.measure(ex.lib[kernel], (a, b), number=20000, repeat=5).results)
    figures = {}
    for native, label in ((True, "native chain"), (False, "closures")):
        per_kernel = (times[kernels, native] - times[1, native]) / (kernels - 1)
        figures.update({f"{label}: per kernel call": per_kernel,
                        f"{label}: VM overhead per kernel call": per_kernel - raw,
                        f"{label}: fixed cost per vm['main'] call": times[1, native] - per_kernel})
    return {**figures, "kernel alone (raw ctypes)": raw,
            "lib[kernel](a, b) (checked PackedFunc)": checked}


def mlp_memory() -> str:
    from mlcbench.script import relax as R, ir as I

    @I.ir_module
    class MLP:
        @R.function
        def main(x: R.Tensor((1, 784), "float32"), w0: R.Tensor((128, 784), "float32"),
                 b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
                 b1: R.Tensor((10,), "float32")):
            with R.dataflow():
                lv0 = R.matmul(x, R.permute_dims(w0))
                lv1 = R.add(lv0, b0)
                lv2 = R.nn.relu(lv1)
                lv3 = R.matmul(lv2, R.permute_dims(w1))
                out = R.add(lv3, b1)
                R.output(out)
            return out

    from mlcbench.relax.transform.legalize_ops import LegalizeOps
    lowered = LegalizeOps()(MLP)
    return str(relax.analysis.estimate_memory_usage(lowered))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=64)
    args = parser.parse_args()
    print(host_line())
    for name, seconds in vm_overhead(args.kernels).items():
        print(f"{name:<50} {seconds * 1e6:8.2f} us")
    print("\nCourse MLP, high-level ops legalized, unfused:\n" + mlp_memory())


if __name__ == "__main__":
    main()
