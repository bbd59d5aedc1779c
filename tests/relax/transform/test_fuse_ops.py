"""FuseOps: call_tir bindings grouped into "Primitive" functions by TVM's rules, and the
report of why each edge fused or not."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir.transform import PassContext
from mlcbench.relax import op
from mlcbench.script import ir as I, relax as R, tir as T


@I.ir_module
class Chain:
    @T.prim_func
    def matmul(A: T.Buffer((2, 3), "float32"), W: T.Buffer((3, 4), "float32"),
               C: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 4})
        for i, j, k in T.grid(2, 4, 3):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * W[vk, vj]

    @T.prim_func
    def add(A: T.Buffer((2, 4), "float32"), B: T.Buffer((4,), "float32"),
            C: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        for i, j in T.grid(2, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vj]

    @T.prim_func
    def relu(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        for i, j in T.grid(2, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.max(A[vi, vj], T.float32(0))

    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32"),
             b: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((2, 4), "float32"))
            lv1 = R.call_tir(cls.add, (lv, b), out_sinfo=R.Tensor((2, 4), "float32"))
            gv = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((2, 4), "float32"))
            R.output(gv)
        return gv


@I.ir_module
class ChainFused:
    @T.prim_func
    def matmul(A: T.Buffer((2, 3), "float32"), W: T.Buffer((3, 4), "float32"),
               C: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 4})
        for i, j, k in T.grid(2, 4, 3):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * W[vk, vj]

    @T.prim_func
    def add(A: T.Buffer((2, 4), "float32"), B: T.Buffer((4,), "float32"),
            C: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        for i, j in T.grid(2, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vj]

    @T.prim_func
    def relu(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        for i, j in T.grid(2, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.max(A[vi, vj], T.float32(0))

    @R.function(private=True)
    def fused_matmul_add_relu(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32"),
                              b: R.Tensor((4,), "float32")) -> R.Tensor((2, 4), "float32"):
        R.func_attr({"Primitive": True})
        with R.dataflow():
            lv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((2, 4), "float32"))
            lv1 = R.call_tir(cls.add, (lv, b), out_sinfo=R.Tensor((2, 4), "float32"))
            gv = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((2, 4), "float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w: R.Tensor((3, 4), "float32"),
             b: R.Tensor((4,), "float32")):
        with R.dataflow():
            gv: R.Tensor((2, 4), "float32") = cls.fused_matmul_add_relu(x, w, b)
            R.output(gv)
        return gv


def test_matmul_takes_bias_and_relu():
    tvm.ir.assert_structural_equal(relax.transform.FuseOps()(Chain), ChainFused)


def test_fused_module_prints_and_parses_back():
    fused = relax.transform.FuseOps()(Chain)
    tvm.ir.assert_structural_equal(tvm.script.from_source(fused.script()), fused)


def test_fusing_twice_changes_nothing():
    fused = relax.transform.FuseOps()(Chain)
    assert relax.transform.FuseOps()(fused) is fused


def test_fuse_opt_level_zero_turns_fusion_off():
    assert relax.transform.FuseOps(fuse_opt_level=0)(Chain) is Chain
    with PassContext(opt_level=0):
        assert relax.transform.FuseOps()(Chain) is Chain
        report = relax.transform.fusion_report(Chain)
    assert {e.rule for e in report} == {"fusion_off"}


# -- the rules, on modules built from high-level ops ----------------------------------------

def tensor(name, shape, dtype="float32"):
    return relax.Var(name, relax.TensorStructInfo(shape, dtype))


def lowered(params, body, outputs_inside=()):
    """Legalized and annotated module whose main runs ``body(bb, *params)`` in one dataflow
    block; ``outputs_inside`` are values made visible after the block midway."""
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            gv = bb.emit_output(body(bb, *params))
        bb.emit_func_output(gv)
    mod = relax.transform.LegalizeOps()(bb.get())
    return relax.transform.AnnotateTIROpPattern()(mod)


def groups(mod):
    """``{fused function name: names of the PrimFuncs it calls}``."""
    out = {}
    for gv, func in mod.items():
        if isinstance(func, relax.Function) and func.attrs.get("Primitive"):
            out[gv.name_hint] = [b.value.args[0].name_hint
                                 for b in func.body.blocks[0].bindings]
    return out


def main_callees(mod):
    calls = [b.value for b in mod["main"].body.blocks[0].bindings
             if isinstance(b.value, relax.Call)]
    return [c.args[0].name_hint if isinstance(c.op, tvm.ir.Op) else c.op.name_hint
            for c in calls]


def diamond():
    """matmul p feeds exp and relu that meet in an add; a second matmul q joins later."""
    a, m1, m2 = tensor("a", (4, 4)), tensor("m1", (4, 4)), tensor("m2", (4, 4))

    def body(bb, a, m1, m2):
        p = bb.emit(op.matmul(a, m1))
        q = bb.emit(op.matmul(a, m2))
        s = bb.emit(op.add(bb.emit(op.exp(p)), bb.emit(op.nn.relu(p))))
        return bb.emit(op.sum(bb.emit(op.add(s, q)), axis=1))

    return lowered([a, m1, m2], body)


def test_diamond_fuses_into_its_post_dominator_and_two_matmuls_stay_apart(run_kernels):
    mod = diamond()
    fused = relax.transform.FuseOps()(mod)
    assert groups(fused) == {"fused_matmul_exp_relu_add": ["matmul", "exp", "relu", "add"],
                             "fused_matmul_add": ["matmul", "add"]}
    assert main_callees(fused) == ["fused_matmul_exp_relu_add", "fused_matmul_add", "sum"]
    rng = np.random.default_rng(1)
    arrays = [rng.uniform(-1, 1, (4, 4)).astype("float32") for _ in range(3)]
    expected, calls_before = run_kernels(mod, *arrays)
    got, calls_after = run_kernels(fused, *arrays)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert (calls_before, calls_after) == (7, 7)     # same kernels, called through groups
    report = relax.transform.fusion_report(mod)
    assert report.edge("lv4", "lv5").rule == "out_ewise_path"      # add(s, q) holds matmul q
    assert report.edge("lv2", "lv4").fused                          # exp -> add, in the diamond
    assert "merged while fusing lv" in report.edge("lv2", "lv4").reason


def test_elementwise_ops_fuse_into_a_reduction_which_takes_no_consumers():
    x = tensor("x", (4, 8))
    mod = lowered([x], lambda bb, x: bb.emit(op.exp(bb.emit(op.sum(bb.emit(op.nn.relu(
        bb.emit(op.exp(x)))), axis=1)))))
    fused = relax.transform.FuseOps()(mod)
    assert groups(fused) == {"fused_exp_relu_sum": ["exp", "relu", "sum"]}
    report = relax.transform.fusion_report(mod)
    assert report.edge("lv1", "lv2").rule == "elemwise"
    assert report.edge("lv2", "lv3").rule == "reduce_no_consumers"
    assert not report.edge("lv2", "lv3").fused


def test_injective_ops_chain_but_do_not_enter_a_matmul():
    x, w = tensor("x", (4, 6)), tensor("w", (24, 3))

    def body(bb, x, w):
        flat = bb.emit(op.reshape(bb.emit(op.permute_dims(x)), (1, 24)))
        return bb.emit(op.matmul(flat, w))

    mod = lowered([x, w], body)
    fused = relax.transform.FuseOps()(mod)
    assert groups(fused) == {"fused_transpose_reshape": ["transpose", "reshape"]}
    report = relax.transform.fusion_report(mod)
    assert report.edge("lv", "lv1").rule == "injective"
    assert report.edge("lv1", "lv2").rule == "injective_path"


def test_a_value_used_after_the_block_ends_a_group_but_is_not_inside_one():
    x = tensor("x", (4,))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            seen_after = bb.emit_output(op.exp(x))          # a dataflow output
            gv = bb.emit_output(op.nn.relu(op.negative(seen_after)))
        bb.emit_func_output(relax.Tuple([seen_after, gv]))
    mod = relax.transform.AnnotateTIROpPattern()(relax.transform.LegalizeOps()(bb.get()))
    fused = relax.transform.FuseOps()(mod)
    assert groups(fused) == {"fused_negative_relu": ["negative", "relu"]}
    assert relax.transform.fusion_report(mod).edge("gv", "lv").rule == "extern_ref"


def test_dataflow_blocks_are_fused_separately():
    x = tensor("x", (4,))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            first = bb.emit_output(op.nn.relu(bb.emit(op.exp(x))))
        with bb.dataflow():
            second = bb.emit_output(op.nn.relu(bb.emit(op.exp(first))))
        bb.emit_func_output(second)
    mod = relax.transform.AnnotateTIROpPattern()(relax.transform.LegalizeOps()(bb.get()))
    fused = relax.transform.FuseOps()(mod)
    assert groups(fused) == {"fused_exp_relu": ["exp", "relu"]}     # one function, shared
    calls = [b.value.op.name_hint for block in fused["main"].body.blocks
             for b in block.bindings]
    assert calls == ["fused_exp_relu", "fused_exp_relu"]


def test_max_depth_caps_the_size_of_a_group():
    x = tensor("x", (4,))

    def body(bb, x):
        for unary in (op.exp, op.negative, op.nn.relu, op.tanh, op.sigmoid):
            x = bb.emit(unary(x))
        return x

    mod = lowered([x], body)
    assert max(map(len, groups(relax.transform.FuseOps()(mod)).values())) == 5
    with PassContext(config={"relax.FuseOps.max_depth": 2}):
        capped = relax.transform.FuseOps()(mod)
        report = relax.transform.fusion_report(mod)
    assert [len(g) for g in groups(capped).values()] == [2, 2]
    assert [(e.fused, e.rule) for e in report][:3] == [
        (True, "elemwise"), (False, "max_depth"), (True, "elemwise")]


def test_constants_become_parameters_of_the_group(run_kernels):
    x = tensor("x", (3,))
    bias = relax.const(np.array([1.0, -2.0, 3.0], "float32"))
    mod = lowered([x], lambda bb, x: bb.emit(op.nn.relu(bb.emit(op.add(x, bias)))))
    fused = relax.transform.FuseOps()(mod)
    func = fused["fused_add_relu"]
    assert [p.name_hint for p in func.params] == ["x", "param_0"]
    call = fused["main"].body.blocks[0].bindings[0].value
    assert isinstance(call.args[1], relax.Constant)
    got, _ = run_kernels(fused, np.array([0.5, 0.5, -5.0], "float32"))
    np.testing.assert_allclose(got, [1.5, 0.0, 0.0])


def test_report_of_the_mlp_names_each_rule():
    x, w0, b0, w1, b1 = (tensor("x", (1, 8)), tensor("w0", (8, 6)), tensor("b0", (6,)),
                         tensor("w1", (6, 3)), tensor("b1", (3,)))

    def mlp(bb, x, w0, b0, w1, b1):
        hidden = bb.emit(op.nn.relu(bb.emit(op.add(bb.emit(op.matmul(x, w0)), b0))))
        return bb.emit(op.add(bb.emit(op.matmul(hidden, w1)), b1))

    report = relax.transform.fusion_report(lowered([x, w0, b0, w1, b1], mlp))
    rows = [(e.producer, e.consumer, e.fused, e.rule) for e in report]
    assert rows == [("lv", "lv1", True, "out_ewise"), ("lv1", "lv2", True, "out_ewise"),
                    ("lv2", "lv3", False, "out_ewise_needs_elemwise"),
                    ("lv3", "lv4", True, "out_ewise"),
                    ("lv4", "gv", False, "out_ewise_needs_elemwise")]
    first = report.edge("lv", "lv1")
    assert (first.producer_op, first.producer_pattern, first.consumer_op,
            first.consumer_pattern, first.group) == ("matmul", "out_ewise_fusable", "add",
                                                     "elemwise", "fused_matmul_add_relu")
    assert [g.bindings for g in report.groups] == [("lv", "lv1", "lv2"), ("lv3", "lv4")]
    assert "lv2 (elemwise, in a group that is out_ewise_fusable)" in str(report)
    assert report.to_dicts()[0]["reason"] == first.reason
    with pytest.raises(KeyError, match="no edge"):
        report.edge("x", "lv")
