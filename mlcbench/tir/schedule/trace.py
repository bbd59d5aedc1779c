"""Random-variable handles, frozen instructions and the replayable Trace.

A trace is the list of primitives applied to a schedule, each with its inputs
(handles and plain values), its outputs (new handles) and, for sampling primitives,
the decision taken. It prints as runnable Python::

    def apply_trace(sch):
      b0 = sch.get_block(name="Y", func_name="main")
      l1, l2, l3 = sch.get_loops(block=b0)
      v4, v5 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16, decision=[32, 4])
      l6, l7 = sch.split(loop=l2, factors=[v4, v5])
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace

from ...ir.errors import ScheduleError
from .primitives.index_map import IndexMap


class RandomVariable:
    """A handle resolved by the Schedule against its current IR."""
    prefix = "rv"

    def __repr__(self):
        return f"{type(self).__name__}(#{id(self) % 10000})"


class BlockRV(RandomVariable):
    prefix = "b"


class LoopRV(RandomVariable):
    prefix = "l"


class ExprRV(RandomVariable):
    """An integer chosen by a sampling primitive; usable as a split factor."""
    prefix = "v"


# Primitives whose result is a list of handles (printed as ``a, b = ...``).
LIST_RESULTS = {"get_loops", "get_child_blocks", "get_producers", "get_consumers", "split",
                "sample_perfect_tile"}
SAMPLING = {"sample_perfect_tile", "sample_categorical", "sample_compute_location"}


@dataclass(frozen=True, eq=False)
class Instruction:
    """One applied primitive. ``inputs``/``attrs`` are ``(argument name, value)`` pairs;
    values may be handles, plain Python values, or lists of those."""
    kind: str
    inputs: tuple
    attrs: tuple
    outputs: tuple
    decision: object = None

    def kwargs(self) -> dict:
        return dict(self.inputs + self.attrs)


def _primitive(sch, kind):
    """The schedule method an instruction names: a public primitive, never a private or
    special attribute (a trace read from a file is data)."""
    method = getattr(type(sch), kind, None) if isinstance(kind, str) and \
        kind.isidentifier() and not kind.startswith("_") else None
    if not callable(method):
        raise ScheduleError(f"trace instruction: expected the name of a schedule primitive "
                            f"such as 'split', found {kind!r}")
    return getattr(sch, kind)


def _map_value(value, fn):
    if isinstance(value, (list, tuple)):
        return [_map_value(v, fn) for v in value]
    return fn(value)


class Trace:
    """The recorded instructions of a Schedule; immutable once taken from it."""

    def __init__(self, insts=(), decisions=None):
        self.insts = tuple(insts)
        # decisions are stored on the instructions; the mapping form mirrors TVM
        self.decisions = {inst: inst.decision for inst in self.insts if inst.kind in SAMPLING}

    # -- replay -------------------------------------------------------------------------
    def apply_to_schedule(self, sch, remove_postproc: bool = False, decision_provider=None):
        """Replay every instruction on ``sch`` (a fresh schedule of the same module).

        ``decision_provider(inst, kwargs, decision)``, when given, is asked for the
        decision of every sampling instruction: ``kwargs`` are its arguments as handles
        of ``sch`` (``kwargs["loop"]`` a LoopRV of the replayed schedule), ``decision``
        the recorded one; it returns the decision to take."""
        env = {}
        for inst in self.insts:
            if remove_postproc and inst.kind == "enter_postproc":
                break
            kwargs = {k: _map_value(v, lambda x: env.get(x, x) if isinstance(
                x, RandomVariable) else x) for k, v in inst.kwargs().items()}
            if inst.kind in SAMPLING:
                kwargs["decision"] = inst.decision if decision_provider is None else \
                    decision_provider(inst, kwargs, inst.decision)
            star = [v for k, v in kwargs.items() if k.startswith("*")]
            kwargs = {k: v for k, v in kwargs.items() if not k.startswith("*")}
            result = _primitive(sch, inst.kind)(*(star[0] if star else ()), **kwargs)
            results = list(result) if inst.kind in LIST_RESULTS else (
                [] if result is None else [result])
            if len(results) != len(inst.outputs):
                raise ScheduleError(f"replaying {inst.kind}: expected {len(inst.outputs)} "
                                    f"results, found {len(results)}")
            env.update(zip(inst.outputs, results))
        return sch

    def with_decision(self, inst: Instruction, decision, remove_postproc: bool = False):
        """A new trace where the sampling instruction ``inst`` takes ``decision``."""
        insts = [replace(i, decision=decision) if i is inst else i for i in self.insts]
        return Trace(insts)

    def get_decision(self, inst: Instruction):
        return inst.decision

    # -- printing -----------------------------------------------------------------------
    def _names(self) -> dict:
        names, counter = {}, 0
        for inst in self.insts:
            for rv in inst.outputs:
                names[rv] = f"{rv.prefix}{counter}"
                counter += 1
        return names

    def as_python(self) -> list:
        names = self._names()

        def fmt(value):
            if isinstance(value, RandomVariable):
                return names.get(value, "<unknown handle>")
            if hasattr(value, "as_python"):       # an IndexMap prints as its lambda
                return value.as_python()
            if isinstance(value, (list, tuple)):
                return "[" + ", ".join(fmt(v) for v in value) + "]"
            if isinstance(value, str):
                return json.dumps(value)
            return repr(value)

        lines = []
        for inst in self.insts:
            args = [", ".join(fmt(x) for x in v) if k.startswith("*") else f"{k}={fmt(v)}"
                    for k, v in inst.inputs + inst.attrs]
            if inst.kind in SAMPLING:
                args.append(f"decision={fmt(inst.decision)}")
            call = f"sch.{inst.kind}({', '.join(args)})"
            outs = [names[o] for o in inst.outputs]
            if inst.kind in LIST_RESULTS:
                lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
                lines.append(f"{lhs} = {call}" if outs else call)
            else:
                lines.append(f"{outs[0]} = {call}" if outs else call)
        return lines

    def __str__(self):
        body = self.as_python() or ["pass"]
        return "# from mlcbench import tir as T\ndef apply_trace(sch):\n" + "\n".join(
            "  " + line for line in body)

    __repr__ = __str__

    def show(self) -> None:
        print(str(self))

    # -- JSON ---------------------------------------------------------------------------
    def as_json(self) -> dict:
        """``{"insts": [[kind, inputs, attrs, outputs], ...], "decisions": [[i, d], ...]}``
        with handles written as ``"$b0"``-style strings."""
        names = self._names()

        def enc(value):
            if isinstance(value, RandomVariable):
                return "$" + names[value]
            if hasattr(value, "as_json_value"):
                return value.as_json_value()
            if isinstance(value, (list, tuple)):
                return [enc(v) for v in value]
            return value

        insts, decisions = [], []
        for n, inst in enumerate(self.insts):
            insts.append([inst.kind, [[k, enc(v)] for k, v in inst.inputs],
                          [[k, enc(v)] for k, v in inst.attrs],
                          ["$" + names[o] for o in inst.outputs]])
            if inst.kind in SAMPLING:
                decisions.append([n, enc(inst.decision)])
        return json.loads(json.dumps({"insts": insts, "decisions": decisions}))

    @staticmethod
    def from_json(data) -> "Trace":
        if isinstance(data, str):
            data = json.loads(data)
        kinds = {"b": BlockRV, "l": LoopRV, "v": ExprRV}
        handles = {}

        def dec(value):
            if isinstance(value, str) and value.startswith("$"):
                if value not in handles:
                    handles[value] = kinds[value[1]]()
                return handles[value]
            if isinstance(value, list):
                return [dec(v) for v in value]
            if isinstance(value, dict) and set(value) == {"index_map"}:
                return IndexMap.from_text(value["index_map"])
            return value

        decisions = dict((n, d) for n, d in data.get("decisions", []))
        insts = []
        for n, (kind, inputs, attrs, outputs) in enumerate(data["insts"]):
            if not (isinstance(kind, str) and kind.isidentifier() and not kind.startswith("_")):
                raise ScheduleError(f"trace instruction {n}: expected the name of a schedule "
                                    f"primitive such as 'split', found {kind!r}")
            insts.append(Instruction(kind, tuple((k, dec(v)) for k, v in inputs),
                                     tuple((k, dec(v)) for k, v in attrs),
                                     tuple(dec(o) for o in outputs), decisions.get(n)))
        return Trace(insts)
