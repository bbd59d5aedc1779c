"""Pass instruments: objects that see the IR before and after every pass.

Write your own with :func:`pass_instrument` on a class defining any of
``enter_pass_ctx``, ``exit_pass_ctx``, ``should_run(mod, info)``,
``run_before_pass(mod, info)``, ``run_after_pass(mod, info)``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass


def pass_instrument(cls):
    """Mark a class as a pass instrument (any class with the hook methods works)."""
    cls.is_pass_instrument = True
    return cls


@pass_instrument
class PrintBeforeAll:
    """Print the IR before every pass."""

    def run_before_pass(self, mod, info):
        print(f"Before Running Pass: {info.name}")
        print(mod.script())


@pass_instrument
class PrintAfterAll:
    """Print the IR after every pass."""

    def run_after_pass(self, mod, info):
        print(f"After Running Pass: {info.name}")
        print(mod.script())


@pass_instrument
class PassTimingInstrument:
    """Wall time of each pass; ``render()`` gives a table (also kept in ``timings``)."""

    def __init__(self):
        self.timings: list[tuple[str, float]] = []
        self._starts: list[float] = []

    def enter_pass_ctx(self):
        self.timings.clear()

    def run_before_pass(self, mod, info):
        self._starts.append(time.perf_counter())

    def run_after_pass(self, mod, info):
        self.timings.append((info.name, time.perf_counter() - self._starts.pop()))

    def render(self) -> str:
        total = sum(t for _, t in self.timings) or 1e-12
        lines = [f"{'pass':<40}{'time (ms)':>12}{'share':>8}"]
        lines += [f"{name:<40}{t * 1e3:>12.3f}{t / total:>8.1%}" for name, t in self.timings]
        lines.append(f"{'total':<40}{total * 1e3:>12.3f}")
        return "\n".join(lines)


@dataclass(frozen=True)
class PassRecord:
    name: str
    before: object        # IRModule
    after: object         # IRModule
    seconds: float

    @property
    def changed(self) -> bool:
        from .structural import structural_equal
        return not structural_equal(self.before, self.after)


@pass_instrument
class RecordingInstrument:
    """Keep (pass name, IR before, IR after, time) for every pass, in order."""

    def __init__(self):
        self.records: list[PassRecord] = []
        self._stack: list[tuple[object, float]] = []

    def run_before_pass(self, mod, info):
        self._stack.append((mod, time.perf_counter()))

    def run_after_pass(self, mod, info):
        before, start = self._stack.pop()
        self.records.append(PassRecord(info.name, before, mod, time.perf_counter() - start))
