"""A VM function of kernel calls and static allocations runs as one native call."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import relax
from mlcbench.relax.vm import VMError
from mlcbench.relax.vm_native import chain_ir, plan_chain
from mlcbench.script import ir as I, relax as R, tir as T


@I.ir_module
class Checked:
    @T.prim_func
    def scale(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
        T.Assert(a[0] > T.float32(0), "a[0] must be positive")
        for i in range(4):
            with T.block("b"):
                vi = T.axis.remap("S", [i])
                b[vi] = a[vi] * T.float32(2)

    @T.prim_func
    def shift(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("b"):
                vi = T.axis.remap("S", [i])
                b[vi] = a[vi] - T.float32(1)

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        cls = Checked
        with R.dataflow():
            y = R.call_tir(cls.shift, (x,), R.Tensor((4,), "float32"))
            z = R.call_tir(cls.scale, (y,), R.Tensor((4,), "float32"))
            R.output(z)
        return z


def _mlp(w0, b0, w1, b1):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, w0.shape[0]), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(relax.op.nn.relu(relax.op.add(relax.op.matmul(x, relax.const(w0)),
                                                      relax.const(b0))))
            out = bb.emit_output(relax.op.add(relax.op.matmul(h, relax.const(w1)),
                                              relax.const(b1)))
        bb.emit_func_output(out)
    return bb.get()


@settings(max_examples=4, deadline=None)
@given(k=st.sampled_from([8, 24]), n=st.sampled_from([16, 10]), seed=st.integers(0, 9))
def test_a_bound_mlp_runs_as_one_native_call_and_matches_the_closures(k, n, seed):
    rng = np.random.default_rng(seed)
    w0, b0 = rng.standard_normal((k, n), "float32"), rng.standard_normal(n, "float32")
    w1, b1 = rng.standard_normal((n, 3), "float32"), rng.standard_normal(3, "float32")
    ex = relax.build(_mlp(w0, b0, w1, b1), "llvm")
    native = relax.VirtualMachine(ex, tvm.cpu())["main"]
    closures = relax.VirtualMachine(ex, tvm.cpu(), native_chains=False)["main"]
    assert native.native is not None and closures.native is None
    x = rng.standard_normal((1, k), "float32")
    expected = np.maximum(x @ w0 + b0, 0) @ w1 + b1
    first, second = native(x), native(2 * x)              # each call a fresh output
    np.testing.assert_allclose(first.numpy(), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(closures(x).numpy(), first.numpy(), rtol=1e-6)
    assert first.data_ptr != second.data_ptr


def test_the_chain_calls_each_kernel_in_order_and_reports_which_failed():
    vm = relax.VirtualMachine(relax.build(Checked, "llvm", pipeline="vm_lowering"), tvm.cpu())
    plan = plan_chain("main", vm.executable.function_code("main"), vm["main"]._template)
    text = chain_ir(plan, vm.executable.function_code("main"))
    assert text.count("call i32") == 2 and text.count("ret i64") == 3
    assert f"or i64 %z1, {2 << 32}" in text          # the second call's failure code
    x = np.full(4, 3, "float32")
    np.testing.assert_array_equal(vm["main"](x).numpy(), 2 * (x - 1))
    with pytest.raises(VMError, match=r"While executing z = call_tir\(scale, \(y,\)\) in main: "
                                      r"RuntimeError_: kernel scale failed with status -1"):
        vm["main"](np.full(4, 0.5, "float32"))         # the second kernel's assertion fails
    np.testing.assert_array_equal(vm["main"](x).numpy(), 2 * (x - 1))   # and it runs on


def test_functions_with_packed_calls_or_branches_keep_the_closures(course_mlp_extern):
    vm = relax.VirtualMachine(relax.build(course_mlp_extern, "llvm", pipeline="vm_lowering"),
                              tvm.cpu())
    assert vm["main"].native is None


def test_threads_sharing_a_native_function_each_get_their_own_result():
    import threading
    rng = np.random.default_rng(1)
    w0, b0 = rng.standard_normal((16, 32), "float32"), rng.standard_normal(32, "float32")
    w1, b1 = rng.standard_normal((32, 3), "float32"), rng.standard_normal(3, "float32")
    main = relax.VirtualMachine(relax.build(_mlp(w0, b0, w1, b1), "llvm"), tvm.cpu())["main"]
    assert main.native is not None
    inputs = [rng.standard_normal((1, 16), "float32") for _ in range(4)]
    failures = []

    def work(x):
        expected = np.maximum(x @ w0 + b0, 0) @ w1 + b1
        for _ in range(200):
            if not np.allclose(main(x).numpy(), expected, rtol=1e-4, atol=1e-4):
                failures.append(x)

    threads = [threading.Thread(target=work, args=(x,)) for x in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
