"""Measuring the machine's peaks: the key naming the machine, the kernels, and when the
cache is trusted or measured again."""
import json

from mlcbench.driver import machine_peaks as mp
from mlcbench.runtime.machine_peaks import MachinePeaks, why_measure_again
from mlcbench.target import Target, host_cpu_features


def test_chain_counts_fill_both_pipes_and_fit_the_registers():
    assert mp.chain_counts(16) == (8, 12)           # AVX2: 16 ymm registers
    assert mp.chain_counts(32) == (8, 16, 24)       # AVX-512: 32 zmm registers


def test_cache_is_per_machine_and_a_busy_figure_is_replaced(tmp_path, monkeypatch):
    monkeypatch.setattr(mp, "_PEAKS", {})
    path = tmp_path / "peaks.json"
    key = mp.machine_key()
    other = MachinePeaks(9999.0, 1.0, "another CPU").as_json()
    busy = MachinePeaks(1.0, 2.0, key, load=0.0).as_json()     # below any floor
    path.write_text(json.dumps({"another CPU": other, key: busy}))
    measured = MachinePeaks(5000.0, 30.0, "", ((8, 12, 5000.0),), load=0.5)
    calls = []
    peaks = mp.machine_peaks(path, measure=lambda: calls.append(1) or measured)
    assert calls == [1] and (peaks.gflops, peaks.gbytes_per_s) == (5000.0, 30.0)
    assert peaks.machine == key
    stored = json.loads(path.read_text())
    assert stored["another CPU"] == other and stored[key]["gflops"] == 5000.0
    assert mp.machine_peaks(path, measure=lambda: calls.append(1) or measured) is peaks
    assert calls == [1]
    again = mp.machine_peaks(path, kernel_gflops=6000.0,
                             measure=lambda: calls.append(1) or measured)
    assert calls == [1, 1] and again.gflops == 6000.0


def test_key_names_the_cpu_model_cores_and_widths():
    key = mp.machine_key()
    assert mp.cpu_model() in key and f"{Target('llvm').num_cores} cores" in key
    assert key.endswith("256/512-bit" if "avx512f" in host_cpu_features() else "256-bit")


def test_measured_figures_cover_every_vector_width():
    peaks = mp.measure_peaks(runs=1)
    lanes = [w[0] for w in peaks.by_width]
    assert lanes == ([8, 16] if "avx512f" in host_cpu_features() else [8])
    assert all(w[1] in mp.chain_counts(Target("llvm").vector_registers) for w in peaks.by_width)
    assert peaks.gflops == max(w[2] for w in peaks.by_width) > 0
    assert peaks.gbytes_per_s > 0


def test_a_measurement_records_the_higher_load_of_its_start_and_end(monkeypatch):
    """A job that starts while the peak is measured slows it: the figure is kept with the
    load at the end, so a quieter machine later measures it again."""
    loads = iter([0.2, 1.9])
    monkeypatch.setattr(mp.os, "getloadavg", lambda: (next(loads), 0.0, 0.0))
    monkeypatch.setattr(mp, "fma_gflops", lambda target, lanes, chains, runs: 10.0 * chains)
    monkeypatch.setattr(mp, "memory_gbytes_per_s", lambda target, runs: 7.0)
    peaks = mp.measure_peaks(runs=1)
    assert peaks.load == 1.9 and peaks.gbytes_per_s == 7.0
    assert peaks.gflops == 10.0 * max(mp.chain_counts(Target("llvm").vector_registers))
    assert "load 1.9" in why_measure_again(peaks, 2, 8, load_now=0.5)
