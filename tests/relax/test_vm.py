"""The virtual machine: every kind of binding, storage reuse across calls, errors, timing."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir import CodegenError
from mlcbench.relax.vm import VMError
from mlcbench.script import ir as I, relax as R, tir as T

LOWER = "vm_lowering"     # these modules are in call_tir form: no legalization needed


def run(mod, *args, func="main"):
    vm = relax.VirtualMachine(relax.build(mod, "llvm", pipeline=LOWER), tvm.cpu())
    return vm[func](*args)


def test_course_module_matches_numpy(course_mlp, mlp_weights):
    args, expected = mlp_weights
    vm = relax.VirtualMachine(relax.build(course_mlp, "llvm", pipeline=LOWER), tvm.cpu())
    np.testing.assert_allclose(vm["main"](*args).numpy(), expected, rtol=1e-4, atol=1e-4)
    nd_args = [tvm.nd.array(a) for a in args]
    np.testing.assert_allclose(vm["main"](*nd_args).numpy(), expected, rtol=1e-4, atol=1e-4)


def test_dps_packed_functions_registered_in_numpy(course_mlp_extern, mlp_weights):
    args, expected = mlp_weights
    np.testing.assert_allclose(run(course_mlp_extern, *args).numpy(), expected, rtol=1e-5)


def test_results_of_earlier_calls_survive_later_calls(course_mlp, mlp_weights):
    args, expected = mlp_weights
    vm = relax.VirtualMachine(relax.build(course_mlp, "llvm", pipeline=LOWER), tvm.cpu())
    first = vm["main"](*args)
    vm["main"](*([np.zeros_like(args[0])] + args[1:]))
    np.testing.assert_allclose(first.numpy(), expected, rtol=1e-4, atol=1e-4)


@I.ir_module
class Chain:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            a = R.call_dps_packed("test.record_twice", (x,), R.Tensor((4,), "float32"))
            b = R.call_dps_packed("test.record_twice", (a,), R.Tensor((4,), "float32"))
            c = R.call_dps_packed("test.record_twice", (b,), R.Tensor((4,), "float32"))
            d = R.call_dps_packed("test.record_twice", (c,), R.Tensor((4,), "float32"))
            R.output(d)
        return d


def test_planned_storage_is_reused_within_and_across_calls():
    addresses = []

    def record_twice(x, out):
        addresses.append(out.data_ptr)
        out.copyfrom(2 * x.numpy())

    tvm.register_func("test.record_twice", record_twice, override=True)
    vm = relax.VirtualMachine(relax.build(Chain, "llvm", pipeline=LOWER), tvm.cpu())
    x = np.arange(4, dtype="float32")
    for _ in range(2):
        np.testing.assert_allclose(vm["main"](x).numpy(), 16 * x)
    first, second = addresses[:4], addresses[4:]
    assert first[0] == first[2] != first[1]          # a's storage serves c
    assert first[:3] == second[:3]                   # the same storage every call
    assert first[3] != second[3]                     # the result is fresh each call


@I.ir_module
class Structured:
    @T.prim_func
    def add_one(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[vi] + T.float32(1)

    @R.function
    def inner(x: R.Tensor((4,), "float32")):
        y = R.call_tir(cls.add_one, (x,), R.Tensor((4,), "float32"))
        return (x, y)

    @R.function
    def main(x: R.Tensor((4,), "float32"), flag: R.Tensor((), "bool")):
        pair: R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32")) = cls.inner(x)
        y = pair[1]
        c = R.const([10.0, 20.0, 30.0, 40.0], "float32")
        if flag:
            z = R.call_tir(cls.add_one, (y,), R.Tensor((4,), "float32"))
        else:
            z = c
        s = R.call_pure_packed("test.np_sum", z, sinfo_args=R.Tensor((), "float32"))
        return (z, s, R.shape([2, 3]))


def test_tuples_constants_if_calls_between_functions_and_pure_packed():
    tvm.register_func("test.np_sum", lambda t: np.asarray(t.numpy().sum()), override=True)
    x = np.arange(4, dtype="float32")
    z, s, shape = run(Structured, x, np.array(True))
    np.testing.assert_allclose(z.numpy(), x + 2)
    assert float(s.numpy()) == pytest.approx((x + 2).sum()) and shape == (2, 3)
    z, s, _ = run(Structured, x, np.array(False))
    np.testing.assert_allclose(z.numpy(), [10, 20, 30, 40])


@I.ir_module
class Countdown:
    @R.function
    def main(x: R.Tensor((4,), "float32"), n: R.Tensor((), "int32")):
        # f(x, 0) = 4x; f(x, n) = 2x + f(2x, n - 1). ``a`` lives in planned storage
        # across the recursive call, so each call level needs storage of its own.
        a = R.call_dps_packed("test.double", (x,), R.Tensor((4,), "float32"))
        positive = R.call_pure_packed("test.positive", n, sinfo_args=R.Tensor((), "bool"))
        if positive:
            m = R.call_pure_packed("test.decrement", n, sinfo_args=R.Tensor((), "int32"))
            r: R.Tensor((4,), "float32") = cls.main(a, m)
        else:
            r = a
        out = R.call_dps_packed("test.add", (a, r), R.Tensor((4,), "float32"))
        return out


def register_countdown(positive=lambda n: np.asarray(n.numpy() > 0)):
    tvm.register_func("test.positive", positive, override=True)
    tvm.register_func("test.decrement", lambda n: np.asarray(n.numpy() - 1, "int32"),
                      override=True)
    tvm.register_func("test.double", lambda x, out: out.copyfrom(2 * x.numpy()), override=True)
    tvm.register_func("test.add", lambda a, b, out: out.copyfrom(a.numpy() + b.numpy()),
                      override=True)


def test_recursive_calls_do_not_share_planned_storage():
    register_countdown()
    ex = relax.build(Countdown, "llvm", pipeline=LOWER)
    assert ex.planned_storage_bytes("main") == 16       # ``a`` is planned
    x = np.ones(4, dtype="float32")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    for n, factor in [(0, 4), (1, 10), (3, 46)]:
        np.testing.assert_allclose(vm["main"](x, np.array(n, "int32")).numpy(), factor * x)


@I.ir_module
class Symbolic:
    @T.prim_func
    def double(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n, 4), "float32")
        for i, j in T.grid(n, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)

    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), y: R.Tensor(("n", 4), "float32")):
        lv = R.call_tir(cls.double, (x,), R.Tensor(("n", 4), "float32"))
        out = R.call_tir(cls.double, (lv,), R.Tensor(("n", 4), "float32"))
        return (out, R.shape(["n * 2"]))


def test_symbolic_shapes_bind_at_call_time_and_are_checked():
    vm = relax.VirtualMachine(relax.build(Symbolic, "llvm", pipeline=LOWER), tvm.cpu())
    for rows in (1, 3):
        x = np.arange(rows * 4, dtype="float32").reshape(rows, 4)
        out, shape = vm["main"](x, x)
        np.testing.assert_allclose(out.numpy(), 4 * x)
        assert shape == (2 * rows,)
    with pytest.raises(ValueError, match=r"main: parameter y: dim 0: expected 3.*found 2"):
        vm["main"](np.zeros((3, 4), "float32"), np.zeros((2, 4), "float32"))


# -- errors ------------------------------------------------------------------------------

def test_wrong_inputs_name_the_parameter(course_mlp, mlp_weights):
    args, _ = mlp_weights
    vm = relax.VirtualMachine(relax.build(course_mlp, "llvm", pipeline=LOWER), tvm.cpu())
    x, w0, b0, w1, b1 = args
    with pytest.raises(ValueError, match=r"main: expected 5 arguments \(x, w0, b0, w1, b1\), found 4"):
        vm["main"](x, w0, b0, w1)
    with pytest.raises(ValueError, match=r"parameter w0: expected shape \(128, 784\), found \(784, 128\)"):
        vm["main"](x, w0.T.copy(), b0, w1, b1)
    with pytest.raises(ValueError, match="parameter b1: expected dtype float32, found float64"):
        vm["main"](x, w0, b0, w1, b1.astype("float64"))
    with pytest.raises(TypeError, match="parameter x: expected a tensor .* found list"):
        vm["main"](x.tolist(), w0, b0, w1, b1)


def test_runtime_failure_names_the_binding_and_the_caller():
    def positive(n):
        if n.numpy() == 0:
            raise ValueError("no luck")
        return np.asarray(True)

    register_countdown(positive)
    with pytest.raises(VMError) as info:
        run(Countdown, np.ones(4, "float32"), np.array(1, "int32"))
    assert str(info.value) == (
        'While executing positive = call_pure_packed("test.positive", (n,)) '
        "in main: ValueError: no luck\n"
        "  called from: r = if positive ... in main")
    assert isinstance(info.value.__cause__, ValueError)


@I.ir_module
class WrongOutputShape:
    @T.prim_func
    def double(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n, 4), "float32")
        for i, j in T.grid(n, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)

    @R.function
    def main(x: R.Tensor(("n", 4), "float32")):
        lv = R.call_tir(cls.double, (x,), R.Tensor(("n", 5), "float32"))
        return lv


def test_kernel_argument_error_at_run_time_names_the_binding():
    # With a symbolic dim the build cannot prove the call right: the kernel checks it.
    with pytest.raises(VMError, match=r"^While executing lv = call_tir\(double, \(x,\)\) in "
                                      r"main: ArgumentValueError: double: parameter B: dim 1: "
                                      r"expected 4, found 5"):
        run(WrongOutputShape, np.zeros((2, 4), "float32"))


def test_kernel_argument_error_known_at_build_time_is_a_build_error(course_mlp):
    mod = course_mlp.with_function("main", course_mlp["main"])
    text = mod.script().replace("R.call_tir(cls.relu0, (lv0,), out_sinfo=R.Tensor((1, 128)",
                                "R.call_tir(cls.relu0, (lv0,), out_sinfo=R.Tensor((1, 127)")
    with pytest.raises(CodegenError, match=r"lv1 = call_tir\(relu0, \(lv0,\)\): kernel 'relu0' "
                                           r"parameter Y is float32\(1, 128\), the argument is "
                                           r"float32\(1, 127\)"):
        relax.build(tvm.script.from_source(text), "llvm", pipeline=LOWER)


def test_missing_packed_function_is_named(course_mlp_extern, mlp_weights):
    tvm.runtime.remove_global_func("env.relu")
    args, _ = mlp_weights
    with pytest.raises(VMError, match=r"While executing lv1 = call_dps_packed\(\"env.relu\", "
                                      r"\(lv0,\)\) in main: .*no global function named 'env.relu'"):
        run(course_mlp_extern, *args)


def test_unknown_function_name_lists_the_functions(course_mlp):
    vm = relax.VirtualMachine(relax.build(course_mlp, "llvm", pipeline=LOWER), tvm.cpu())
    with pytest.raises(AttributeError, match=r"no function 'forward'.*\['main'\]"):
        vm["forward"]


def test_a_plain_kernel_library_is_not_a_vm_program(course_mlp):
    with pytest.raises(TypeError, match="found IRModule; compile it first with relax.build"):
        relax.VirtualMachine(course_mlp, tvm.cpu())
    with pytest.raises(tvm.ir.MLCBenchError, match="kernels only"):
        relax.VirtualMachine(tvm.build(course_mlp["relu0"]), tvm.cpu())


def test_non_cpu_device_is_refused(course_mlp):
    with pytest.raises(tvm.ir.MLCBenchError, match="cuda"):
        relax.VirtualMachine(relax.build(course_mlp, "llvm", pipeline=LOWER), tvm.cuda())


# -- stateful calls and timing -----------------------------------------------------------

def test_set_input_invoke_stateful_get_outputs(course_mlp, mlp_weights):
    args, expected = mlp_weights
    vm = relax.VirtualMachine(relax.build(course_mlp, "llvm", pipeline=LOWER), tvm.cpu())
    with pytest.raises(tvm.ir.MLCBenchError, match="set_input"):
        vm.invoke_stateful("main")
    vm.set_input("main", *args)
    vm.invoke_stateful("main")
    np.testing.assert_allclose(vm.get_outputs("main").numpy(), expected, rtol=1e-4, atol=1e-4)


def test_time_evaluator_reports_mean_median_and_results(course_mlp, mlp_weights):
    args, _ = mlp_weights
    vm = relax.VirtualMachine(relax.build(course_mlp, "llvm", pipeline=LOWER), tvm.cpu())
    result = vm.module.time_evaluator("main", tvm.cpu(), number=3, repeat=4)(*args)
    assert len(result.results) == 4 and all(r > 0 for r in result.results)
    assert min(result.results) <= result.median <= max(result.results)
    assert result.mean > 0
    with pytest.raises(AttributeError, match="call it with the arguments"):
        vm.module.time_evaluator("main", tvm.cpu()).mean
    vm.set_input("main", *args)
    stateful = vm.time_evaluator("invoke_stateful", tvm.cpu(), number=2, repeat=2)("main")
    assert len(stateful.results) == 2


def test_high_level_op_left_unlowered_is_a_build_error():
    @I.ir_module
    class Unlowered:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.add(x, x)
            return y

    with pytest.raises(CodegenError, match=r"y = relax.add\(x, x\): operator relax.add has no "
                                           r"VM implementation.*LegalizeOps"):
        relax.build(Unlowered, "llvm", pipeline=LOWER)


@I.ir_module
class PackedResult:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        y = R.call_pure_packed("test.values", x, sinfo_args=R.Tensor((4,), "float32"))
        return y


def test_packed_function_results_are_checked_against_their_struct_info():
    # Kernels trust struct info, so a Python function's result is checked where it enters.
    tvm.register_func("test.values", lambda x: x.numpy()[:3], override=True)
    with pytest.raises(VMError, match=r"While executing y = call_pure_packed\("
                                      r"\"test.values\", \(x,\)\) in main: ArgumentValueError: "
                                      r"main: the result of 'test.values': expected shape \(4,\), "
                                      r"found \(3,\)"):
        run(PackedResult, np.zeros(4, "float32"))
    tvm.register_func("test.values", lambda x: x.numpy() + 1, override=True)
    np.testing.assert_allclose(run(PackedResult, np.zeros(4, "float32")).numpy(), np.ones(4))


@I.ir_module
class WrongAnnotation:
    @R.function
    def inner(x: R.Tensor((4,), "float32")):
        return x

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        y: R.Tensor((8,), "float32") = cls.inner(x)
        return y


def test_results_of_relax_calls_are_checked_against_the_annotation():
    with pytest.raises(VMError, match=r"While executing y = inner\(x\) in main: .*main: "
                                      r"the value of y = inner\(x\): expected shape \(8,\), "
                                      r"found \(4,\)"):
        run(WrongAnnotation, np.zeros(4, "float32"))


@I.ir_module
class AddOne:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            y = R.add(x, R.const(1.0, "float32"))
            R.output(y)
        return y

    @R.function
    def identity(x: R.Tensor((2, 3), "float32")):
        return x


def test_numpy_arguments_are_copied_in_whatever_their_layout():
    vm = relax.VirtualMachine(relax.build(AddOne, "llvm"), tvm.cpu())
    base = np.arange(12, dtype="float32").reshape(3, 4)
    for x in (base[:2, :3], base[:3, :2].T, np.asfortranarray(base[:2, :3])):
        np.testing.assert_array_equal(vm["main"](x).numpy(), x + 1)
    x = np.zeros((2, 3), "float32")
    same = vm["identity"](x)
    x[0, 0] = 5                     # the VM received a copy: the user's array stays theirs
    assert same.numpy()[0, 0] == 0
    outputs = [vm["main"](x) for _ in range(3)]
    assert len({o.data_ptr for o in outputs}) == 3 and outputs[0].numpy()[0, 0] == 6
