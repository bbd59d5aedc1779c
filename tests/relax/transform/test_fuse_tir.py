"""FuseTIR: each Primitive function becomes one PrimFunc; whole models fused and built."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import mlcbench as tvm
from mlcbench import dlight as dl, relax
from mlcbench.dlight.base import schedule_func
from mlcbench.ir import IRError
from mlcbench.relax import op
from mlcbench.script import ir as I, relax as R, tir as T
from mlcbench.target import Target
from mlcbench.topi import testing as ref


@I.ir_module
class Before:
    @T.prim_func
    def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"),
            C: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = A[vi] + B[vi]

    @T.prim_func
    def exp(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = T.exp(A[vi])

    @R.function(private=True)
    def fused_add_exp_add(x: R.Tensor((4,), "float32"),
                          y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        R.func_attr({"Primitive": True})
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((4,), "float32"))
            lv1 = R.call_tir(cls.exp, (lv,), out_sinfo=R.Tensor((4,), "float32"))
            gv = R.call_tir(cls.add, (lv1, x), out_sinfo=R.Tensor((4,), "float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
        with R.dataflow():
            gv: R.Tensor((4,), "float32") = cls.fused_add_exp_add(x, y)
            R.output(gv)
        return gv


@I.ir_module
class Expected:
    @T.prim_func
    def fused_add_exp_add(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32"),
                          C: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "fused_add_exp_add", "tir.noalias": True})
        C_intermediate = T.alloc_buffer((4,), "float32")
        B_intermediate = T.alloc_buffer((4,), "float32")
        for i in range(4):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C_intermediate[vi] = x[vi] + y[vi]
        for i in range(4):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B_intermediate[vi] = T.exp(C_intermediate[vi])
        for i in range(4):
            with T.block("C_1"):
                vi = T.axis.remap("S", [i])
                C[vi] = B_intermediate[vi] + x[vi]

    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
        with R.dataflow():
            gv = R.call_tir(cls.fused_add_exp_add, (x, y), out_sinfo=R.Tensor((4,), "float32"))
            R.output(gv)
        return gv


def test_primitive_function_becomes_one_prim_func():
    tvm.ir.assert_structural_equal(relax.transform.FuseTIR()(Before), Expected)


def test_fused_prim_func_matches_numpy(run_kernels):
    x, y = np.float32([0.5, -1, 2, 0]), np.float32([1, 1, -3, 0.25])
    got, calls = run_kernels(relax.transform.FuseTIR()(Before), x, y)
    np.testing.assert_allclose(got, np.exp(x + y) + x, rtol=1e-5)
    assert calls == 1


@I.ir_module
class TwoResults:
    @T.prim_func
    def exp(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = T.exp(A[vi])

    @R.function(private=True)
    def fused_exp_exp(x: R.Tensor((4,), "float32")):
        R.func_attr({"Primitive": True})
        with R.dataflow():
            lv = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
            gv = R.call_tir(cls.exp, (lv,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(lv, gv)
        return (lv, gv)

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv: R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32")) = \
                cls.fused_exp_exp(x)
            a = lv[0]
            b = lv[1]
            gv = R.call_tir(cls.exp, (a,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(b, gv)
        return (b, gv)


def test_a_group_with_two_results_and_a_kernel_still_called_from_main(run_kernels):
    mod = relax.transform.FuseTIR()(TwoResults)
    fused = mod["fused_exp_exp"]
    assert [b.name for _, b in fused.buffer_params()] == ["x", "B", "B_1"]
    assert [blk.value.op.name for blk in mod["main"].body.blocks[0].bindings
            if isinstance(blk.value, relax.Call)] == ["relax.call_tir", "relax.call_tir"]
    assert "exp" in mod                  # main still calls it
    x = np.float32([0, 0.5, -1, 1])
    (twice, again), calls = run_kernels(mod, x)
    np.testing.assert_allclose(twice, np.exp(np.exp(x)), rtol=1e-5)
    np.testing.assert_allclose(again, np.exp(np.exp(x)), rtol=1e-5)
    assert calls == 2


def test_only_call_tir_can_be_fused():
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    inner = relax.Var("gv", relax.TensorStructInfo((4,), "float32"))
    body = relax.SeqExpr([relax.DataflowBlock([relax.VarBinding(inner, op.exp(x))])], inner)
    func = relax.Function([x], body, attrs={"Primitive": True})
    mod = tvm.IRModule({"fused_exp": func})
    with pytest.raises(IRError, match="only call_tir"):
        relax.transform.FuseTIR()(mod)


# -- whole models ------------------------------------------------------------------------------

def tensor(name, shape):
    return relax.Var(name, relax.TensorStructInfo(shape, "float32"))


def model(params, body):
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            gv = bb.emit_output(body(bb, *params))
        bb.emit_func_output(gv)
    return bb.get()


def compile_stages(mod):
    """(legalized and annotated module, fused module)."""
    lowered = relax.transform.AnnotateTIROpPattern()(relax.transform.LegalizeOps()(mod))
    fused = relax.transform.FuseTIR()(relax.transform.FuseOps()(lowered))
    return lowered, fused


def prim_funcs(mod):
    return {gv.name_hint: f for gv, f in mod.items() if isinstance(f, tvm.tir.PrimFunc)}


def rule_for(func):
    return type(schedule_func(func, dl.cpu.default_rules(), Target("llvm"))[1]).__name__


def mlp():
    params = [tensor("x", (2, 16)), tensor("w0", (16, 32)), tensor("b0", (32,)),
              tensor("w1", (32, 10)), tensor("b1", (10,))]

    def body(bb, x, w0, b0, w1, b1):
        hidden = bb.emit(op.nn.relu(bb.emit(op.add(bb.emit(op.matmul(x, w0)), b0))))
        return bb.emit(op.add(bb.emit(op.matmul(hidden, w1)), b1))

    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, p.struct_info.static_shape()).astype("float32")
              for p in params]
    x, w0, b0, w1, b1 = arrays
    return model(params, body), arrays, np.maximum(x @ w0 + b0, 0) @ w1 + b1


def test_mlp_fused_and_built(run_kernels):
    mod, arrays, expected = mlp()
    lowered, fused = compile_stages(mod)
    assert sorted(prim_funcs(fused)) == ["fused_matmul1_add1", "fused_matmul_add_relu"]
    assert not any(isinstance(f, relax.Function) and f.attrs.get("Primitive")
                   for f in fused.functions.values())
    before, calls_before = run_kernels(lowered, *arrays)
    after, calls_after = run_kernels(fused, *arrays)
    assert (calls_before, calls_after) == (5, 2)
    np.testing.assert_allclose(before, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(after, expected, rtol=1e-5, atol=1e-5)


def test_default_schedule_recognises_fused_matmul_bias_relu(run_kernels):
    mod, arrays, expected = mlp()
    _, fused = compile_stages(mod)
    assert rule_for(fused["fused_matmul_add_relu"]) == "Matmul"
    scheduled = dl.ApplyDefaultSchedule(*dl.cpu.default_rules())(fused)
    assert all(f.attrs.get("tir.is_scheduled") for f in prim_funcs(scheduled).values())
    got, _ = run_kernels(scheduled, *arrays)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_course_mlp_written_in_tvmscript(course_mlp, mlp_weights, run_kernels):
    lowered = relax.transform.AnnotateTIROpPattern()(course_mlp)
    fused = relax.transform.FuseTIR()(relax.transform.FuseOps()(lowered))
    assert sorted(prim_funcs(fused)) == ["fused_linear0_relu0", "linear1"]
    arrays, expected = mlp_weights
    got, calls = run_kernels(fused, *arrays)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    assert calls == 2


def small_cnn():
    params = [tensor("x", (1, 2, 8, 8)), tensor("k", (4, 2, 3, 3)), tensor("kb", (1, 4, 1, 1)),
              tensor("w", (64, 10)), tensor("b", (10,))]

    def body(bb, x, k, kb, w, b):
        c = bb.emit(op.nn.relu(bb.emit(op.add(bb.emit(op.nn.conv2d(x, k, padding=1)), kb))))
        flat = bb.emit(op.reshape(bb.emit(op.nn.max_pool2d(c, 2, 2)), (1, 64)))
        return bb.emit(op.nn.softmax(bb.emit(op.add(bb.emit(op.matmul(flat, w)), b))))

    rng = np.random.default_rng(3)
    arrays = [rng.uniform(-1, 1, p.struct_info.static_shape()).astype("float32")
              for p in params]
    x, k, kb, w, b = arrays
    conv = np.maximum(ref.conv2d_nchw_python(x, k, 1, (1, 1, 1, 1)) + kb, 0)
    logits = conv.reshape(1, 4, 4, 2, 4, 2).max(axis=(3, 5)).reshape(1, 64) @ w + b
    probs = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    return model(params, body), arrays, probs


def test_small_cnn_fused_and_built(run_kernels):
    mod, arrays, expected = small_cnn()
    lowered, fused = compile_stages(mod)
    assert sorted(prim_funcs(fused)) == ["fused_conv2d_add_relu", "fused_matmul_add1",
                                         "max_pool2d", "reshape", "softmax"]
    before, calls_before = run_kernels(lowered, *arrays)
    after, calls_after = run_kernels(fused, *arrays)
    assert (calls_before, calls_after) == (8, 5)
    np.testing.assert_allclose(before, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(after, expected, rtol=1e-5, atol=1e-6)
    assert rule_for(fused["fused_conv2d_add_relu"]) == "Conv2D"
    assert rule_for(fused["fused_matmul_add1"]) == "Matmul"


# -- random elementwise chains: fused and unfused agree ----------------------------------------

UNARY = {"relu": op.nn.relu, "negative": op.negative, "tanh": op.tanh,
         "sigmoid": op.sigmoid, "abs": op.abs}
BINARY = {"add": op.add, "subtract": op.subtract, "multiply": op.multiply,
          "maximum": op.maximum}
STEP = st.one_of(
    st.tuples(st.sampled_from(sorted(UNARY)), st.integers(0, 99)),
    st.tuples(st.sampled_from(sorted(BINARY)), st.integers(0, 99), st.integers(0, 99)))


def chain_module(steps):
    """main(x (3, 4), row (4,), col (3, 1)): each step applies an op to earlier values
    (picked by index), so chains branch and meet again."""
    params = [tensor("x", (3, 4)), tensor("row", (4,)), tensor("col", (3, 1))]

    unused = set()

    def body(bb, x, row, col):
        values, operands = [x], [x, row, col]
        for step in steps:
            args = [values[step[1] % len(values)]]
            if step[0] not in UNARY:
                pool = values + operands[1:]
                args.append(pool[step[2] % len(pool)])
            unused.difference_update(args)
            values.append(bb.emit((UNARY.get(step[0]) or BINARY[step[0]])(*args)))
            unused.add(values[-1])
        return values[-1]

    mod = model(params, body)
    return mod, len(unused) - 1          # bindings nobody reads, besides the result


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=7), seed=st.integers(0, 2**16))
def test_random_elementwise_chains_fused_and_unfused_agree(steps, seed, run_kernels):
    mod, dead = chain_module(steps)
    lowered, fused = compile_stages(mod)
    everything = fused.copy()
    for gv, func in lowered.items():
        if isinstance(func, tvm.tir.PrimFunc) and gv.name_hint not in everything:
            everything[gv.name_hint] = func
    lib = tvm.build(everything)
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-2, 2, s).astype("float32") for s in ((3, 4), (4,), (3, 1))]
    unfused, calls_before = run_kernels(lowered, *arrays, lib=lib)
    result, calls_after = run_kernels(fused, *arrays, lib=lib)
    np.testing.assert_allclose(result, unfused, rtol=1e-5, atol=1e-6)
    assert calls_before == len(steps)
    if dead == 0:
        assert calls_after == 1                  # the whole chain is one kernel
    assert calls_after <= calls_before


def test_fields_of_a_tuple_made_outside_a_group_are_passed_one_by_one(run_kernels):
    x = tensor("x", (4, 6))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            parts = bb.emit_output(op.split(x, 2, axis=1))   # seen after the block
            left = bb.emit(op.exp(bb.emit(relax.TupleGetItem(parts, 0))))
            right = bb.emit(op.nn.relu(bb.emit(relax.TupleGetItem(parts, 1))))
            gv = bb.emit_output(op.add(left, right))
        bb.emit_func_output(gv)
    lowered, fused = compile_stages(bb.get())
    fused_ops = relax.transform.FuseOps()(lowered)
    func = fused_ops["fused_exp_relu_add"]
    assert [p.struct_info.ndim for p in func.params] == [2, 2]      # tensors, not the tuple
    data = np.random.default_rng(5).uniform(-1, 1, (4, 6)).astype("float32")
    got, calls = run_kernels(fused, data)
    np.testing.assert_allclose(got, np.exp(data[:, :3]) + np.maximum(data[:, 3:], 0),
                               rtol=1e-5)
    assert calls == 2
