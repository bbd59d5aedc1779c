"""relax.build: pipelines, kernel deduplication, schedules (default, looked up, kept)."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir.instrument import RecordingInstrument
from mlcbench.ir import CodegenError, MLCBenchError
from mlcbench.relax.vm_build import SCHEDULE_LOOKUP_CONFIG, looks_scheduled
from mlcbench.script import ir as I, relax as R, tir as T

LOWER = "vm_lowering"


@I.ir_module
class HighLevelMLP:
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


def vm_of(ex):
    return relax.VirtualMachine(ex, tvm.cpu())


def test_default_pipeline_legalizes_and_runs_high_level_ops(mlp_weights):
    args, expected = mlp_weights
    out = vm_of(relax.build(HighLevelMLP, target="llvm"))["main"](*args)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


def test_lowering_passes_and_default_schedules_are_instrumented(course_mlp):
    recorder = RecordingInstrument()
    with tvm.transform.PassContext(instruments=[recorder]):
        relax.build(course_mlp, "llvm", pipeline=LOWER)
    names = [r.name for r in recorder.records]
    lowering = ["ToNonDataflow", "CallTIRRewrite", "StaticPlanBlockMemory"]
    assert [n for n in names if n in lowering] == lowering
    assert names.index("StaticPlanBlockMemory") < names.index("dlight.ApplyDefaultSchedule") \
        < names.index("tir.LowerInitBlock")


def test_pipeline_that_keeps_call_tir_is_followed_by_vm_lowering(course_mlp, mlp_weights):
    args, expected = mlp_weights
    for pipeline in ([], tvm.transform.Sequential([])):
        out = vm_of(relax.build(course_mlp, "llvm", pipeline=pipeline))["main"](*args)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


def test_pipelines_by_name():
    assert [p.info.name for p in relax.get_pipeline("vm_lowering").passes] == [
        "ToNonDataflow", "CallTIRRewrite", "StaticPlanBlockMemory"]
    default = [p.info.name for p in relax.get_pipeline("default").passes]
    assert default[:5] == ["FoldConstant", "FoldBatchnormToConv2D", "ConvertLayoutForTarget",
                           "FuseTransposeMatmul", "LegalizeOps"] \
        and default[-3:] == [
        "ToNonDataflow", "CallTIRRewrite", "StaticPlanBlockMemory"]
    with pytest.raises(MLCBenchError, match="no pipeline named 'fast'"):
        relax.get_pipeline("fast")
    with pytest.raises(CodegenError, match="pipeline is a name, a Pass or a list"):
        relax.build(HighLevelMLP, "llvm", pipeline=3)


def test_a_lone_function_builds_as_main(course_mlp_extern, mlp_weights):
    args, expected = mlp_weights
    ex = relax.build(course_mlp_extern["main"], "llvm")
    np.testing.assert_allclose(vm_of(ex)["main"](*args).numpy(), expected, rtol=1e-5)


# -- kernels ---------------------------------------------------------------------------

@I.ir_module
class FourSteps:
    @T.prim_func
    def step_a(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[vi] + T.float32(1)

    @T.prim_func
    def step_b(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor((8,), "float32")):
        with R.dataflow():
            a = R.call_tir(cls.step_a, (x,), R.Tensor((8,), "float32"))
            b = R.call_tir(cls.step_b, (a,), R.Tensor((8,), "float32"))
            c = R.call_tir(cls.step_a, (b,), R.Tensor((8,), "float32"))
            d = R.call_tir(cls.step_b, (c,), R.Tensor((8,), "float32"))
            R.output(d)
        return d


def test_equal_prim_funcs_compile_to_one_kernel_and_memory_is_reused():
    ex = relax.build(FourSteps, "llvm", pipeline=LOWER)
    assert ex.lib.function_names == ["step_a"]
    # Each step adds one elementwise over a tensor that dies there: a, b and c share one
    # storage, each written in place over the one before.
    assert ex.planned_storage_bytes("main") == 32
    usage = relax.analysis.estimate_memory_usage(FourSteps)["main"]
    assert (usage.storage_bytes, usage.intermediate_bytes) == (32, 96)
    x = np.arange(8, dtype="float32")
    np.testing.assert_allclose(vm_of(ex)["main"](x).numpy(), x + 4)


@T.prim_func
def copy_128(X: T.Buffer((1, 128), "float32"), Y: T.Buffer((1, 128), "float32")):
    for i, j in T.grid(1, 128):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = X[vi, vj]


def test_schedule_lookup_supplies_kernels_it_covers(course_mlp, mlp_weights):
    asked = []

    def lookup(func, name, target):
        asked.append(name)
        return copy_128 if name == "relu0" else None      # "the database" says: no relu

    ex = relax.build(course_mlp, "llvm", pipeline=LOWER, schedule_lookup=lookup)
    assert sorted(asked) == ["linear0", "linear1", "relu0"]
    (x, w0, b0, w1, b1), _ = mlp_weights
    out = vm_of(ex)["main"](x, w0, b0, w1, b1)
    np.testing.assert_allclose(out.numpy(), (x @ w0.T + b0) @ w1.T + b1, rtol=1e-4, atol=1e-4)


def test_schedule_lookup_may_return_a_schedule(course_mlp, mlp_weights):
    def lookup(func, name, target):
        if name != "relu0":
            return None
        sch = tvm.tir.Schedule(func)
        _, j = sch.get_loops(sch.get_block("Y"))
        sch.vectorize(j)
        return sch

    args, expected = mlp_weights
    ex = relax.build(course_mlp, "llvm", pipeline=LOWER, schedule_lookup=lookup)
    np.testing.assert_allclose(vm_of(ex)["main"](*args).numpy(), expected, rtol=1e-4, atol=1e-4)
    with pytest.raises(CodegenError, match="schedule_lookup for kernel 'linear0' returned str"):
        relax.build(course_mlp, "llvm", pipeline=LOWER, schedule_lookup=lambda f, n, t: "x")


def test_schedule_lookup_from_the_pass_context_and_scheduled_kernels_are_kept(course_mlp):
    asked = []

    def lookup(func, name, target):
        asked.append(name)

    mod = course_mlp.with_function("linear1", course_mlp["linear1"].with_attr(
        "tir.is_scheduled", True))
    with tvm.transform.PassContext(config={SCHEDULE_LOOKUP_CONFIG: lookup}):
        relax.build(mod, "llvm", pipeline=LOWER)
    assert sorted(asked) == ["linear0", "relu0"]


def test_a_parallel_or_vectorized_loop_marks_a_kernel_as_scheduled(course_mlp):
    sch = tvm.tir.Schedule(course_mlp["relu0"])
    _, j = sch.get_loops(sch.get_block("Y"))
    sch.vectorize(j)
    assert looks_scheduled(sch.mod["main"]) and not looks_scheduled(course_mlp["relu0"])


def test_weights_are_transposed_at_build_time_not_per_call():
    """A Linear's weight transpose depends only on constants: the build folds it, so no
    kernel of the built module transposes a weight."""
    from mlcbench.relax.frontend import nn
    from mlcbench.relax.transform import BindParams

    class Linear(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(8, 4)

        def forward(self, x):
            return self.fc(x)

    model = Linear()
    mod, params = model.export_tvm(spec={"forward": {"x": nn.spec.Tensor((1, 8), "float32")}})
    rng = np.random.default_rng(0)
    weights = {name: rng.random([int(d) for d in p.shape], dtype="float32") for name, p in params}
    bound = BindParams("forward", {name: tvm.nd.array(w) for name, w in weights.items()})(mod)
    lowered = relax.get_pipeline("zero")(bound)
    assert not any("transpose" in gv.name_hint for gv in lowered.get_global_vars()), \
        [gv.name_hint for gv in lowered.get_global_vars()]
    vm = relax.VirtualMachine(relax.build(bound, "llvm"), tvm.cpu())
    x = rng.random((1, 8), dtype="float32")
    expected = x @ weights["fc.weight"].T + weights["fc.bias"]
    np.testing.assert_allclose(vm["forward"](tvm.nd.array(x)).numpy(), expected, rtol=1e-5)
