"""Design-space generators: the schedules whose traces the search replays and mutates.

A design space is a Schedule whose trace contains sampling instructions: replaying the
trace with other decisions gives other programs of the same shape. Three generators:

* ``ScheduleFn(f)``: the user writes the space, ``f(sch)`` applies primitives (with
  ``sch.sample_perfect_tile`` etc. where a choice is left to tuning);
* ``PostOrderApply()``: template-free: schedule rules applied to every block, from the
  last block to the first (consumers before producers), each rule possibly branching;
* ``SpaceGeneratorUnion([...])``: the spaces of several generators together.

Each generator also carries what the search needs with its spaces: the postprocessors
and the mutators (with probabilities). ``"from-target"`` picks the defaults of the tune
context's target::

    spaces = ms.space_generator.PostOrderApply().generate_design_space(mod)
    print(spaces[0].trace)
"""
from __future__ import annotations

import copy
import random

from ..ir.errors import InvalidTypeError, InvalidValueError, ScheduleError
from ..ir.module import IRModule, as_module
from ..tir.function import PrimFunc
from ..tir.functor import post_order_visit
from ..tir.schedule import Schedule
from ..tir.stmt import BlockRealize
from .block_analysis import has_block, locate_block
from .gpu_target import is_gpu_target
from .mutator import Mutator
from .postproc import Postproc
from .schedule_rule import ScheduleRule
from .schedule_rule.schedule_rule import as_target

FROM_TARGET = "from-target"
CUSTOM_RULE_ANNOTATION = "schedule_rule"


class SpaceGenerator:
    """Base class: subclass and implement ``generate_design_space``.

    ``sch_rules``, ``postprocs`` and ``mutator_probs`` are lists (a dict for the
    mutators) or ``"from-target"`` (the defaults of the target, chosen when a
    TuneContext initializes the generator, else for ``Target.current()`` / llvm).
    """

    def __init__(self, sch_rules=FROM_TARGET, postprocs=FROM_TARGET,
                 mutator_probs=FROM_TARGET):
        self.sch_rules = sch_rules
        self.postprocs = postprocs
        self.mutator_probs = mutator_probs
        self.target = None
        self.rand_state = -1        # a seed, as in TVM; -1 (or None): draw one at random

    def _initialize_with_tune_context(self, context) -> None:
        """Resolve ``"from-target"`` for the context's target, seed from its
        ``rand_state`` and initialize every rule, postprocessor and mutator with it."""
        self.target = as_target(getattr(context, "target", None))
        seed = getattr(context, "rand_state", None)
        self.rand_state = seed if isinstance(seed, int) else -1
        self._resolve_defaults()
        for obj in list(self.sch_rules) + list(self.postprocs) + list(self.mutator_probs):
            obj._initialize_with_tune_context(context)

    def _resolve_defaults(self) -> None:
        kind = as_target(self.target).kind.name
        if isinstance(self.sch_rules, str):
            self.sch_rules = ScheduleRule.create(_kind(self.sch_rules, kind))
        if isinstance(self.postprocs, str):
            self.postprocs = Postproc.create(_kind(self.postprocs, kind))
        if isinstance(self.mutator_probs, str):
            self.mutator_probs = Mutator.create(_kind(self.mutator_probs, kind))
        self.sch_rules = list(self.sch_rules or [])
        self.postprocs = list(self.postprocs or [])
        self.mutator_probs = dict(self.mutator_probs or {})

    def generate_design_space(self, mod) -> list:
        """The design spaces of ``mod`` (an IRModule or a PrimFunc), as Schedules."""
        raise NotImplementedError(f"{type(self).__name__} must implement "
                                  "generate_design_space(mod)")

    def baseline_schedules(self, mod, constant_params: tuple = ()) -> list:
        """Finished schedules the search measures first, before any sampled candidate
        (none by default; :class:`PostOrderApply` gives the default schedule, knowing
        which parameters the model passes constants for)."""
        return []

    def seed_schedules(self, mod, design_spaces) -> list:
        """Points of ``design_spaces`` the search measures in its first round, before
        postprocessing (none by default; :class:`PostOrderApply` gives the register-tile
        point of each space)."""
        return []

    def decision_provider(self, sch, seed: int):
        """What draws the decisions when the search samples a space anew on ``sch``: a
        ``decision_provider`` for ``Trace.apply_to_schedule``, or None (the sampling
        primitives draw them). On a GPU target, tile sizes drawn within its limits
        (:class:`~.gpu_tile_sampler.GPUTileSampler`)."""
        target = as_target(self.target)
        # On a CPU the sampling primitives draw their own decisions.
        if not is_gpu_target(target):
            return None
        from .gpu_tile_sampler import GPUTileSampler
        return GPUTileSampler(sch, target, random.Random(seed))

    def clone(self) -> "SpaceGenerator":
        return copy.deepcopy(self)

    def _fork_seed(self) -> int:
        """A seed for the next schedule; a set ``rand_state`` moves on deterministically."""
        seeded = isinstance(self.rand_state, int) and self.rand_state >= 0
        rng = random.Random(self.rand_state if seeded else None)
        seed = rng.randrange(1, 2 ** 31 - 1)
        if seeded:
            # The state moves on, so each schedule gets a new seed and a rerun gets the same ones.
            self.rand_state = rng.randrange(1, 2 ** 31 - 1)
        return seed

    def _new_schedule(self, mod) -> Schedule:
        return Schedule(as_module(mod, (PrimFunc,), "space generator"), seed=self._fork_seed())

    @staticmethod
    def create(kind="post-order-apply", *args, **kwargs) -> "SpaceGenerator":
        """``"post-order-apply"``, ``"union"`` or a schedule function (``ScheduleFn``)."""
        if callable(kind) and not isinstance(kind, SpaceGenerator):
            return ScheduleFn(kind, *args, **kwargs)
        if isinstance(kind, SpaceGenerator):
            return kind
        if kind == "post-order-apply":
            return PostOrderApply(*args, **kwargs)
        if kind == "union":
            return SpaceGeneratorUnion(*args, **kwargs)
        raise InvalidValueError(f"SpaceGenerator.create: unknown kind {kind!r}; expected "
                                "'post-order-apply', 'union' or a function of a Schedule")


def _kind(value: str, default: str) -> str:
    return default if value == FROM_TARGET else value


class ScheduleFn(SpaceGenerator):
    """A design space written as a function: ``sch_fn(sch)`` changes ``sch`` in place
    (returning None) or returns a Schedule or a list of Schedules.

    Examples
    --------
    >>> def space(sch):
    ...     i, j, k = sch.get_loops("C")
    ...     j0, j1 = sch.split(j, sch.sample_perfect_tile(j, n=2))
    >>> spaces = ScheduleFn(space).generate_design_space(matmul)   # doctest: +SKIP
    """

    def __init__(self, sch_fn, sch_rules=FROM_TARGET, postprocs=FROM_TARGET,
                 mutator_probs=FROM_TARGET):
        super().__init__(sch_rules, postprocs, mutator_probs)
        if not callable(sch_fn):
            raise InvalidTypeError(f"ScheduleFn expects a function of a Schedule, found "
                                   f"{type(sch_fn).__name__}")
        self.sch_fn = sch_fn

    def generate_design_space(self, mod) -> list:
        sch = self._new_schedule(mod)
        result = self.sch_fn(sch)
        if result is None:
            return [sch]
        if isinstance(result, Schedule):
            return [result]
        result = list(result)
        if not all(isinstance(s, Schedule) for s in result):
            raise InvalidTypeError(
                "ScheduleFn: the function must return None, a Schedule or a "
                f"list of Schedules, found {[type(s).__name__ for s in result]}")
        return result


class SpaceGeneratorUnion(SpaceGenerator):
    """The design spaces of several generators, concatenated.

    >>> union = SpaceGeneratorUnion([ScheduleFn(f), PostOrderApply()])   # doctest: +SKIP
    """

    def __init__(self, space_generators, sch_rules=FROM_TARGET, postprocs=FROM_TARGET,
                 mutator_probs=FROM_TARGET):
        super().__init__(sch_rules, postprocs, mutator_probs)
        self.space_generators = list(space_generators)

    def _initialize_with_tune_context(self, context) -> None:
        super()._initialize_with_tune_context(context)
        for generator in self.space_generators:
            generator._initialize_with_tune_context(context)

    def generate_design_space(self, mod) -> list:
        return [sch for gen in self.space_generators
                for sch in gen.generate_design_space(mod)]


class PostOrderApply(SpaceGenerator):
    """Apply each schedule rule to every block, consumers first; rules may branch.

    For each rule in turn, every schedule so far is taken through the blocks from the
    last (in program order, the root first) to the first; a rule returns one or more
    schedules per block and each goes on with the remaining blocks. Blocks annotated
    ``schedule_rule`` are skipped; ``f_block_filter(block) -> bool`` limits the blocks.

    Examples
    --------
    >>> spaces = PostOrderApply().generate_design_space(matmul_module)   # doctest: +SKIP
    >>> len(spaces)       # no write cache, write cache at tile level 1, at level 2
    3
    """

    def __init__(self, f_block_filter=None, sch_rules=FROM_TARGET, postprocs=FROM_TARGET,
                 mutator_probs=FROM_TARGET, measure_default: bool = True):
        super().__init__(sch_rules, postprocs, mutator_probs)
        self.f_block_filter = f_block_filter
        self.measure_default = measure_default

    def baseline_schedules(self, mod, constant_params: tuple = ()) -> list:
        """The schedule ``relax.build`` would use untuned (dlight's CPU rules, told the
        ``constant_params`` as PrepackWeights tells them), so that tuning measures it
        first and never ends slower than the untuned build. ``measure_default=False``
        leaves it out."""
        if not self.measure_default:
            return []
        from .default_schedule import default_schedule
        sch = default_schedule(as_module(mod, (PrimFunc,), "space generator"),
                               as_target(self.target), constant_params)
        return [] if sch is None else [sch]

    def seed_schedules(self, mod, design_spaces) -> list:
        """Each space with the decisions of the default schedule's register tile (see
        ``register_tile_seed``; on a GPU the course's hand schedule, see
        ``gpu_tile_sampler``): random samples rarely come near it, and the
        evolutionary search mutates from the best measured programs. Also left out by
        ``measure_default=False``."""
        if not self.measure_default:
            return []
        from .gpu_tile_sampler import gpu_seed_point
        from .register_tile_seed import register_tile_point
        mod, target = as_module(mod, (PrimFunc,), "space generator"), as_target(self.target)
        seed_point = gpu_seed_point if is_gpu_target(target) else register_tile_point
        points = (seed_point(mod, space, target) for space in design_spaces)
        return [p for p in points if p is not None]

    def generate_design_space(self, mod) -> list:
        self._resolve_defaults()
        sch = self._new_schedule(mod)
        blocks = self._collect_blocks(sch)
        result = [sch]
        for rule in self.sch_rules:
            result = self._apply_rule(rule, result, blocks)
        return result

    def _collect_blocks(self, sch) -> list:
        """Handles of every block (root included), in post order: a block after the
        blocks nested in it, siblings in program order."""
        blocks = []
        for gv, func in sch.mod.functions.items():
            if not isinstance(func, PrimFunc):
                continue
            names = []
            post_order_visit(func.body, lambda n: names.append(n.block.name_hint)
                             if isinstance(n, BlockRealize) else None)
            for name in names:
                rv = sch.get_block(name, func_name=gv.name_hint)
                if self.f_block_filter is None or self.f_block_filter(sch.get(rv)):
                    blocks.append(rv)
        return blocks

    @staticmethod
    def _apply_rule(rule, schedules, blocks) -> list:
        stack = [(sch, list(blocks)) for sch in schedules]
        done = []
        while stack:
            sch, pending = stack.pop()
            if not pending:
                done.append(sch)
                continue
            # From the end of the post order: the root first, then consumers before producers.
            block = pending.pop()
            # An earlier rule may have inlined the block away in this branch of the space.
            if not has_block(sch, block) or _has_custom_rule(sch, block):
                stack.append((sch, pending))
                continue
            for result in rule.apply(sch, block):
                # Each branch continues with its own copy of the blocks still to visit.
                stack.append((result, list(pending)))
        # The stack finishes the last branch first; reversed, spaces come in the rules' order.
        return done[::-1]


def _has_custom_rule(sch, block) -> bool:
    try:
        _, hit = locate_block(sch, block)
    except ScheduleError:
        # A block the schedule cannot locate any more is left alone.
        return True
    return CUSTOM_RULE_ANNOTATION in hit.node.block.annotations
