"""Latency of the ScheduleExplorer widget, measured the way a learner feels it.

Run: ``python benchmarks/widget_latency.py [--repeat 5]``.

Goals (128^3 matmul, 3 loops): a primitive click (split, reorder, vectorize through the
widget's buttons) updates the IR, the diff, the trace and the loop tree in under
100 ms; "Run" (build, numpy check, timing) in under 1 s. Reported separately: the
first Run of a session (it imports matplotlib and draws the roofline) and the one-off
measurement of the machine's peaks (cached afterwards).
"""
from __future__ import annotations

import argparse
import statistics
import time

import matplotlib

from mlcbench.script import ir as I, tir as T
from mlcbench_widgets import ScheduleExplorer, measure_machine_peaks
from mlcbench_widgets import roofline

matplotlib.use("Agg")


@I.ir_module
class Matmul:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


CLICKS = [(("j",), "split"), (("j_0", "k", "j_1"), "reorder"), (("j_1",), "vectorize"),
          (("i",), "parallel")]


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def click_latencies(ui) -> dict[str, float]:
    """Seconds per button click, selection included, from a fresh explorer."""
    out = {}
    for refs, name in CLICKS:
        ui.select(*refs)
        out[name] = seconds(lambda: ui.buttons[name].click())
        assert ui.message.value == "", ui.message.value
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    peaks_seconds = seconds(lambda: measure_machine_peaks(refresh=True))
    roofline._PEAKS.clear()                         # the next call reads the cache file
    cached_seconds = seconds(measure_machine_peaks)

    widget_seconds = seconds(lambda: ScheduleExplorer(Matmul).widget)
    clicks: dict[str, list[float]] = {name: [] for _, name in CLICKS}
    runs, first_run = [], None
    for _ in range(args.repeat):
        explorer = ScheduleExplorer(Matmul)
        ui = explorer.widget
        for name, value in click_latencies(ui).items():
            clicks[name].append(value)
        ui.tabs.selected_index = ui.TABS.index("roofline")   # so Run redraws the plot
        run = seconds(ui.run_button.click)
        assert explorer.current.measurement.correct, ui.status.value
        first_run = run if first_run is None else first_run
        runs.append(run)
        runs.append(seconds(ui.run_button.click))     # the reference is built by now
    api_runs = []
    for _ in range(args.repeat):
        plain = ScheduleExplorer(Matmul)              # no widget: nothing to draw
        plain.run()
        api_runs.append(seconds(plain.run))

    print(f"machine peaks: {measure_machine_peaks().gflops:.0f} GFLOPS, "
          f"{measure_machine_peaks().gbytes_per_s:.0f} GB/s; measuring took "
          f"{peaks_seconds * 1e3:.0f} ms, reading the cache {cached_seconds * 1e3:.1f} ms")
    print(f"building the widget: {widget_seconds * 1e3:.0f} ms (first, imports ipywidgets)")
    print(f"{'click':<12}{'median ms':>10}{'max ms':>9}   goal < 100 ms")
    for name, values in clicks.items():
        print(f"{name:<12}{statistics.median(values) * 1e3:>10.1f}{max(values) * 1e3:>9.1f}")
    later = runs[1:]
    print(f"Run (build + check + time + roofline): first {first_run * 1e3:.0f} ms, then "
          f"median {statistics.median(later) * 1e3:.0f} ms, max {max(later) * 1e3:.0f} ms"
          "   goal < 1000 ms")
    print(f"Run with the roofline tab closed = explorer.run() (build + check + time): median "
          f"{statistics.median(api_runs) * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
