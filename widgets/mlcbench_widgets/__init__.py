"""The workbench UI of mlcbench: Jupyter widgets over mlcbench's public API.

The widgets (PassViewer, ScheduleExplorer, TuningDashboard, GraphView) arrive with the
features they show; this package imports only ``mlcbench``'s public API.
"""
__all__: list[str] = []
