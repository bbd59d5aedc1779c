"""A call run in a thread while the caller does other work, its outcome handed back.

Tuning overlaps a few steps that use different cores: the builder's workers compile
while the search process extracts features, and the unscheduled reference runs in the
runner's worker while the first candidates are searched for::

    call = BackgroundCall(lambda: builder.build(inputs), "mlcbench-build")
    model.prepare(context, candidates)
    built = call.result()         # waits; an exception of the call is raised here
"""
from __future__ import annotations

import threading

__all__ = ["BackgroundCall"]


class BackgroundCall:
    """``fn()`` started in a daemon thread named ``name``; :meth:`result` waits for it
    and returns its value, or raises its exception in the calling thread."""

    def __init__(self, fn, name: str):
        self._outcome: dict = {}

        def target():
            try:
                self._outcome["value"] = fn()
            except BaseException as err:  # handed to whoever asks for the result
                self._outcome["error"] = err

        self._thread = threading.Thread(target=target, name=name, daemon=True)
        self._thread.start()

    def result(self):
        self._thread.join()
        if "error" in self._outcome:
            raise self._outcome["error"]
        return self._outcome["value"]
