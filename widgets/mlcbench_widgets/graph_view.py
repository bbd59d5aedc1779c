"""GraphView: a Relax model's dataflow graph before and after operator fusion.

::

    view = GraphView(mod)                 # runs LegalizeOps, AnnotateTIROpPattern,
                                          # FuseOps, FuseTIR on mod
    view.kernel_counts                    # {'before': 7, 'after': 4}
    print(view.text())                    # both graphs as indented text
    view.dot("before")                    # DOT source, fused groups as clusters
    view.edges()                          # rows: producer, consumer, fused, reason
    view.measure()                        # build both, time both with the VM
    view                                  # in Jupyter: before | after, and the edge table

Drawings use graphviz's ``dot`` when the ``graphviz`` Python package and the ``dot``
program are both there; otherwise the text drawing, with how to install graphviz.
"""
from __future__ import annotations

import html
import shutil
from dataclasses import dataclass

import numpy as np

import mlcbench
from mlcbench import relax
from mlcbench.ir import IRModule, MLCBenchError

from .graph_model import build_graph, edge_table_html, main_function_name, to_dot, to_text

__all__ = ["GraphView", "GraphTiming", "graphviz_available"]

INSTALL_HINT = ("graphviz is not available, so the graphs are drawn as text. To draw "
                "them: apt-get install graphviz (the dot program) and pip install graphviz.")


def graphviz_available() -> bool:
    """Whether the ``graphviz`` package imports and the ``dot`` program is on PATH."""
    try:
        import graphviz  # noqa: F401 -- only checking that it imports
    except ImportError:
        return False
    return shutil.which("dot") is not None


@dataclass(frozen=True)
class GraphTiming:
    """Seconds per call of the unfused and the fused module (same random inputs), and
    the largest difference between their outputs."""
    before_seconds: float
    after_seconds: float
    max_abs_error: float

    @property
    def speedup(self) -> float:
        return self.before_seconds / self.after_seconds

    def __str__(self) -> str:
        return (f"before {self.before_seconds * 1e3:.3f} ms, after "
                f"{self.after_seconds * 1e3:.3f} ms, speedup {self.speedup:.2f}x, "
                f"outputs differ by at most {self.max_abs_error:.2g}")


def _flat_numpy(value) -> list:
    """The arrays of a VM result (an NDArray or a nested tuple of them)."""
    if isinstance(value, (list, tuple)):
        return [a for item in value for a in _flat_numpy(item)]
    return [np.asarray(value.numpy(), dtype="float64")]


class GraphView:
    """The dataflow graph of ``mod_before``'s main (or ``forward``) function before and
    after fusion.

    Parameters
    ----------
    mod_before : IRModule
        A Relax module, with high-level ops or already legalized.
    mod_after : IRModule, optional
        The fused module. Default: ``FuseTIR(FuseOps(...))`` of the annotated module.

    Examples
    --------
    >>> view = GraphView(mod)                    # doctest: +SKIP
    >>> view.kernel_counts                       # doctest: +SKIP
    {'before': 7, 'after': 4}
    """

    def __init__(self, mod_before, mod_after=None):
        if not isinstance(mod_before, IRModule):
            raise MLCBenchError(f"GraphView: expected an IRModule as mod_before, found "
                                f"{type(mod_before).__name__}")
        T = relax.transform
        self.input = mod_before
        # The report must see the module FuseOps sees: legalized and annotated.
        self.before = T.AnnotateTIROpPattern()(T.LegalizeOps()(mod_before))
        self.function = main_function_name(self.before)
        self.report = T.fusion_report(self.before)
        self.after = mod_after if mod_after is not None else \
            T.FuseTIR()(T.FuseOps()(self.before))
        self.graph_before = build_graph(self.before, self.function, self.report)
        self.graph_after = build_graph(self.after, self.function)
        self._widget = None

    @property
    def kernel_counts(self) -> dict:
        """Kernels (``R.call_tir`` bindings) per call, before and after fusion."""
        return {"before": self.graph_before.kernel_count,
                "after": self.graph_after.kernel_count}

    def _graph(self, which: str):
        if which not in ("before", "after"):
            raise MLCBenchError(f"GraphView: expected 'before' or 'after', found {which!r}")
        return self.graph_before if which == "before" else self.graph_after

    def dot(self, which: str = "before") -> str:
        """DOT source of one graph; fused groups are ``cluster`` subgraphs."""
        return to_dot(self._graph(which), f"{self.function} {which} fusion")

    def text(self) -> str:
        """Both graphs as indented text (what the widget shows without graphviz)."""
        return "\n\n".join(to_text(self._graph(w), f"{self.function} {w} fusion")
                           for w in ("before", "after"))

    def edges(self) -> list:
        """One row per edge between bindings: producer, consumer, fused, rule, reason."""
        return [{"producer": e.src, "consumer": e.dst, "fused": e.fused, "rule": e.rule,
                 "reason": e.reason} for e in self.graph_before.edges if e.fused is not None]

    def render(self, which: str = "before") -> str:
        """One graph as HTML: an SVG by ``dot``, or the text drawing and how to get dot."""
        if graphviz_available():
            import graphviz
            svg = graphviz.Source(self.dot(which)).pipe(format="svg").decode()
            # shrink to the page's half rather than overflow it (dot's SVG has a viewBox)
            return svg.replace("<svg ", '<svg style="max-width: 100%; height: auto" ', 1)
        drawing = to_text(self._graph(which), f"{self.function} {which} fusion")
        return (f"<p><i>{html.escape(INSTALL_HINT)}</i></p>"
                f"<pre>{html.escape(drawing)}</pre>")

    def html(self) -> str:
        """Before | after side by side, then the edge table with each reason."""
        cells = "".join(f"<td style='vertical-align:top; width:50%'>{self.render(w)}</td>"
                        for w in ("before", "after"))
        counts = self.kernel_counts
        return (f"<p>kernels: {counts['before']} before fusion, {counts['after']} after</p>"
                f"<table><tr>{cells}</tr></table>{edge_table_html(self.graph_before)}")

    def measure(self, target: str = "llvm", number: int = 10, seed: int = 0) -> GraphTiming:
        """Build both modules as they are (``relax.build`` with only the VM lowering, so
        the unfused module stays unfused) and time them with the VM on the same seeded
        random inputs (uniform [0, 1))."""
        rng = np.random.default_rng(seed)
        params = self.before[self.function].params
        args = [mlcbench.nd.array(rng.random([int(d) for d in p.struct_info.shape.values])
                                  .astype(p.struct_info.dtype)) for p in params]
        seconds, outputs = [], []
        for mod in (self.before, self.after):
            # only the lowering to the VM: the default pipeline would fuse "before" too
            vm = relax.VirtualMachine(self._build(mod, target), mlcbench.cpu())
            outputs.append(_flat_numpy(vm[self.function](*args)))
            seconds.append(vm.module.time_evaluator(self.function, mlcbench.cpu(),
                                                    number=number)(*args).mean)
        error = max((float(np.max(np.abs(a - b))) for a, b in zip(*outputs) if a.size),
                    default=0.0)
        return GraphTiming(seconds[0], seconds[1], error)

    @staticmethod
    def _build(mod, target):
        """Each module compiled with the kernels it has: no more fusion."""
        return relax.build(mod, target=target, pipeline="vm_lowering")

    # -- the widget ---------------------------------------------------------------------------
    @property
    def widget(self):
        if self._widget is None:
            import ipywidgets as W
            self._widget = W.HTML(self.html())
        return self._widget

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget)

    def __repr__(self):
        counts = self.kernel_counts
        return (f"GraphView({self.function}: {counts['before']} kernels before fusion, "
                f"{counts['after']} after, {len(self.graph_before.groups)} fused groups)")
