"""The ipywidgets face of :class:`ScheduleExplorer`: a thin layer over its Python API.

Left: the loop tree (select loops and blocks; the order of clicks is kept, so
``reorder`` takes the loops in the order clicked), argument fields and one button per
primitive. Right: tabs with the TVMScript, the diff of the last step, the trace, the
roofline, and the history (undo, redo, go to / fork from a step, compare, export).

Every handler calls the explorer's API and the explorer tells the UI to refresh, so a
step applied from Python shows up here too. Tests drive it with ``button.click()``.
"""
from __future__ import annotations

import html

import ipywidgets as W

from mlcbench.ir import ScheduleError

from .primitives import BUTTONS, PRIMITIVES, arguments_from_selection
from .render import guarded, highlight_diff, highlight_python

__all__ = ["ScheduleExplorerUI"]

_NBSP = "\u00a0"


class ScheduleExplorerUI:
    """Widgets of one explorer; ``container`` is what Jupyter displays."""

    TABS = ("TVMScript", "diff", "trace", "roofline", "history", "buffers")

    def __init__(self, explorer):
        self.explorer = explorer
        self._order: list[int] = []        # selected tree rows, in click order
        self._quiet = False                # set while the UI itself changes widgets
        self._build_controls()
        self._build_views()
        self.container = W.HBox([self.left, self.tabs],
                                layout=W.Layout(width="100%", align_items="flex-start"))
        explorer.on_change(self.refresh)
        self.refresh("step")

    # -- layout -----------------------------------------------------------------------
    def _build_controls(self) -> None:
        self.tree = W.SelectMultiple(rows=14, layout=W.Layout(width="100%"))
        self.tree.observe(self._on_tree_select, names="value")
        self.selection = W.Text(description="selected", placeholder="click loops / blocks",
                                layout=W.Layout(width="100%"))
        self.factors = W.Text(value="None, 4", description="factors")
        self.buffer = W.IntText(value=0, description="buffer #")
        self.scope = W.Combobox(value="global", options=["global", "local", "shared"],
                                description="scope", ensure_option=False)
        self.buffer_hint = W.HTML()
        self.buttons = {name: W.Button(description=name, tooltip=PRIMITIVES[name].summary,
                                       layout=W.Layout(width="auto"))
                        for name in BUTTONS}
        for name, button in self.buttons.items():
            button.on_click(lambda _, name=name: self.click_primitive(name))
        self.run_button = W.Button(description="Run", button_style="success", icon="play")
        self.run_button.on_click(lambda _: self.click_run())
        self.undo_button = W.Button(description="Undo", icon="undo")
        self.undo_button.on_click(lambda _: self._guard(self.explorer.undo))
        self.redo_button = W.Button(description="Redo", icon="repeat")
        self.redo_button.on_click(lambda _: self._guard(self.explorer.redo))
        self.message = W.HTML()
        self.status = W.HTML()
        grid = W.GridBox(list(self.buttons.values()),
                         layout=W.Layout(grid_template_columns="repeat(3, auto)"))
        self.left = W.VBox([W.HTML("<b>loop nest</b>"), self.tree, self.selection,
                            self.factors, self.buffer, self.buffer_hint, self.scope, grid,
                            W.HBox([self.undo_button, self.redo_button, self.run_button]),
                            self.status, self.message],
                           layout=W.Layout(width="40%"))

    def _build_views(self) -> None:
        self.script_view, self.diff_view, self.trace_view = W.HTML(), W.HTML(), W.HTML()
        self.buffers_view = W.HTML()
        self.roofline_view = W.Image(format="png")
        self.roofline_note = W.HTML("<i>Run a step to put it on the roofline.</i>")
        self.history_select = W.Select(rows=12, layout=W.Layout(width="100%"))
        self.goto_button = W.Button(description="go to / fork", icon="code-fork")
        self.goto_button.on_click(lambda _: self._guard(
            lambda: self.explorer.fork(self.history_select.value)))
        self.compare_a = W.Dropdown(description="compare")
        self.compare_b = W.Dropdown(description="with")
        self.compare_button = W.Button(description="compare")
        self.compare_button.on_click(lambda _: self.click_compare())
        self.compare_view = W.HTML()
        self.export_button = W.Button(description="export path")
        self.export_button.on_click(lambda _: self.click_export())
        self.export_view = W.Textarea(rows=10, layout=W.Layout(width="100%"))
        history = W.VBox([self.history_select, self.goto_button,
                          W.HBox([self.compare_a, self.compare_b, self.compare_button]),
                          self.compare_view, self.export_button, self.export_view])
        self.tabs = W.Tab(children=[self.script_view, self.diff_view, self.trace_view,
                                    W.VBox([self.roofline_note, self.roofline_view]),
                                    history, self.buffers_view],
                          layout=W.Layout(width="60%"))
        for k, title in enumerate(self.TABS):
            self.tabs.set_title(k, title)
        self._roofline_stale = False
        self.tabs.observe(lambda _: self._draw_roofline_if_shown(), names="selected_index")

    # -- actions ------------------------------------------------------------------------
    def _guard(self, action) -> bool:
        return guarded(self.message, action)

    def selected_rows(self) -> list:
        """The rows named in the selection field (loops by reference, blocks by name)."""
        tree = self.explorer.tree
        refs = [r.strip() for r in self.selection.value.split(",") if r.strip()]
        rows = []
        for ref in refs:
            name = ref.partition("@")[0].partition("#")[0]
            if tree.has_block(ref):
                rows.append(tree.block(ref))
            elif any(loop.name == name for loop in tree.loops):
                rows.append(tree.loop(ref))
            else:
                raise ScheduleError(f"selection: {ref!r} is neither a block "
                                    f"{sorted(b.name for b in tree.blocks)} nor a loop "
                                    f"{[loop.ref for loop in tree.loops]}")
        return rows

    def click_primitive(self, name: str) -> bool:
        """What a primitive button does; False (and an inline error) when refused."""
        def act():
            fields = {"factors": self.factors.value, "buffer": self.buffer.value,
                      "scope": self.scope.value}
            kwargs = arguments_from_selection(name, self.selected_rows(), fields)
            self.explorer.apply(name, **kwargs)
        return self._guard(act)

    def click_run(self) -> bool:
        return self._guard(self.explorer.run)

    def click_compare(self) -> bool:
        def act():
            comparison = self.explorer.compare(self.compare_a.value, self.compare_b.value)
            self.compare_view.value = (f"<pre>{html.escape(comparison.summary())}</pre>"
                                       + highlight_diff(comparison.diff, height="300px"))
        return self._guard(act)

    def click_export(self) -> None:
        self.export_view.value = self.explorer.export()

    def select(self, *refs: str) -> None:
        """Select tree rows by reference, in this order (as clicking them would)."""
        self.selection.value = ", ".join(refs)

    # -- reacting -----------------------------------------------------------------------
    def _on_tree_select(self, change) -> None:
        if self._quiet:
            return
        chosen = list(change["new"])
        self._order = [k for k in self._order if k in chosen]
        self._order += [k for k in chosen if k not in self._order]
        rows = self.explorer.tree.rows
        self.selection.value = ", ".join(rows[k].ref for k in self._order)
        blocks = [rows[k] for k in self._order if not hasattr(rows[k], "var")]
        self.buffer_hint.value = _buffer_hint(blocks[0]) if blocks else ""

    def refresh(self, event: str = "step") -> None:
        """Redraw what depends on the current step (and the roofline after a run)."""
        explorer = self.explorer
        if event == "step":
            self._refresh_tree()
            self.script_view.value = highlight_python(explorer.script)
            self.diff_view.value = highlight_diff(explorer.diff())
            self.trace_view.value = highlight_python(str(explorer.trace), height="300px")
            self.buffers_view.value = _buffers_html(explorer.tree)
        if event == "run":
            self._roofline_stale = True
            self._draw_roofline_if_shown()
        self._refresh_history()
        self._refresh_status()

    def _refresh_tree(self) -> None:
        self._quiet = True
        try:
            labels = self.explorer.tree.labels()
            self.tree.options = [(label.replace(" ", _NBSP), k) for k, label in
                                 enumerate(labels)]
            self.tree.value = ()
            self._order = []
            self.selection.value = ""
            self.buffer_hint.value = ""
        finally:
            self._quiet = False

    def _refresh_history(self) -> None:
        history = self.explorer.history
        options = [(text.replace(" ", _NBSP), step.index) for step, text in history.lines()]
        self.history_select.options = options
        self.history_select.value = history.current.index
        steps = [(f"{s.index}: {s.label}", s.index) for s in history]
        for dropdown in (self.compare_a, self.compare_b):
            keep = dropdown.value
            dropdown.options = steps
            dropdown.value = keep if keep is not None and keep < len(steps) else 0
        self.undo_button.disabled = not history.can_undo
        self.redo_button.disabled = not history.can_redo

    def _refresh_status(self) -> None:
        step = self.explorer.current
        run = str(step.measurement) if step.measurement else "not run yet"
        self.status.value = (f"<b>step {step.index}</b> {html.escape(step.label)}<br>"
                             f"{html.escape(run)}")

    def _draw_roofline_if_shown(self) -> None:
        """Drawing takes a few hundred ms: only when the roofline tab is open, so "Run"
        itself stays quick."""
        if not self._roofline_stale or self.tabs.selected_index != self.TABS.index("roofline"):
            return
        from .roofline import figure_png
        self._roofline_stale = False
        self._guard(lambda: setattr(self.roofline_view, "value",
                                    figure_png(self.explorer.roofline())))
        self.roofline_note.value = ""


def _buffer_hint(block) -> str:
    reads = ", ".join(f"{k}: {name}" for k, name in enumerate(block.reads)) or "-"
    writes = ", ".join(f"{k}: {name}" for k, name in enumerate(block.writes)) or "-"
    return (f"<small>block {html.escape(block.name)} reads [{html.escape(reads)}], "
            f"writes [{html.escape(writes)}]</small>")


def _buffers_html(tree) -> str:
    items = "".join(f"<li><code>{html.escape(b.label)}</code></li>" for b in tree.buffers)
    return f"<ul>{items}</ul>"
