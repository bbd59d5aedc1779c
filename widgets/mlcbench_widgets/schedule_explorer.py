"""ScheduleExplorer: apply schedule primitives one click at a time and watch the loop
nest, the TVMScript, the trace and the speed change.

Every button of the widget calls the Python API below, so a notebook (or a test) can do
exactly what a click does::

    explorer = ScheduleExplorer(MyModule)              # an IRModule or a PrimFunc
    explorer.apply("split", loop="j", factors=[None, 4])
    explorer.apply("reorder", loops=["j_0", "k", "j_1"])
    print(explorer.diff())                             # what the last step changed
    explorer.run()                                     # build, check against numpy, time
    explorer.undo(); explorer.redo()
    explorer.fork(1)                                   # branch from step 1
    explorer.compare(2, 4)
    print(explorer.export())                           # def apply_trace(sch): ...
    explorer                                           # in Jupyter: the widget

Loops and blocks are named as the TVMScript prints them (``"j_0"``, block ``"Y"``); a
loop name that several nests share is qualified by a block below it (``"i@C"``). A
primitive the schedule refuses raises ``mlcbench.tir.ScheduleError`` and changes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

from mlcbench.ir import MLCBenchError
from mlcbench.runtime.timing import speed_ratio

from .gpu_roofline import GPUPoint, gpu_peaks, gpu_points, plot_gpu_roofline
from .history import History, Step
from .measure import KernelRunner, Measurement
from .primitives import PRIMITIVES, format_call
from .render import unified_diff
from .roofline import KernelCounts, MachinePeaks, count_flops_and_bytes, measure_machine_peaks
from .roofline import plot_roofline
from .explorer_state import ExplorerState, replay_steps
from .widget_model import WidgetModel

__all__ = ["ScheduleExplorer", "StepComparison"]


@dataclass(frozen=True)
class StepComparison:
    """Two steps side by side: the script diff from ``a`` to ``b`` and their timings."""
    a: Step
    b: Step
    diff: str
    trace_diff: str

    @property
    def speedup(self) -> float | None:
        """How many times faster ``b`` ran than ``a`` (None unless both were run)."""
        ma, mb = self.a.measurement, self.b.measurement
        if ma is None or mb is None:
            return None
        return ma.seconds / mb.seconds

    def summary(self) -> str:
        lines = []
        for step in (self.a, self.b):
            timing = str(step.measurement) if step.measurement else "not run"
            lines.append(f"step {step.index} ({step.label}): {timing}")
        if self.speedup is not None:
            lines.append(f"step {self.b.index} is "
                         f"{speed_ratio(self.speedup, f'step {self.a.index}')}")
        return "\n".join(lines)

    def __str__(self):
        return self.summary() + "\n" + (self.diff or "(same IR)")


class ScheduleExplorer(WidgetModel):
    """Explore schedules of one PrimFunc of ``mod_or_func`` (see the module docstring).

    Parameters
    ----------
    mod_or_func : IRModule or PrimFunc
        The program, unscheduled; it is also the numeric reference of :meth:`run`.
    func_name : str, optional
        Which PrimFunc to schedule when the module has several.
    seed : int
        Seed of the random arguments used by :meth:`run`.
    target : str or Target
        What "Run" builds for (default the host CPU). For a GPU target (``"cuda"``,
        ``"nvidia/..."``) steps run on the simulated GPU, are timed by its model and
        drawn on a GPU roofline (:mod:`~mlcbench_widgets.gpu_roofline`).
    peaks : MachinePeaks, optional
        Peak compute and bandwidth for the roofline; measured on first use if omitted
        (for a GPU target: the target tag's figures).

    Examples
    --------
    >>> explorer = ScheduleExplorer(MyModule)                       # doctest: +SKIP
    >>> explorer.apply("split", loop="j", factors=[None, 4]).label  # doctest: +SKIP
    'split(loop="j", factors=[None, 4])'
    """

    def __init__(self, mod_or_func, func_name: str | None = None, seed: int = 0,
                 target="llvm", peaks: MachinePeaks | None = None):
        state = ExplorerState.initial(mod_or_func, func_name)
        self.func_name = state.func_name
        self.history = History(state, label="start")
        self._runner = KernelRunner(state.mod, state.func_name, seed, target)
        self._counts: KernelCounts | None = None
        self._peaks = peaks if peaks is not None or not self._runner.gpu else gpu_peaks(target)
        self._peaks_given = self._peaks is not None
        super().__init__()

    @classmethod
    def from_trace(cls, mod_or_func, trace, func_name: str | None = None,
                   **kwargs) -> "ScheduleExplorer":
        """An explorer whose history replays ``trace`` (a tuning record's, say) on the
        unscheduled ``mod_or_func``: one step per instruction that changes the program,
        so undo walks back through the tuned schedule and new steps branch from it.

        >>> record = database.query_tuning_record(mod)              # doctest: +SKIP
        >>> ScheduleExplorer.from_trace(mod, record.trace).current  # doctest: +SKIP
        Step(9, 'tuned: sch.parallel(loop=l12)')
        """
        explorer = cls(mod_or_func, func_name, **kwargs)
        for label, state in replay_steps(explorer.state, trace):
            explorer.history.add(label, state)
        return explorer

    # -- the current step -----------------------------------------------------------------
    @property
    def current(self) -> Step:
        return self.history.current

    @property
    def state(self) -> ExplorerState:
        return self.current.state

    @property
    def schedule(self):
        """A copy of the current ``mlcbench.tir.Schedule`` (changing it changes nothing here)."""
        return self.state.schedule.copy()

    @property
    def mod(self):
        return self.state.mod

    @property
    def script(self) -> str:
        return self.state.script

    @property
    def tree(self):
        """The current :class:`~mlcbench_widgets.loop_tree.LoopTree`."""
        return self.state.tree

    @property
    def trace(self):
        return self.state.trace

    @property
    def primitives(self) -> list[str]:
        return sorted(PRIMITIVES)

    # -- moving through the history ---------------------------------------------------------
    def apply(self, primitive: str, **kwargs) -> Step:
        """Apply ``primitive`` to the current step; the result becomes a new current step.

        Loops and blocks are given by name; ScheduleError (nothing changes) when the
        schedule refuses.
        """
        state = self.state.apply(primitive, **kwargs)
        step = self.history.add(format_call(primitive, kwargs), state)
        self._changed("step")
        return step

    def undo(self) -> Step:
        """Back to the previous step (HistoryError at the first step)."""
        step = self.history.undo()
        self._changed("step")
        return step

    def redo(self) -> Step:
        """Forward again to the step last undone."""
        step = self.history.redo()
        self._changed("step")
        return step

    def fork(self, step) -> Step:
        """Make an earlier step (index or Step) current; new steps branch from it."""
        step = self.history.fork(step)
        self._changed("step")
        return step

    def step(self, step=None) -> Step:
        return self.current if step is None else self.history.step(step)

    # -- looking at steps -------------------------------------------------------------------
    def diff(self, step=None) -> str:
        """Unified diff of the script from the step's parent to the step."""
        step = self.step(step)
        before = step.parent.state.script if step.parent is not None else step.state.script
        return unified_diff(before, step.state.script,
                            f"step {step.parent.index if step.parent else 0}",
                            f"step {step.index}")

    def compare(self, a, b) -> StepComparison:
        """Any two steps (indices or Steps), from ``a`` to ``b``."""
        a, b = self.history.step(a), self.history.step(b)
        diff = unified_diff(a.state.script, b.state.script, f"step {a.index}",
                            f"step {b.index}")
        trace_diff = unified_diff(str(a.state.trace), str(b.state.trace), f"step {a.index}",
                                  f"step {b.index}")
        return StepComparison(a, b, diff, trace_diff)

    def export(self, step=None) -> str:
        """The path to ``step`` (default: current) as ``def apply_trace(sch): ...`` code."""
        return str(self.step(step).state.trace)

    # -- running ------------------------------------------------------------------------------
    def run(self, step=None) -> Measurement:
        """Build the step's module, compare it with the unscheduled one on random inputs,
        time it, and keep the result on the step (and as a roofline point)."""
        step = self.step(step)
        flops = self._kernel_counts_or_none()
        step.measurement = self._runner.measure(step.state.mod,
                                                flops.flops if flops else None)
        self._changed("run")
        return step.measurement

    @property
    def measurements(self) -> list[tuple[Step, Measurement]]:
        """``(step, measurement)`` for every step that has been run, in step order."""
        return [(s, s.measurement) for s in self.history if s.measurement is not None]

    @property
    def counts(self) -> KernelCounts:
        """Static FLOPs and compulsory bytes of the (unscheduled) kernel."""
        if self._counts is None:
            self._counts = count_flops_and_bytes(self.history.root.state.func)
        return self._counts

    def _kernel_counts_or_none(self) -> KernelCounts | None:
        try:
            return self.counts
        except MLCBenchError:               # symbolic extents: times only, no GFLOPS
            return None

    @property
    def peaks(self) -> MachinePeaks:
        """Peak GFLOPS and GB/s of this machine (measured once, then cached); measured
        again when a step ran faster than the cached peak."""
        fastest = max((g for _, g in self.roofline_points()), default=None)
        if self._peaks is None or (not self._peaks_given and fastest is not None
                                   and fastest > self._peaks.gflops):
            self._peaks = measure_machine_peaks(kernel_gflops=fastest)
        return self._peaks

    def roofline_points(self) -> list[tuple[str, float]]:
        """``(label, GFLOPS)`` of every step that has been run."""
        return [(f"step {s.index}", m.gflops) for s, m in self.measurements
                if m.gflops is not None]

    def gpu_roofline_points(self) -> list[GPUPoint]:
        """GPU targets: each run step at its own modeled intensity and GFLOPS."""
        return gpu_points((f"step {s.index}", m) for s, m in self.measurements)

    def roofline(self, ax=None):
        """A matplotlib Figure: the machine's roof and one point per run step (for a GPU
        target, the GPU's roof and each step's modeled counters)."""
        if self._runner.gpu:
            return plot_gpu_roofline(self.gpu_roofline_points(), self.peaks, ax=ax,
                                     title=f"GPU roofline of {self.func_name} (modeled)")
        return plot_roofline(self.counts, self.roofline_points(), self.peaks, ax=ax,
                             title=f"roofline of {self.func_name}")

    # -- the widget ---------------------------------------------------------------------------
    def _make_ui(self):
        from .schedule_explorer_ui import ScheduleExplorerUI
        return ScheduleExplorerUI(self)

    def __repr__(self):
        return (f"ScheduleExplorer({self.func_name!r}, step {self.current.index} of "
                f"{len(self.history)}: {self.current.label})")
