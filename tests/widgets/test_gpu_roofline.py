"""The ScheduleExplorer's GPU roofline: steps built for the simulated GPU, each placed at
its own modeled intensity and GFLOPS under the target tag's roof."""
import os

import numpy as np
import pytest

import mlcbench as tvm
from mlcbench.ir import MLCBenchError
from mlcbench.codegen.gpu.model import GPUSpec
from mlcbench.target import Target
from mlcbench_widgets import MachinePeaks, ScheduleExplorer
from mlcbench_widgets.gpu_roofline import (GPUPoint, gpu_peaks, gpu_points, intensity_span,
                                           is_gpu_target, plot_gpu_roofline)
from mlcbench_widgets.measure import Measurement

os.environ.setdefault("MLCBENCH_GPU", "sim")

RTX = "nvidia/geforce-rtx-2080-ti"


class _Profile:
    def __init__(self, intensity, gflops):
        self.intensity, self.gflops = intensity, gflops


def _measurement(profile=None):
    return Measurement(1e-3, 5.0, True, 0.0, 0.1, (1e-3,), profile)


@pytest.mark.parametrize("target, gpu", [("cuda", True), (RTX, True), ("llvm", False),
                                         (Target("llvm -mcpu=znver3"), False)])
def test_is_gpu_target(target, gpu):
    assert is_gpu_target(target) is gpu


def test_gpu_peaks_are_the_models_figures():
    spec = GPUSpec.from_target(Target(RTX))
    peaks = gpu_peaks(RTX)
    assert (peaks.gflops, peaks.gbytes_per_s) == (spec.fp32_gflops, spec.bandwidth_gbps)
    assert peaks.gflops > 1000 and peaks.gbytes_per_s > 100


def test_points_only_for_measurements_with_a_profile():
    found = gpu_points([("step 1", _measurement()), ("step 2", _measurement(_Profile(3.0, 40.0))),
                        ("step 3", _measurement(_Profile(12.0, 900.0)))])
    assert found == [GPUPoint("step 2", 3.0, 40.0), GPUPoint("step 3", 12.0, 900.0)]


def test_span_holds_every_point_and_the_ridge():
    peaks = MachinePeaks(13000.0, 600.0)
    points = [GPUPoint("a", 0.25, 100.0), GPUPoint("b", 400.0, 9000.0)]
    low, high = intensity_span(points, peaks)
    assert low < 0.25 and high > 400.0 and low < peaks.ridge < high
    low, high = intensity_span([GPUPoint("c", float("inf"), 1.0)], peaks)
    assert low < peaks.ridge < high and np.isfinite(high)


def test_plot_puts_each_point_at_its_own_intensity():
    peaks = MachinePeaks(13000.0, 600.0, machine=RTX)
    points = [GPUPoint("step 4", 0.5, 250.0), GPUPoint("step 9", 30.0, 11000.0)]
    ax = plot_gpu_roofline(points, peaks).axes[0]
    xs, ys = ax.get_lines()[0].get_data()
    np.testing.assert_allclose(ys, np.minimum(13000.0, xs * 600.0))
    np.testing.assert_allclose(ax.collections[0].get_offsets(), [[0.5, 250.0], [30.0, 11000.0]])
    assert [t.get_text() for t in ax.texts] == ["step 4", "step 9"]
    assert RTX in ax.get_legend().get_texts()[0].get_text()


def _bind_naive(explorer, tile):
    explorer.apply("split", loop="i", factors=[None, tile])
    explorer.apply("split", loop="j", factors=[None, tile])
    explorer.apply("reorder", loops=["i_0", "j_0", "i_1", "j_1"])
    explorer.apply("bind", loop="i_0", thread_axis="blockIdx.y")
    explorer.apply("bind", loop="j_0", thread_axis="blockIdx.x")
    explorer.apply("bind", loop="i_1", thread_axis="threadIdx.y")
    return explorer.apply("bind", loop="j_1", thread_axis="threadIdx.x")


def test_explorer_runs_steps_on_the_simulated_gpu(matmul):
    explorer = ScheduleExplorer(matmul, target=RTX)
    assert explorer.peaks == gpu_peaks(RTX)
    step = _bind_naive(explorer, 16)
    measurement = explorer.run()
    assert measurement.correct and measurement.profile.peaks == explorer.peaks
    rt_mod = tvm.build(explorer.mod, target=RTX)
    dev = tvm.cuda(0)
    args = [tvm.nd.array(np.zeros((128, 128), "float32"), dev) for _ in range(3)]
    direct = rt_mod.profile("main", *args, run=False)
    assert measurement.profile.intensity == pytest.approx(direct.intensity)
    assert measurement.seconds == pytest.approx(direct.seconds)
    (point,) = explorer.gpu_roofline_points()
    assert point == GPUPoint(f"step {step.index}", direct.intensity, direct.gflops)


def test_explorer_roofline_places_two_schedules_apart(matmul):
    explorer = ScheduleExplorer(matmul, target=RTX)
    _bind_naive(explorer, 16)
    explorer.run()
    explorer.fork(0)
    _bind_naive(explorer, 4)         # 4x4 threads: less reuse per block, more traffic
    explorer.run()
    points = explorer.gpu_roofline_points()
    assert len(points) == 2 and points[0].intensity != pytest.approx(points[1].intensity)
    ax = explorer.roofline().axes[0]
    np.testing.assert_allclose(ax.collections[0].get_offsets(),
                               [[p.intensity, p.gflops] for p in points])
    assert "GPU roofline" in ax.get_title()


def test_cpu_explorer_keeps_the_cpu_roofline(matmul, peaks):
    explorer = ScheduleExplorer(matmul, peaks=peaks)
    explorer.run()
    assert explorer.current.measurement.profile is None
    assert explorer.gpu_roofline_points() == []
    assert explorer.roofline().axes[0].get_title() == "roofline of main"


def test_unbound_step_on_a_gpu_target_says_to_bind(matmul):
    explorer = ScheduleExplorer(matmul, target="cuda")
    with pytest.raises(MLCBenchError, match="blockIdx"):
        explorer.run()
    assert explorer.current.measurement is None and explorer.gpu_roofline_points() == []
