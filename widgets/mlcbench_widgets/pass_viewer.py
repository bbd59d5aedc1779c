"""PassViewer: step through a pass pipeline and see what each pass did to the IR.

The pipeline runs once, inside a ``PassContext`` whose ``RecordingInstrument`` keeps
the module before and after every pass (the same hook ``PrintAfterAll`` uses). The
viewer then only looks at those records::

    viewer = PassViewer(MyModule)                  # default: the TIR lowering passes
    viewer.passes                                  # ['tir.VerifyCPUCompatible', ...]
    viewer.select("tir.FlattenBuffer")
    viewer.changed, viewer.seconds                 # True, 0.001
    print(viewer.diff)                             # what FlattenBuffer changed
    viewer.after                                   # the IRModule after it
    viewer                                         # in Jupyter: slider, panes, diff

Any pipeline works: a ``Sequential``, a single pass, or a list of passes (Relax
pipelines included); nested Sequentials show the passes inside them.
"""
from __future__ import annotations

import html

from mlcbench.ir import IRModule, MLCBenchError
from mlcbench.ir.instrument import RecordingInstrument
from mlcbench.ir.transform import Pass, PassContext, Sequential
from mlcbench.tir import PrimFunc

from .render import highlight_diff, side_by_side, unified_diff

__all__ = ["PassViewer"]


def default_pipeline() -> Sequential:
    """The TIR lowering passes that ``mlcbench.build`` runs (``mlcbench.lower``)."""
    from mlcbench.tir.transform import default_lowering_pipeline
    return default_lowering_pipeline()


def as_pipeline(pipeline) -> Pass:
    if pipeline is None:
        return default_pipeline()
    if isinstance(pipeline, Pass):
        return pipeline
    if isinstance(pipeline, (list, tuple)) and all(isinstance(p, Pass) for p in pipeline):
        return Sequential(list(pipeline), name="pipeline")
    raise MLCBenchError(f"PassViewer: expected a Pass, a Sequential or a list of passes as "
                        f"pipeline, found {type(pipeline).__name__}")


class PassViewer:
    """Run ``pipeline`` on ``mod`` under a recording instrument and browse the records.

    Parameters
    ----------
    mod : IRModule or PrimFunc
    pipeline : Pass, Sequential or list of Pass, optional
        Default: the TIR lowering pipeline used by ``mlcbench.build``.

    Examples
    --------
    >>> viewer = PassViewer(MyModule)            # doctest: +SKIP
    >>> viewer.select(1).name                    # doctest: +SKIP
    'tir.LowerInitBlock'
    """

    def __init__(self, mod, pipeline=None):
        if isinstance(mod, PrimFunc):
            mod = IRModule.from_expr(mod, mod.attrs.get("global_symbol") or "main")
        if not isinstance(mod, IRModule):
            raise MLCBenchError(f"PassViewer: expected an IRModule or a PrimFunc, found "
                                f"{type(mod).__name__}")
        self.input = mod
        recorder = RecordingInstrument()
        outer = PassContext.current()
        with PassContext(opt_level=outer.opt_level, required_pass=outer.required_pass,
                         disabled_pass=outer.disabled_pass, instruments=[recorder],
                         config=outer.config):
            self.output = as_pipeline(pipeline)(mod)
        self.records = list(recorder.records)
        if not self.records:
            raise MLCBenchError("PassViewer: the pipeline ran no pass (all disabled at "
                                f"opt_level={outer.opt_level}?)")
        self._changed: list[bool | None] = [None] * len(self.records)
        self._scripts: dict[int, str] = {}
        self.index = 0
        self._listeners: list = []
        self._widget = None

    # -- which pass -------------------------------------------------------------------------
    @property
    def passes(self) -> list[str]:
        """Pass names in the order they ran (a pass that ran twice appears twice)."""
        return [record.name for record in self.records]

    def select(self, name_or_index) -> object:
        """Select a pass by position, or by name (``"tir.Simplify"``, or ``"Simplify"``;
        ``"Simplify#2"`` for its second run). Returns its record."""
        self.index = self._find(name_or_index)
        for callback in self._listeners:
            callback()
        return self.record

    def _find(self, key) -> int:
        if isinstance(key, int) and not isinstance(key, bool):
            if not -len(self.records) <= key < len(self.records):
                raise MLCBenchError(f"PassViewer: no pass at index {key}; there are "
                                    f"{len(self.records)} passes")
            return key % len(self.records)
        name, _, nth = str(key).partition("#")
        hits = [k for k, p in enumerate(self.passes) if p == name or p.split(".")[-1] == name]
        count = int(nth) if nth.isdigit() else 1
        if len(hits) < count or count < 1:
            raise MLCBenchError(f"PassViewer: no pass {key!r}; the passes are {self.passes}")
        return hits[count - 1]

    # -- the selected pass --------------------------------------------------------------------
    @property
    def record(self):
        """The ``PassRecord`` (name, before, after, seconds) of the selected pass."""
        return self.records[self.index]

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def before(self) -> IRModule:
        return self.record.before

    @property
    def after(self) -> IRModule:
        return self.record.after

    @property
    def seconds(self) -> float:
        return self.record.seconds

    @property
    def changed(self) -> bool:
        """Whether the selected pass changed the IR (structurally)."""
        return self.changed_at(self.index)

    def changed_at(self, index: int) -> bool:
        if self._changed[index] is None:
            self._changed[index] = self.records[index].changed
        return self._changed[index]

    @property
    def unchanged(self) -> list[str]:
        """Names of the passes that changed nothing (dimmed in the widget)."""
        return [r.name for k, r in enumerate(self.records) if not self.changed_at(k)]

    def script(self, mod) -> str:
        """TVMScript of a recorded module (printed once; records share modules)."""
        key = id(mod)
        if key not in self._scripts:
            self._scripts[key] = mod.script()
        return self._scripts[key]

    @property
    def before_script(self) -> str:
        return self.script(self.before)

    @property
    def after_script(self) -> str:
        return self.script(self.after)

    @property
    def diff(self) -> str:
        """Unified diff of the selected pass's IR, before to after."""
        return unified_diff(self.before_script, self.after_script, f"before {self.name}",
                            f"after {self.name}")

    def summary(self) -> str:
        """One line per pass: index, name, time, and whether it changed the IR."""
        return "\n".join(
            f"{'>' if k == self.index else ' '} {k:>2} {r.name:<32} {r.seconds * 1e3:8.3f} ms"
            f"{'' if self.changed_at(k) else '  (no change)'}"
            for k, r in enumerate(self.records))

    # -- the widget ---------------------------------------------------------------------------
    def on_select(self, callback) -> None:
        self._listeners.append(callback)

    @property
    def widget(self):
        if self._widget is None:
            self._widget = PassViewerUI(self)
        return self._widget

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget.container)

    def __repr__(self):
        return f"PassViewer({len(self.records)} passes, selected {self.index}: {self.name})"


class PassViewerUI:
    """Slider and list of passes; IR before and after side by side; the diff."""

    def __init__(self, viewer: PassViewer):
        import ipywidgets as W
        self.viewer = viewer
        count = len(viewer.records)
        self.slider = W.IntSlider(min=0, max=count - 1, value=viewer.index,
                                  description="pass", continuous_update=False)
        self.dropdown = W.Dropdown(options=[(f"{k}: {n}", k) for k, n in
                                            enumerate(viewer.passes)], value=viewer.index)
        for control in (self.slider, self.dropdown):
            control.observe(lambda change: self._on_control(change["new"]), names="value")
        self.pass_list, self.info = W.HTML(), W.HTML()
        self.panes, self.diff_view = W.HTML(), W.HTML()
        self.container = W.VBox([W.HBox([self.slider, self.dropdown]), self.info,
                                 W.HBox([self.pass_list, W.VBox([self.panes, self.diff_view],
                                                                layout=W.Layout(width="80%"))])])
        viewer.on_select(self.refresh)
        self.refresh()

    def _on_control(self, index: int) -> None:
        if index != self.viewer.index:
            self.viewer.select(index)

    def refresh(self) -> None:
        viewer = self.viewer
        self.slider.value = self.dropdown.value = viewer.index
        state = "changed the IR" if viewer.changed else "changed nothing"
        self.info.value = (f"<b>{html.escape(viewer.name)}</b>: {viewer.seconds * 1e3:.3f} ms, "
                           f"{state}")
        self.pass_list.value = _pass_list_html(viewer)
        self.panes.value = side_by_side(viewer.before_script, viewer.after_script,
                                        f"before {viewer.name}", f"after {viewer.name}")
        self.diff_view.value = highlight_diff(viewer.diff, height="300px")


def _pass_list_html(viewer: PassViewer) -> str:
    items = []
    for k, record in enumerate(viewer.records):
        style = "" if viewer.changed_at(k) else "opacity: 0.45"
        if k == viewer.index:
            style += "; font-weight: bold"
        items.append(f'<div style="{style}">{k}. {html.escape(record.name)} '
                     f"<small>{record.seconds * 1e3:.2f} ms</small></div>")
    return f'<div style="font-family: monospace; font-size: 12px">{"".join(items)}</div>'
