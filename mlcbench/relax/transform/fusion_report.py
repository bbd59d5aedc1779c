"""Why FuseOps fused what it fused: one readable record per edge of the dataflow graph.

``fusion_report(mod)`` runs the same partition as ``FuseOps`` on ``mod`` (the module
*before* FuseOps, after AnnotateTIROpPattern; a pass instrument sees it in
``run_before_pass``) and returns a :class:`FusionReport`::

    >>> report = relax.transform.fusion_report(mod)
    >>> print(report)
    main: lv (matmul, out_ewise_fusable) -> lv1 (add, elemwise): fused into fused_matmul_add_relu
        lv (out_ewise_fusable) takes its elementwise consumers up to lv2: ...
    main: lv2 (relu, elemwise) -> lv3 (matmul, out_ewise_fusable): not fused
        lv2 (elemwise) fuses only into an injective or reduction post-dominator; ...

How to read a record (:class:`FusionEdge`): ``producer`` and ``consumer`` are binding
variables named as ``mod.script()`` prints them, ``*_op`` the PrimFunc (or op) each
calls and ``*_pattern`` its kind (``"op_pattern"``); ``fused`` says whether both ended
in one group, ``group`` names that group's function (FuseOps may add a number to keep
names unique) and ``reason`` is the rule that decided, in one sentence; ``rule`` is the
rule's key in :data:`RULE_TEXT`. Edges from parameters and constants are not listed:
those are inputs and never fuse. ``report.groups`` lists each fused group's bindings;
``report.to_dicts()`` gives plain rows for tables and widgets.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ...ir.module import IRModule
from ...ir.transform import PassContext
from ..expr import Function
from ..tvmscript.printer import RelaxPrinter
from .fuse_ops import MAX_DEPTH_CONFIG, fused_function_name
from .graph_partitioner import MAX_FUSE_DEPTH, is_primitive, partition_module

RULE_TEXT = {
    # fused
    "out_ewise": "{producer} ({kind}) takes its elementwise consumers up to {sink}: the edges "
                 "there are elemwise and every op on the way is elemwise or broadcast",
    "elemwise": "{producer} ({kind}) fuses into its post-dominator {sink} ({sink_kind}): every "
                "op on the way is at most injective",
    "injective": "{producer} (injective) fuses into {sink}: every op on the way and {sink}'s "
                 "group are injective",
    # not fused
    "fusion_off": "fusion is off (fuse_opt_level 0)",
    "opaque": "{producer} is opaque: opaque kernels and values that are not call_tir are "
              "never fused",
    "extern_ref": "{producer} is a dataflow output (a non-dataflow Var, used after the block): "
                  "it may end a group but never sit inside one",
    "no_post_dominator": "the uses of {producer} do not all meet again at one later binding "
                         "of the block, so nothing post-dominates it",
    "max_depth": "fusing {producer} into {sink} would put {count} ops in one group, more than "
                 "relax.FuseOps.max_depth",
    "injective_deferred": "{producer} (injective) waits for phase 1, after matmul and conv "
                          "took their elementwise consumers",
    "reduce_no_consumers": "{producer} is a reduction (comm_reduce): reductions take injective "
                           "producers but never their consumers",
    "out_ewise_needs_elemwise": "{producer} ({kind}) takes only consumers reached through "
                                "elemwise edges; the edges to {sink} are {edge_kind}",
    "elemwise_needs_injective_or_reduce": "{producer} ({kind}) fuses only into an injective or "
                                          "reduction post-dominator; the edges to {sink} are "
                                          "{edge_kind}",
    "out_ewise_path": "{producer} ({kind}) stops before {via}, whose group is {via_kind}: more "
                      "than broadcast (two out_ewise_fusable ops never share a group)",
    "elemwise_path": "{via} between {producer} and {sink} is {via_kind}, which an elementwise "
                     "chain cannot pass",
    "injective_path": "{via} on the way from {producer} to {sink} is {via_kind}; an injective "
                      "op fuses only into injective groups",
}


@dataclass(frozen=True)
class FusionEdge:
    """One use of one binding by another, and whether FuseOps fused it (module docstring)."""
    function: str
    producer: str
    producer_op: str
    producer_pattern: str
    consumer: str
    consumer_op: str
    consumer_pattern: str
    fused: bool
    rule: str
    reason: str
    group: str = ""

    def __str__(self) -> str:
        verdict = f"fused into {self.group}" if self.fused else "not fused"
        return (f"{self.function}: {self.producer} ({self.producer_op}, {self.producer_pattern})"
                f" -> {self.consumer} ({self.consumer_op}, {self.consumer_pattern}): {verdict}"
                f"\n    {self.reason}")


@dataclass(frozen=True)
class FusionGroup:
    function: str
    name: str
    bindings: tuple


@dataclass(frozen=True)
class FusionReport:
    edges: tuple
    groups: tuple

    def __iter__(self):
        return iter(self.edges)

    def __len__(self) -> int:
        return len(self.edges)

    def edge(self, producer: str, consumer: str, function: str = "main") -> FusionEdge:
        """The record of the edge ``producer -> consumer`` (printed names)."""
        for record in self.edges:
            if (record.function, record.producer, record.consumer) == \
                    (function, producer, consumer):
                return record
        raise KeyError(f"no edge {producer} -> {consumer} in {function}; edges: "
                       f"{[(e.producer, e.consumer) for e in self.edges]}")

    def to_dicts(self) -> list:
        return [asdict(e) for e in self.edges]

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.edges) or "(no edges between bindings)"


def fusion_report(mod: IRModule, fuse_opt_level: int = -1) -> FusionReport:
    """Why ``FuseOps(fuse_opt_level)`` fuses each edge of ``mod`` or not (module docstring).

    >>> print(relax.transform.fusion_report(mod))
    """
    ctx = PassContext.current()
    opt_level = ctx.opt_level if fuse_opt_level < 0 else fuse_opt_level
    max_depth = int(ctx.config.get(MAX_DEPTH_CONFIG, MAX_FUSE_DEPTH))
    graph, partitioner = partition_module(mod, opt_level, max_depth)
    names = _printed_names(mod)
    groups = _groups(graph, partitioner, names)
    group_of = {name_key: g.name for g in groups for name_key in
                ((g.function, b) for b in g.bindings)}
    edges = []
    for node in graph.nodes:
        if node.binding is None:
            continue
        for consumer, _ in node.outputs:
            edges.append(_edge(node, consumer, partitioner, names, group_of))
    return FusionReport(tuple(edges), tuple(groups))


def _printed_names(mod: IRModule) -> dict:
    """``{id(var): name}`` as ``mod.script()`` prints each Relax function."""
    names = {}
    for gv, func in mod.items():
        if isinstance(func, Function) and not is_primitive(func):
            printer = RelaxPrinter(in_module=True)
            printer.function(func, gv.name_hint)
            names.update(printer.names)
    return names


def _groups(graph, partitioner, names) -> list:
    members: dict = {}
    for node in graph.nodes:
        if node.binding is not None:
            members.setdefault(id(partitioner.root_of(node)), []).append(node)
    return [FusionGroup(nodes[0].function, fused_function_name([n.binding for n in nodes]),
                        tuple(names.get(id(n.key), n.key.name_hint) for n in nodes))
            for nodes in members.values() if len(nodes) > 1]


def _edge(node, consumer, partitioner, names, group_of) -> FusionEdge:
    def name(n):
        return names.get(id(n.key), getattr(n.key, "name_hint", "?"))

    fused = partitioner.root_of(node) is partitioner.root_of(consumer)
    decision = partitioner.merged_by.get(node.index) if fused else \
        partitioner.decisions.get(node.index)
    if decision is None:
        rule, reason = "", "no rule applied"
    else:
        rule, reason = decision.rule, _reason(decision, partitioner.graph, name)
        if fused and decision.producer != node.index:
            src = partitioner.graph.nodes[decision.producer]
            reason = f"merged while fusing {name(src)}: {reason}"
    return FusionEdge(node.function, name(node), node.callee, _kind(node.pattern),
                      name(consumer), consumer.callee, _kind(consumer.pattern), fused,
                      rule, reason, group_of.get((node.function, name(node)), "") if fused
                      else "")


def _kind(pattern) -> str:
    return pattern.name.lower() if pattern is not None else "?"


def _kind_in_group(own, group) -> str:
    """``elemwise`` or, once a matmul joined its group, ``elemwise, in a group that is
    out_ewise_fusable``."""
    if group is None or group == own:
        return _kind(own)
    return f"{_kind(own)}, in a group that is {_kind(group)}"


def _reason(decision, graph, name) -> str:
    producer = graph.nodes[decision.producer]
    sink = graph.nodes[decision.sink] if decision.sink is not None else None
    via = graph.nodes[decision.via] if decision.via is not None else None
    return RULE_TEXT[decision.rule].format(
        producer=name(producer), kind=_kind_in_group(producer.pattern, decision.pattern),
        sink=name(sink) if sink else "?", sink_kind=_kind(sink.pattern) if sink else "?",
        via=name(via) if via else "?", via_kind=_kind(decision.via_pattern),
        edge_kind=_kind(decision.edge_pattern), count=decision.count)


__all__ = ["FusionEdge", "FusionGroup", "FusionReport", "RULE_TEXT", "fusion_report"]
