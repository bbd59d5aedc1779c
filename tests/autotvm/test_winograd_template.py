"""The Winograd template: created by template key, refusals, tuning, build with records."""
import numpy as np
import pytest

import mlcbench
from mlcbench import autotvm, relay
from mlcbench.autotvm.task.dispatcher import ApplyHistoryBest
from mlcbench.autotvm.task.relax_integration import tuned_kernel
from mlcbench.ir.errors import InvalidValueError
from mlcbench.meta_schedule.relax_integration import extract_tasks
from mlcbench.relax.transform.split_weight_packing import split_packing
from mlcbench.relay.testing import reference_outputs, tiny_cnn
from mlcbench.target import Target

WINOGRAD = "conv2d_nchw_winograd.x86"


def conv_args(data=(1, 8, 10, 10), kernel=(8, 8, 3, 3), strides=(1, 1), dilation=(1, 1),
              padding=(1, 1, 1, 1)):
    return (("TENSOR", data, "float32"), ("TENSOR", kernel, "float32"), strides, padding,
            dilation, "float32")


def test_create_with_winograd_key():
    task = autotvm.task.create("conv2d_nchw.x86", conv_args(), "llvm", None, "winograd")
    assert task.name == WINOGRAD
    # TVM 0.6's workload layout: the tutorials read the input channels as workload[1][1].
    assert task.workload[1] == (1, 8, 10, 10, "float32") and task.workload[1][1] == 8
    space = task.config_space
    assert set(space.space_map) == {"tile_size", "tile_co", "tile_p", "tile_rc", "parallel"}
    # The tile size is the first knob: configs 0 and 1 are F(4x4, 3x3) and F(2x2, 3x3).
    assert [space.get(i)["tile_size"].val for i in range(2)] == [4, 2]
    # Counted as the direct convolution, so GFLOPS compare across templates.
    assert task.flop == 2 * 8 * 10 * 10 * 8 * 9
    direct = autotvm.task.create("conv2d_nchw.x86", conv_args(), "llvm", None, "direct")
    assert direct.name == "conv2d_nchw.x86"
    # Named directly, with the direct template's arguments: the same workload.
    named = autotvm.task.create(WINOGRAD, conv_args(), "llvm")
    assert named.workload == task.workload


@pytest.mark.parametrize("args, match", [
    (conv_args(kernel=(8, 8, 5, 5)), "kernel size 5x5 \\(needs 3x3\\)"),
    (conv_args(strides=(2, 2)), "stride \\(2, 2\\) \\(needs 1\\)"),
    (conv_args(dilation=(2, 2)), "dilation \\(2, 2\\) \\(needs 1\\)"),
    (conv_args(kernel=(8, 4, 3, 3)), "ungrouped.*4 channels per group.*8 \\(groups > 1\\)"),
])
def test_create_refuses_what_winograd_cannot_compute(args, match):
    with pytest.raises(InvalidValueError, match=match):
        autotvm.task.create("conv2d_nchw.x86", args, "llvm", None, "winograd")


def test_create_refuses_unknown_keys():
    with pytest.raises(InvalidValueError,
                       match=r"must be one of \['direct', 'winograd'\], found 'spatial_pack'"):
        autotvm.task.create("conv2d_nchw.x86", conv_args(), "llvm", None, "spatial_pack")
    dense = (("TENSOR", (4, 8), "float32"), ("TENSOR", (16, 8), "float32"), None, "float32")
    with pytest.raises(InvalidValueError, match=r"'dense.x86' must be one of \['direct'\]"):
        autotvm.task.create("dense.x86", dense, "llvm", None, "winograd")


def test_tune_and_build_with_history(tmp_path):
    model = tiny_cnn(channels=4, size=6, filters=4)
    mod, params = relay.frontend.from_onnx(model, {"data": (1, 4, 6, 6)})
    (conv,) = autotvm.task.extract_from_program(mod["main"], target="llvm", params=params,
                                                ops=(relay.op.nn.conv2d,))
    task = autotvm.task.create(conv.name, conv.args, conv.target, None, "winograd")
    log = str(tmp_path / "winograd.log")
    autotvm.tuner.RandomTuner(task).tune(
        n_trial=2, measure_option=autotvm.measure_option(
            builder=autotvm.LocalBuilder(), runner=autotvm.LocalRunner(number=1, repeat=1)),
        callbacks=[autotvm.callback.log_to_file(log)])
    records = list(autotvm.record.load_from_file(log))
    assert len(records) == 2 and all(inp.task.name == WINOGRAD for inp, _ in records)
    assert all(res.error_no == 0 for _, res in records)
    # The kernel of the convolution takes its anchor from the Winograd record.
    kernels = {k.task_name: k for k in extract_tasks(mod, Target("llvm"), params)}
    fused = tuned_kernel(kernels["fused_conv2d_add_relu"].mod["main"], "conv", "llvm",
                         ApplyHistoryBest(log))
    assert fused is not None and "bgemm" in fused.script()
    # The weight's transform is one nest a constant weight gets done once, at build time.
    (weight,) = [i for i, p in enumerate(fused.params) if p.name == "param_0"]
    pack, _ = split_packing(fused, weight)
    assert "kernel_pack" in pack.script()
    x = np.random.default_rng(0).standard_normal((1, 4, 6, 6)).astype("float32")
    with autotvm.apply_history_best(log):
        with relay.build_config(opt_level=3):
            graph, lib, built_params = relay.build(mod, "llvm", params=params)
    from mlcbench.contrib import graph_runtime
    module = graph_runtime.create(graph, lib, mlcbench.cpu(0))
    module.set_input("data", mlcbench.nd.array(x))
    module.set_input(**built_params)
    module.run()
    expected = reference_outputs(model, {"data": x})[0]
    np.testing.assert_allclose(module.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-5)
