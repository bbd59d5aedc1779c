"""Which config a template call uses: the innermost dispatch context decides.

Inside ``with autotvm.apply_history_best("matmul.log"):`` a template call gets the
best measured config of its workload; a task's ``instantiate(config)`` applies one
config; outside every context the :class:`FallbackContext` gives a config whose knobs
take their first candidates and warns once per workload, as TVM does::

    with autotvm.apply_history_best("matmul.log"):
        s, args = matmul(1024, 1024, 1024, "float32")     # the best config found
"""
from __future__ import annotations

import threading
import warnings

from ...ir.errors import TuningError
from .space import FallbackConfigEntity

__all__ = ["DispatchContext", "ApplyConfig", "ApplyHistoryBest", "FallbackContext",
           "apply_history_best"]

# Per thread: tuning threads each enter their own contexts.
_LOCAL = threading.local()


def _target_kind(target) -> str | None:
    if target is None:
        return None
    from ...target import Target
    return (target if isinstance(target, Target) else Target(str(target))).kind.name


class DispatchContext:
    """Base of dispatch contexts: ``query(target, workload)`` returns a config."""

    def query(self, target, workload):
        config = self._query_inside(target, workload)
        if config is None:
            # A context used without `with` has no parent: the fallback answers for it.
            parent = getattr(self, "_parent", None) or FallbackContext.root()
            config = parent.query(target, workload)
        return config

    def _query_inside(self, target, workload):
        raise NotImplementedError

    def best_record(self, target, workload):
        """``(mean cost, config)`` of the best record of ``workload`` in this context or
        the ones it is nested in; None when none has one (no fallback config)."""
        context = self
        while context is not None and not isinstance(context, FallbackContext):
            hit = context._record_inside(target, workload)
            if hit is not None:
                return hit
            context = getattr(context, "_parent", None)
        return None

    def _record_inside(self, target, workload):
        return None

    @staticmethod
    def current() -> "DispatchContext":
        stack = getattr(_LOCAL, "stack", None)
        return stack[-1] if stack else FallbackContext.root()

    def __enter__(self):
        self._parent = DispatchContext.current()
        if not hasattr(_LOCAL, "stack"):
            _LOCAL.stack = []
        _LOCAL.stack.append(self)
        return self

    def __exit__(self, *exc):
        _LOCAL.stack.pop()


class ApplyConfig(DispatchContext):
    """Every template call inside gets ``config`` (how tasks instantiate configs)."""

    def __init__(self, config):
        self._config = config
        self.workload = None

    def _query_inside(self, target, workload):
        self.workload = workload
        return self._config


class ApplyHistoryBest(DispatchContext):
    """The best measured config per workload from ``records``: a log file name, a list of
    file names, or an iterable of ``(MeasureInput, MeasureResult)``.

    A workload measured for several targets uses the records of the current target's
    kind (``with Target("llvm"):``), and any target when none is current.
    """

    def __init__(self, records):
        self.best_by_target: dict = {}
        self.best_by_workload: dict = {}
        self.load(records)

    def load(self, records) -> None:
        from ..record import load_from_file, mean_cost
        if isinstance(records, str):
            records = load_from_file(records)
        elif isinstance(records, (list, tuple)) and records and isinstance(records[0], str):
            records = [r for name in records for r in load_from_file(name)]
        for inp, res in records:
            cost = mean_cost(res)
            if cost is None:          # failed, or a zero, negative or NaN time
                continue
            for table, key in ((self.best_by_target, (_target_kind(inp.target), inp.workload)),
                               (self.best_by_workload, inp.workload)):
                if key not in table or cost < table[key][0]:
                    table[key] = (cost, inp.config)

    def _query_inside(self, target, workload):
        hit = self._record_inside(target, workload)
        return None if hit is None else hit[1]

    def _record_inside(self, target, workload):
        # With no current target, the best record of any target answers.
        kind = _target_kind(target)
        return self.best_by_target.get((kind, workload)) if kind is not None else \
            self.best_by_workload.get(workload)


class FallbackContext(DispatchContext):
    """The root context: a first-candidates config, with a warning once per workload."""

    _root = None

    def __init__(self):
        self.warned: set = set()
        self.silent = False

    @classmethod
    def root(cls) -> "FallbackContext":
        if cls._root is None:
            cls._root = FallbackContext()
        return cls._root

    def query(self, target, workload):
        # Once per workload: a model calls the same template many times.
        if workload not in self.warned and not self.silent:
            self.warned.add(workload)
            warnings.warn(f"Cannot find config for target={target}, workload={workload}. A "
                          "fallback configuration is used, which may bring great performance "
                          "regression.", stacklevel=4)
        return FallbackConfigEntity()


def apply_history_best(records) -> ApplyHistoryBest:
    """``with apply_history_best(log_file):`` template calls use the best records."""
    if records is None:
        raise TuningError("apply_history_best: expected a log file or records, found None")
    return ApplyHistoryBest(records)
