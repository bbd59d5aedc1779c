"""Callbacks a tuner calls after each measured batch: ``callback(tuner, inputs, results)``.

::

    tuner.tune(n_trial=64, measure_option=option,
               callbacks=[autotvm.callback.progress_bar(64, prefix="[matmul] "),
                          autotvm.callback.log_to_file("matmul.log")])
"""
from __future__ import annotations

from ..ir.errors import InvalidValueError
from . import record

__all__ = ["log_to_file", "progress_bar"]

# The prefixes TVM's progress bar takes, and the FLOPS each stands for.
SI_PREFIXES = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


def log_to_file(file_out: str, protocol: str = "json"):
    """Append every measured record to ``file_out`` (one atomic JSON line each).

    ``protocol`` is TVM's: only ``"json"`` is written (records are read back by
    :func:`~.record.load_from_file`, which reads JSON lines); ``"pickle"`` is refused.
    """
    if protocol != "json":
        raise InvalidValueError(f"log_to_file: protocol must be 'json' (records are JSON "
                                f"lines), found {protocol!r}")

    def _callback(tuner, inputs, results):
        for inp, result in zip(inputs, results):
            record.append(file_out, inp, result)

    _callback.file_out = file_out
    return _callback


def progress_bar(total: int, prefix: str = "", si_prefix: str = "G"):
    """A tqdm bar: current and best throughput in ``si_prefix``FLOPS (one of
    :data:`SI_PREFIXES`), trials done of ``total``."""
    if si_prefix not in SI_PREFIXES:
        raise InvalidValueError(f"progress_bar: si_prefix must be one of "
                                f"{sorted(SI_PREFIXES)}, found {si_prefix!r}")
    from tqdm.auto import tqdm
    scale = SI_PREFIXES[si_prefix]
    state = {"bar": None, "best": 0.0}

    def _callback(tuner, inputs, results):
        if state["bar"] is None:
            state["bar"] = tqdm(total=total, desc=prefix.rstrip() or "tuning", leave=True)
        bar = state["bar"]
        current = 0.0
        for inp, result in zip(inputs, results):
            if result.error_no == 0:
                current = inp.task.flop / (sum(result.costs) / len(result.costs))
        state["best"] = max(state["best"], tuner.best_flops)
        bar.set_postfix_str(f"Current/Best: {current / scale:7.2f}/"
                            f"{state['best'] / scale:7.2f} {si_prefix}FLOPS")
        bar.update(len(results))
        if bar.n >= total or tuner.finished:
            bar.close()

    return _callback
