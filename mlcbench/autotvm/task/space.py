"""Config spaces: the knobs a template defines, and one point of them (a config).

A template asks ``cfg = autotvm.get_config()`` for its config and defines knobs on it::

    cfg.define_split("tile_y", y, num_outputs=2)        # y: an axis, or an extent
    cfg.define_knob("unroll", [0, 1])
    yo, yi = cfg["tile_y"].apply(s, C, y)
    if cfg["unroll"].val: ...

While a task collects its space, ``cfg`` is a :class:`ConfigSpace` that records each
knob's candidates and answers ``cfg[name]`` with the first candidate; when a config is
instantiated, ``cfg`` is a :class:`ConfigEntity` whose ``define_*`` calls do nothing and
whose ``cfg[name]`` is the chosen candidate. Index ``i`` of a space picks candidate
``i % len(knob0)`` of the first knob, then divides, as TVM numbers them.
"""
from __future__ import annotations

import itertools
import math

from ...ir.errors import TuningError

__all__ = ["ConfigSpace", "ConfigEntity", "FallbackConfigEntity", "SplitEntity",
           "OtherOptionEntity", "ReorderEntity", "AnnotateEntity"]

SPLIT_POLICIES = ("factors", "power2", "verbose")


class SplitEntity:
    """Split sizes, outermost first; ``-1`` means "whatever is left" (``[-1, 32]``)."""

    kind = "sp"

    def __init__(self, size):
        self.size = [int(s) for s in size]

    def apply(self, sch, op, axis):
        """Split ``axis`` of ``sch[op]`` into ``len(size)`` loops; returns them."""
        loops = []
        for i in range(1, len(self.size)):
            # Split by the product of the inner sizes, so the outermost (-1) takes what is left.
            outer, axis = sch[op].split(axis, factor=math.prod(self.size[i:]))
            loops.append(outer)
        return loops + [axis]

    @property
    def val(self):
        return self.size

    def __eq__(self, other):
        return isinstance(other, SplitEntity) and self.size == other.size

    def __repr__(self) -> str:
        return f"sp{self.size}"


class OtherOptionEntity:
    """One candidate of a ``define_knob``: ``cfg["unroll"].val``."""

    kind = "ot"

    def __init__(self, val):
        self.val = val

    def __eq__(self, other):
        return isinstance(other, OtherOptionEntity) and self.val == other.val

    def __repr__(self) -> str:
        return repr(self.val)


class ReorderEntity:
    """A permutation of a knob's axes: ``cfg["order"].apply(s, C, [a, b, c])``."""

    kind = "re"

    def __init__(self, perm):
        self.perm = [int(p) for p in perm]

    def apply(self, sch, op, axes):
        ordered = [axes[i] for i in self.perm]
        sch[op].reorder(*ordered)
        return ordered

    @property
    def val(self):
        return self.perm

    def __eq__(self, other):
        return isinstance(other, ReorderEntity) and self.perm == other.perm

    def __repr__(self) -> str:
        return f"re{self.perm}"


class AnnotateEntity:
    """One annotation per axis: "none", "unroll" or "vec"."""

    kind = "an"

    def __init__(self, anns):
        self.anns = list(anns)

    def apply(self, sch, op, axes):
        for axis, ann in zip(axes, self.anns):
            if ann == "unroll":
                sch[op].unroll(axis)
            elif ann == "vec":
                sch[op].vectorize(axis)

    @property
    def val(self):
        return self.anns

    def __eq__(self, other):
        return isinstance(other, AnnotateEntity) and self.anns == other.anns

    def __repr__(self) -> str:
        return f"an{self.anns}"


ENTITY_KINDS = {cls.kind: cls for cls in (SplitEntity, OtherOptionEntity, ReorderEntity,
                                          AnnotateEntity)}


class Knob:
    """A knob's candidates; ``description`` is how the space prints it."""

    def __init__(self, entities: list, description: str):
        self.entities, self.description = entities, description

    def __len__(self) -> int:
        return len(self.entities)


def _extent(axis_or_extent, name: str) -> int:
    if isinstance(axis_or_extent, int):
        return axis_or_extent
    extent = getattr(getattr(axis_or_extent, "dom", None), "extent", None)
    extent = getattr(extent, "value", extent)
    if not isinstance(extent, int) or extent <= 0:
        raise TuningError(f"define_split({name!r}): expected an axis with a constant extent "
                          f"or a positive int, found {axis_or_extent!r}")
    return extent


def split_candidates(extent: int, num_outputs: int, policy: str, max_factor: int) -> list:
    """Every ``[-1, f1, ..., fn]`` whose inner factors come from ``policy``."""
    if policy not in SPLIT_POLICIES:
        raise TuningError(f"define_split: policy must be one of {SPLIT_POLICIES}, found "
                          f"{policy!r}")
    divisors = [f for f in range(1, extent + 1) if extent % f == 0]
    powers = [2 ** i for i in range(extent.bit_length()) if 2 ** i <= extent]
    factors = {"factors": divisors, "power2": powers,
               "verbose": sorted(set(divisors) | set(powers))}[policy]
    factors = [f for f in factors if f <= max_factor]
    sizes = []
    for inner in itertools.product(factors, repeat=num_outputs - 1):
        product = math.prod(inner)
        # Each factor divides the extent, but their product must too.
        if policy == "factors" and extent % product:
            continue
        # Power-of-two splits may not divide: they only must fit.
        if product <= extent:
            sizes.append([-1] + list(inner))
    return sizes


class ConfigSpace:
    """The knobs of a template. ``len(space)``, ``space.get(index)``, ``space.space_map``.

    >>> space = ConfigSpace()
    >>> _ = space.define_split("tile", 16, num_outputs=2)
    >>> space.define_knob("unroll", [0, 1])
    >>> len(space), space.get(5)
    (10, [('tile', [-1, 4]), ('unroll', 0)],None,5)
    """

    is_fallback = False

    def __init__(self):
        self.space_map: dict[str, Knob] = {}
        self._entity_map: dict = {}
        self.flop = 0
        self.code_hash = None

    # -- defining knobs (recorded only while a space is collected) -------------------------
    def _collecting(self) -> bool:
        return True

    def _add(self, name: str, entities: list, description: str) -> None:
        if not self._collecting():
            return
        if not entities:
            raise TuningError(f"knob {name!r}: no candidate is left ({description}); relax "
                              "the filter or the maximum factor")
        self.space_map[name] = Knob(entities, description)
        # While collecting, a template reads the first candidate of each knob.
        self._entity_map[name] = entities[0]

    def define_split(self, name, axis, num_outputs: int = 2, policy: str = "factors",
                     max_factor: int = 1 << 31, filter=None):
        """Candidates for splitting ``axis`` (or an extent) into ``num_outputs`` loops."""
        extent = _extent(axis, name)
        sizes = split_candidates(extent, num_outputs, policy, max_factor)
        entities = [SplitEntity(s) for s in sizes]
        if filter is not None:
            entities = [e for e in entities if filter(e)]
        self._add(name, entities, f"Split(policy={policy}, product={extent}, "
                                  f"num_outputs={num_outputs})")
        # TVM's define_split returns the axes; templates only unpack them.
        return [axis] * num_outputs

    def define_knob(self, name: str, candidate):
        """A knob taking one of the values in ``candidate``."""
        values = list(candidate)
        self._add(name, [OtherOptionEntity(v) for v in values], f"OtherOption({values})")

    def define_reorder(self, name: str, axes, policy: str = "all", candidate=None):
        """Orders of ``axes``: every permutation ("all"), the given ones ("candidate")."""
        n = len(axes)
        if policy == "all":
            perms = list(itertools.permutations(range(n)))
        elif policy == "identity":
            perms = [tuple(range(n))]
        elif policy == "candidate" and candidate:
            perms = [tuple(axes.index(a) for a in order) for order in candidate]
        else:
            raise TuningError(f"define_reorder({name!r}): policy must be 'all', 'identity' "
                              f"or 'candidate' with candidate=[...], found {policy!r}")
        self._add(name, [ReorderEntity(p) for p in perms], f"Reorder(policy={policy})")

    def define_annotate(self, name: str, axes, policy: str = "try_unroll"):
        """Annotations per axis: "try_unroll", "try_vec" or "try_unroll_vec"."""
        options = {"try_unroll": ["none", "unroll"], "try_vec": ["none", "vec"],
                   "try_unroll_vec": ["none", "unroll", "vec"]}.get(policy)
        if options is None:
            raise TuningError(f"define_annotate({name!r}): policy must be 'try_unroll', "
                              f"'try_vec' or 'try_unroll_vec', found {policy!r}")
        anns = itertools.product(options, repeat=len(axes))
        self._add(name, [AnnotateEntity(a) for a in anns], f"Annotate(policy={policy})")

    def add_flop(self, flop) -> None:
        """Count ``flop`` floating-point operations for the throughput of a measurement."""
        self.flop += flop

    # -- reading ---------------------------------------------------------------------------
    def __getitem__(self, name: str):
        entity = self._entity_map.get(name)
        if entity is None:
            raise TuningError(f"config has no knob {name!r}; the template defined "
                              f"{list(self._entity_map)} (define it with cfg.define_split / "
                              "define_knob before reading it)")
        return entity

    def __len__(self) -> int:
        return math.prod(len(k) for k in self.space_map.values())

    def get(self, index: int) -> "ConfigEntity":
        """The config at ``index`` (0 <= index < len(space))."""
        if not 0 <= index < len(self):
            raise TuningError(f"config index {index} is outside the space of {len(self)} "
                              "configs")
        return ConfigEntity(index, self.code_hash, self._entities_at(index), self)

    def point2knob(self, index: int) -> list:
        """Candidate positions of every knob at ``index`` (first knob varies fastest)."""
        positions = []
        for knob in self.space_map.values():
            positions.append(index % len(knob))
            index //= len(knob)
        return positions

    def knob2point(self, positions) -> int:
        index, stride = 0, 1
        for position, knob in zip(positions, self.space_map.values()):
            index += position * stride
            stride *= len(knob)
        return index

    def _entities_at(self, index: int) -> dict:
        return {name: knob.entities[p]
                for (name, knob), p in zip(self.space_map.items(), self.point2knob(index))}

    def __repr__(self) -> str:
        lines = [f"ConfigSpace (len={len(self)}, space_map="]
        for i, (name, knob) in enumerate(self.space_map.items()):
            lines.append(f"  {i:2d} {name}: {knob.description} len={len(knob)}")
        return "\n".join(lines) + "\n)"


class ConfigEntity(ConfigSpace):
    """One point of a space: ``cfg["tile_y"].size``, ``cfg.index``; prints as TVM does."""

    def __init__(self, index: int, code_hash, entity_map: dict, space=None):
        super().__init__()
        self.index, self.code_hash, self._entity_map = index, code_hash, dict(entity_map)
        self._space = space

    def _collecting(self) -> bool:
        return False

    def get_other_option(self) -> dict:
        return {k: v.val for k, v in self._entity_map.items() if isinstance(v, OtherOptionEntity)}

    def get_flatten_feature(self) -> list:
        """Knob positions as numbers (the "knob" features of the XGB tuner)."""
        # Knob positions when the space is known; otherwise the values themselves.
        if self._space is not None:
            return [float(p) for p in self._space.point2knob(self.index)]
        return [float(v) for e in self._entity_map.values()
                for v in (e.val if isinstance(e.val, list) else [e.val])
                if isinstance(v, (int, float))]

    def to_json_dict(self) -> dict:
        entity = [[name, e.kind, e.val] for name, e in self._entity_map.items()]
        return {"index": self.index, "code_hash": self.code_hash, "entity": entity}

    @staticmethod
    def from_json_dict(json_dict: dict) -> "ConfigEntity":
        entities = {}
        for name, kind, value in json_dict["entity"]:
            if kind not in ENTITY_KINDS:
                raise TuningError(f"config knob {name!r}: unknown kind {kind!r}, expected one "
                                  f"of {sorted(ENTITY_KINDS)}")
            entities[name] = ENTITY_KINDS[kind](value)
        return ConfigEntity(json_dict["index"], json_dict.get("code_hash"), entities)

    def __eq__(self, other) -> bool:
        return isinstance(other, ConfigEntity) and self._entity_map == other._entity_map

    # Equal configs share an index within one space, so hashing by index agrees with __eq__.
    def __hash__(self) -> int:
        return hash(self.index)

    def __repr__(self) -> str:
        pairs = [(name, e.val) for name, e in self._entity_map.items()]
        return f"{pairs},{self.code_hash},{self.index}"


class FallbackConfigEntity(ConfigSpace):
    """The config of a template called outside any tuning record: every knob takes its
    first candidate (splits by 1, the first knob value), as TVM's fallback does."""

    is_fallback = True

    def __repr__(self) -> str:
        pairs = [(name, e.val) for name, e in self._entity_map.items()]
        return f"{pairs},{self.code_hash},fallback"
