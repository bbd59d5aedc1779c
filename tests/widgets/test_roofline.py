"""Roofline: static FLOP and byte counts, machine peaks with their cache, the plot."""
import json
import pathlib

import numpy as np
import pytest

from mlcbench.ir import MLCBenchError
from mlcbench.script import tir as T
from mlcbench_widgets import (MachinePeaks, ScheduleExplorer, count_flops_and_bytes,
                              measure_machine_peaks, plot_roofline)
from mlcbench.driver import machine_peaks


@T.prim_func
def exp_add(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 32), "float16")):
    # per element: one exp, one add, one multiply -> 3 FLOPs; the cast costs nothing
    for i, j in T.grid(64, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.Cast("float16", T.exp(A[vi, vj]) + A[vi, vj] * T.float32(2))


@T.prim_func
def symbolic(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    for i in range(n):
        with T.block("A"):
            vi = T.axis.remap("S", [i])
            A[vi] = A[vi] + T.float32(1)


def test_counts_of_the_course_kernels(matmul, mm_relu):
    counts = count_flops_and_bytes(matmul["main"])
    assert (counts.flops, counts.bytes) == (2 * 128**3, 3 * 128 * 128 * 4)
    assert counts.intensity == pytest.approx(2 * 128**3 / (3 * 128 * 128 * 4))
    # the relu adds one max per element; the intermediate Y is not compulsory traffic
    relu = count_flops_and_bytes(mm_relu["mm_relu"])
    assert (relu.flops, relu.bytes) == (2 * 128**3 + 128**2, 3 * 128 * 128 * 4)


def test_counts_skip_integer_and_cast_work_and_weigh_dtypes():
    counts = count_flops_and_bytes(exp_add)
    assert counts.flops == 3 * 64 * 32
    assert counts.bytes == 64 * 32 * (4 + 2)


def test_counts_need_constant_extents():
    with pytest.raises(MLCBenchError, match="symbolic"):
        count_flops_and_bytes(symbolic)


def test_peaks_roof_and_ridge():
    peaks = MachinePeaks(gflops=100.0, gbytes_per_s=20.0)
    assert peaks.ridge == 5.0
    np.testing.assert_allclose(peaks.roof([1.0, 5.0, 50.0]), [20.0, 100.0, 100.0])


def test_plot_has_the_roof_and_one_point_per_step(matmul, peaks):
    counts = count_flops_and_bytes(matmul["main"])
    fig = plot_roofline(counts, [("step 0", 2.0), ("step 3", 11.0)], peaks)
    ax = fig.axes[0]
    (roof,) = ax.get_lines()[:1]
    xs, ys = roof.get_data()
    np.testing.assert_allclose(ys, np.minimum(100.0, xs * 20.0))
    assert xs.min() < peaks.ridge < xs.max() and xs.min() < counts.intensity < xs.max()
    (points,) = ax.collections
    np.testing.assert_allclose(points.get_offsets(), [[counts.intensity, 2.0],
                                                      [counts.intensity, 11.0]])
    assert [t.get_text() for t in ax.texts] == ["step 0", "step 3"]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"


def test_explorer_plots_the_steps_it_ran(matmul, peaks):
    explorer = ScheduleExplorer(matmul, peaks=peaks)
    explorer.run()
    explorer.apply("split", loop="j", factors=[None, 8])
    explorer.apply("reorder", loops=["j_0", "k", "j_1"])
    explorer.apply("vectorize", loop="j_1")
    explorer.run()
    points = explorer.roofline_points()
    assert [label for label, _ in points] == ["step 0", "step 3"]
    assert points[1][1] == pytest.approx(explorer.current.measurement.gflops)
    offsets = explorer.roofline().axes[0].collections[0].get_offsets()
    np.testing.assert_allclose(offsets[:, 1], [g for _, g in points])


def _fake_measure(monkeypatch, calls, gflops, gbytes):
    monkeypatch.setattr(machine_peaks, "measure_peaks", lambda: calls.append("measure") or
                        MachinePeaks(gflops, gbytes, by_width=((8, 12, gflops),), load=0.0))


def test_peaks_are_measured_once_and_cached(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(machine_peaks, "_PEAKS", {})
    _fake_measure(monkeypatch, calls, 5000.0, 45.0)    # above any machine's floor
    path = tmp_path / "peaks.json"
    first = measure_machine_peaks(path)
    assert (first.gflops, first.gbytes_per_s) == (5000.0, 45.0) and calls == ["measure"]
    assert measure_machine_peaks(path) is first and calls == ["measure"]   # memory
    monkeypatch.setattr(machine_peaks, "_PEAKS", {})
    assert measure_machine_peaks(path) == first and calls == ["measure"]   # the file
    assert json.loads(path.read_text())[machine_peaks.machine_key()]["gflops"] == 5000.0
    # a refresh measures again; a busier machine (lower figures) does not lower the peaks
    _fake_measure(monkeypatch, calls, 2000.0, 60.0)
    again = measure_machine_peaks(path, refresh=True)
    assert calls == ["measure"] * 2
    assert (again.gflops, again.gbytes_per_s) == (5000.0, 60.0)


def test_explorer_measures_the_peak_again_when_a_step_beats_it(matmul, tmp_path, monkeypatch):
    calls = []
    monkeypatch.setenv("MLCBENCH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(machine_peaks, "_PEAKS", {})
    _fake_measure(monkeypatch, calls, 1e-3, 45.0)        # a peak no step can stay under
    explorer = ScheduleExplorer(matmul)
    assert explorer.peaks.gflops == 1e-3 and calls == ["measure"]
    explorer.run()
    step = explorer.roofline_points()[0][1]
    _fake_measure(monkeypatch, calls, 2e-3, 45.0)
    # measured again; the step's rate counts as the peak when the probe stays below it
    assert explorer.peaks.gflops == step and calls == ["measure"] * 2


def test_measured_peaks_are_plausible(tmp_path, monkeypatch):
    monkeypatch.setattr(machine_peaks, "_PEAKS", {})
    peaks = measure_machine_peaks(tmp_path / "peaks.json")
    # any CPU this runs on does between 0.5 and 100000 GFLOPS, 0.5 and 10000 GB/s
    assert 0.5 < peaks.gflops < 1e5 and 0.5 < peaks.gbytes_per_s < 1e4
    assert peaks.machine == machine_peaks.machine_key()


def test_the_test_run_keeps_the_peak_cache_out_of_home():
    """The suite writes no state under the user's home (the root conftest moves it)."""
    assert not machine_peaks.default_cache_path().resolve().is_relative_to(pathlib.Path.home().resolve())
