"""What the plain-Python side of every interactive widget shares.

A widget model keeps its state in plain attributes that tests and notebooks drive by
calling methods; listeners hear of each change, and the ipywidgets UI is built only
when it is first shown, so nothing here needs a browser or imports ipywidgets.
"""
from __future__ import annotations


class WidgetModel:
    """Base of ScheduleExplorer and TuningDashboard: ``on_change`` listeners, the UI built
    on first use by ``_make_ui``, and display in Jupyter."""

    def __init__(self):
        self._listeners: list = []
        self._widget = None

    def on_change(self, callback) -> None:
        """Call ``callback(event)`` after every change (the event names what changed)."""
        self._listeners.append(callback)

    def _changed(self, event: str) -> None:
        for callback in self._listeners:
            callback(event)

    def _make_ui(self):
        raise NotImplementedError

    @property
    def widget(self):
        """The ipywidgets UI (built on first use)."""
        if self._widget is None:
            self._widget = self._make_ui()
        return self._widget

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget.container)
