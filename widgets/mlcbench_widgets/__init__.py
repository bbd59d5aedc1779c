"""The workbench UI of mlcbench: Jupyter widgets over mlcbench's public API.

* :class:`ScheduleExplorer` -- apply schedule primitives click by click; loop tree,
  TVMScript, diff, trace, history tree (undo / redo / fork / compare / export), "Run"
  with a numpy check and a roofline.
* :class:`PassViewer` -- step through a pass pipeline; IR before and after each pass.
* :class:`TuningDashboard` -- a tuning callback that plots every round (best GFLOPS,
  every candidate, the cost model's predictions), then shows the records and the best
  schedule per task and opens it in the ScheduleExplorer.
* :class:`GraphView` -- a Relax model's dataflow graph before and after fusion, with
  why each edge fused or not, and kernel counts.

The logic lives in plain classes (``LoopTree``, ``History``, ``ExplorerState``,
``KernelRunner``, the roofline functions) that work without a browser; ipywidgets is
imported only when a widget is first shown. See README.md in this folder.
"""
from .graph_view import GraphTiming, GraphView
from .history import History, HistoryError, Step
from .loop_tree import LoopTree
from .measure import Measurement
from .pass_viewer import PassViewer
from .roofline import (KernelCounts, MachinePeaks, count_flops_and_bytes,
                       measure_machine_peaks, plot_roofline)
from .schedule_explorer import ScheduleExplorer, StepComparison
from .tuning_dashboard import TuningDashboard
from .tuning_model import DashboardRecord, TaskProgress

__all__ = ["DashboardRecord", "GraphTiming", "GraphView", "History", "HistoryError", "KernelCounts", "LoopTree",
           "MachinePeaks", "Measurement", "PassViewer", "ScheduleExplorer", "Step", "StepComparison",
           "TaskProgress", "TuningDashboard",
           "count_flops_and_bytes", "measure_machine_peaks", "plot_roofline"]
