"""Exploration history as a tree: every step remembers its parent, so undo, redo and
forking from any earlier step are moves of one pointer.

The history knows nothing about schedules: a step carries a ``label`` (what was done)
and a ``state`` (whatever the explorer keeps). ::

    history = History(initial_state)
    a = history.add("split(...)", state_a)      # step 1, child of step 0
    history.undo()                              # back at step 0
    b = history.add("fuse(...)", state_b)       # step 2: a second branch from step 0
    history.fork(a)                             # continue from step 1
    [s.index for s in history.path()]           # [0, 1]
"""
from __future__ import annotations

from dataclasses import dataclass, field

from mlcbench.ir import MLCBenchError

__all__ = ["History", "HistoryError", "Step"]


class HistoryError(MLCBenchError):
    """A move the history cannot make (undo at the first step, an unknown step, ...)."""


@dataclass(eq=False)
class Step:
    """One node of the history tree. ``measurement`` is set when the step has been run."""
    index: int
    label: str
    state: object
    parent: "Step | None" = None
    children: list = field(default_factory=list)
    measurement: object = None

    @property
    def depth(self) -> int:
        return 0 if self.parent is None else self.parent.depth + 1

    def path(self) -> list["Step"]:
        """The steps from the first one down to this one."""
        chain, step = [], self
        while step is not None:
            chain.append(step)
            step = step.parent
        return chain[::-1]

    def __repr__(self):
        return f"Step({self.index}, {self.label!r})"


class History:
    """A tree of steps with a current step; new steps become children of the current one."""

    def __init__(self, initial_state, label: str = "start"):
        self.root = Step(0, label, initial_state)
        self.steps: list[Step] = [self.root]
        self.current = self.root
        self._redo: dict[int, Step] = {}     # step index -> child that redo returns to

    def add(self, label: str, state) -> Step:
        """A new child of the current step, which becomes current."""
        step = Step(len(self.steps), label, state, parent=self.current)
        self.current.children.append(step)
        self.steps.append(step)
        self._redo[self.current.index] = step
        self.current = step
        return step

    def step(self, step) -> Step:
        """A step by index or the Step itself (checked to belong to this history)."""
        index = step.index if isinstance(step, Step) else step
        if not isinstance(index, int) or not 0 <= index < len(self.steps):
            raise HistoryError(f"no step {step!r}: the history has steps 0.."
                               f"{len(self.steps) - 1}")
        if isinstance(step, Step) and self.steps[index] is not step:
            raise HistoryError(f"{step!r} belongs to another history")
        return self.steps[index]

    def undo(self) -> Step:
        """Move to the parent step."""
        if self.current.parent is None:
            raise HistoryError("undo: already at the first step")
        self._redo[self.current.parent.index] = self.current
        self.current = self.current.parent
        return self.current

    def redo(self) -> Step:
        """Move back down to the child last undone from (or last added)."""
        child = self._redo.get(self.current.index)
        if child is None:
            raise HistoryError(f"redo: step {self.current.index} has no later step")
        self.current = child
        return child

    @property
    def can_undo(self) -> bool:
        return self.current.parent is not None

    @property
    def can_redo(self) -> bool:
        return self.current.index in self._redo

    def fork(self, step) -> Step:
        """Make an earlier step current: the next step starts a new branch from it."""
        self.current = self.step(step)
        return self.current

    def path(self, step=None) -> list[Step]:
        """Steps from the first to ``step`` (default: the current one)."""
        return (self.current if step is None else self.step(step)).path()

    def lines(self) -> list[tuple[Step, str]]:
        """``(step, text)`` per step in tree order, indented by branch, current marked."""
        out = []

        def visit(step, indent, branch):
            mark = "*" if step is self.current else " "
            note = f"   (branch from {step.parent.index})" if branch else ""
            out.append((step, f"{mark} {'  ' * indent}{step.index}: {step.label}{note}"))
            for k, child in enumerate(step.children):
                # the first child continues the line of its parent; later ones branch
                visit(child, indent if k == 0 else indent + 1, k > 0)
        visit(self.root, 0, False)
        return out

    def render(self) -> str:
        return "\n".join(text for _, text in self.lines())

    def __len__(self):
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def __getitem__(self, index) -> Step:
        return self.step(index)

    def __repr__(self):
        return f"History({len(self.steps)} steps, current={self.current.index})"
