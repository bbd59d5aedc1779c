"""TuneContext: one tuning task -- a module, a target, its design space and a strategy.

The context hands itself to the space generator and the search strategy (so they can
read the target and share its random state), and forwards the strategy's protocol::

    context = TuneContext(mod, target="llvm --num-cores=2",
                          space_generator=stochastic_schedule_mm,   # or a SpaceGenerator
                          search_strategy="replay-trace", rand_state=0)
    spaces = context.generate_design_space()
    context.pre_tuning(max_trials=16, num_trials_per_iter=8, design_spaces=spaces)
    candidates = context.generate_measure_candidates()
"""
from __future__ import annotations

import random

from ..ir.errors import TuningError
from ..target import Target
from ..tir.schedule import Schedule
from .database import as_ir_module
from .search_strategy import SearchStrategy
from .space_generator import SpaceGenerator

__all__ = ["TuneContext"]


class TuneContext:
    """A tuning task. ``rand_state`` seeds every random choice (None or -1: random).

    ``space_generator`` is a SpaceGenerator, a schedule function (``sch -> None |
    Schedule | list[Schedule]``, wrapped in ``ScheduleFn``) or a name such as
    ``"post-order-apply"``; ``search_strategy`` a SearchStrategy or a name
    (``"replay-trace"``, ``"replay-func"``, ``"evolutionary"``).
    ``constant_params``: the indices of the kernel's parameters that its model passes
    constants for (weights): a candidate that packs one of them is measured with it
    packed once, as the model's build runs it (see :mod:`.prepacked`).
    """

    def __init__(self, mod=None, *, target=None, space_generator=None, search_strategy=None,
                 task_name: str = "main", rand_state: int | None = None,
                 num_threads="physical", logger=None, constant_params=()):
        self.mod = None if mod is None else as_ir_module(mod)
        self.constant_params = tuple(sorted(int(p) for p in constant_params))
        self.target = None if target is None else (
            target if isinstance(target, Target) else Target(target))
        self.task_name = task_name
        self.rand_state = None if rand_state in (None, -1) else int(rand_state)
        self.num_threads = num_threads
        self.logger = logger
        self.space_generator = as_space_generator(space_generator)
        if isinstance(search_strategy, str):
            search_strategy = SearchStrategy.create(search_strategy)
        self.search_strategy = search_strategy
        self._rng = random.Random(self.rand_state)
        for part in (self.space_generator, self.search_strategy):
            if part is not None and hasattr(part, "_initialize_with_tune_context"):
                part._initialize_with_tune_context(self)

    # -- design space -------------------------------------------------------------------
    def generate_design_space(self, seed: int | None = None) -> list[Schedule]:
        """The space generator's design spaces of ``mod`` (random choices drawn with
        ``seed``, else with the next seed of this context)."""
        if self.mod is None or self.space_generator is None:
            raise TuningError("TuneContext.generate_design_space needs mod and space_generator")
        seed = self._rng.randrange(1, 2 ** 31 - 1) if seed is None else seed
        generator = self.space_generator
        if hasattr(generator, "rand_state"):
            generator.rand_state = seed
        spaces = generator.generate_design_space(self.mod)
        return [spaces] if isinstance(spaces, Schedule) else list(spaces)

    # -- the search strategy's protocol -------------------------------------------------
    def pre_tuning(self, max_trials: int, num_trials_per_iter: int = 64, design_spaces=None,
                   database=None, cost_model=None) -> None:
        if design_spaces is None:
            design_spaces = self.generate_design_space()
        self._strategy("pre_tuning").pre_tuning(max_trials, num_trials_per_iter,
                                                design_spaces, database, cost_model)

    def generate_measure_candidates(self):
        return self._strategy("generate_measure_candidates").generate_measure_candidates()

    def notify_runner_results(self, measure_candidates, results) -> None:
        self._strategy("notify_runner_results").notify_runner_results(measure_candidates,
                                                                      results)

    def post_tuning(self) -> None:
        self._strategy("post_tuning").post_tuning()

    def _strategy(self, method: str) -> SearchStrategy:
        if self.search_strategy is None:
            raise TuningError(f"TuneContext.{method}: the context has no search_strategy")
        return self.search_strategy

    def clone(self) -> "TuneContext":
        strategy = self.search_strategy.clone() if self.search_strategy is not None else None
        return TuneContext(self.mod, target=self.target, space_generator=self.space_generator,
                           search_strategy=strategy, task_name=self.task_name,
                           rand_state=self.rand_state, num_threads=self.num_threads,
                           logger=self.logger, constant_params=self.constant_params)

    def __repr__(self) -> str:
        return f"TuneContext({self.task_name!r}, target={str(self.target)!r})"


def as_space_generator(space):
    """A SpaceGenerator for ``space`` (see :class:`TuneContext`); None stays None."""
    if space is None or hasattr(space, "generate_design_space"):
        return space
    if isinstance(space, str) or callable(space):
        try:
            return SpaceGenerator.create(space)
        except ValueError as err:
            raise TuningError(str(err)) from None
    raise TuningError(f"expected a SpaceGenerator, a schedule function or a name for the "
                      f"design space, found {type(space).__name__}")
