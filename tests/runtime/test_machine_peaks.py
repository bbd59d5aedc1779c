"""Machine peaks as figures: when a cached figure is measured again, how figures merge,
the cache file."""
import json

import pytest

from mlcbench.runtime.machine_peaks import (MachinePeaks, merged, read_cache,
                                            why_measure_again, write_cache)

TRUSTED = MachinePeaks(230.0, 40.0, "m", ((8, 12, 230.0),), load=0.3)


@pytest.mark.parametrize("stored, load_now, kernel, reason", [
    (None, 0.0, None, "no figure for this machine yet"),
    (TRUSTED, 0.0, 250.0, "a kernel ran at 250.0 GFLOPS, above the cached peak 230.0"),
    # the roofline's old cache: 27.5 GFLOPS on 2 cores of 8 lanes (floor 2 * 8 * 2 = 32)
    (MachinePeaks(27.5, 20.0, load=0.2), 0.0, None,
     "27.5 GFLOPS is below one 8-lane FMA per cycle on 2 cores at 1 GHz (32 GFLOPS)"),
    (MachinePeaks(100.0, 20.0, load=6.0), 4.5, None, "measured at load 6.0; the load is 4.5"),
])
def test_untrusted_figures_are_measured_again(stored, load_now, kernel, reason):
    assert reason in why_measure_again(stored, cores=2, lanes=8, load_now=load_now,
                                       kernel_gflops=kernel)


@pytest.mark.parametrize("stored, load_now, kernel", [
    (TRUSTED, 7.0, None),                               # quiet then, busy now
    (TRUSTED, 0.0, 229.0),                              # a kernel below the peak
    (MachinePeaks(100.0, 20.0, load=6.0), 5.5, None),   # not quieter than then by 1
    (MachinePeaks(100.0, 20.0), 0.0, None),             # given, not measured here
])
def test_trusted_figures_are_kept(stored, load_now, kernel):
    assert why_measure_again(stored, 2, 8, load_now, kernel) is None


def test_floor_follows_the_widest_vector_and_the_cores():
    assert why_measure_again(MachinePeaks(100.0, 20.0), cores=4, lanes=16, load_now=0.0)
    assert why_measure_again(MachinePeaks(130.0, 20.0), cores=4, lanes=16, load_now=0.0) is None


def test_a_new_measurement_never_lowers_a_figure():
    busy = MachinePeaks(90.0, 55.0, "m", ((8, 8, 90.0), (16, 24, 80.0)), load=5.0)
    both = merged(TRUSTED, busy)
    assert (both.gflops, both.gbytes_per_s, both.load) == (230.0, 55.0, 0.3)
    assert both.by_width == ((8, 12, 230.0), (16, 24, 80.0))
    # a kernel that beat the probe sets the peak: the machine has done it
    assert merged(TRUSTED, busy, kernel_gflops=240.0).gflops == 240.0
    assert merged(None, busy).gflops == 90.0


def test_share_and_description():
    assert TRUSTED.share(207.0) == "90%"
    assert TRUSTED.describe() == ("FMA peak 230 GFLOPS (8 lanes x 12 chains 230), "
                                  "memory 40.0 GB/s")
    assert MachinePeaks.from_json(json.loads(json.dumps(TRUSTED.as_json()))) == TRUSTED


def test_cache_file_keeps_other_machines_and_reads_a_broken_file_as_empty(tmp_path):
    path = tmp_path / "cache" / "peaks.json"
    assert read_cache(path) == {}
    write_cache(path, "another CPU", TRUSTED)
    write_cache(path, "this CPU", MachinePeaks(5000.0, 30.0, "this CPU"))
    stored = read_cache(path)
    assert set(stored) == {"another CPU", "this CPU"}
    assert MachinePeaks.from_json(stored["another CPU"]) == TRUSTED
    path.write_text("[1, 2")
    assert read_cache(path) == {}
