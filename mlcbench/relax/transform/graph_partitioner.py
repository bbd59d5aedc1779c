"""Which bindings FuseOps puts together: TVM's post-dominator partition of the dataflow graph.

The graph has one node per function parameter, per binding of a dataflow block and per
constant; an edge runs from each value to each binding that uses it, labelled with the
consumer's pattern kind (a ``call_tir``'s ``"op_pattern"``, see AnnotateTIROpPattern).

The hard case is a diamond: ``conv2d`` used by three ops that meet again in one ``add``.
At ``conv2d`` we cannot see that all paths meet, so each node is fused, if at all, into
its immediate *post-dominator* -- the nearest node every path from it goes through --
after checking every node on those paths (a union-find keeps the groups). The rules,
applied in node order, twice (phase 0, then phase 1):

* **out_ewise_fusable** (matmul, conv2d, pooling) fuses into its post-dominator when the
  edges there are elementwise and every op on the way is elemwise or broadcast
  (phase 0 only): ``matmul -> add -> relu``.
* **elemwise / broadcast** fuses into an injective or reduction post-dominator when every
  op on the way is at most injective (the end may already hold a matmul).
* **injective** fuses into an injective post-dominator (phase 1, so that matmul and conv
  take their elementwise consumers first).
* **comm_reduce** and **opaque** ops never start a fusion; two out_ewise_fusable ops
  (or two groups that hold one) are never put together.
* A binding to a non-dataflow ``Var`` (used after the block) has no post-dominator: it
  may end a group, never sit inside one. Dataflow blocks are separate graphs.

Every attempt is recorded as a :class:`Decision` so that :func:`~mlcbench.relax.transform.
fusion_report` can say why each edge fused or not.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...ir.module import GlobalVar
from ...ir.op import Op
from ..analysis import post_order_visit
from ..expr import (Call, Constant, DataflowBlock, DataflowVar, Function, MatchCast, PrimValue,
                    SeqExpr, ShapeExpr, StringImm, Tuple, TupleGetItem, Var)
from ..op.registry import OpPatternKind

ELEMWISE, BROADCAST, INJECTIVE = (OpPatternKind.ELEMWISE, OpPatternKind.BROADCAST,
                                  OpPatternKind.INJECTIVE)
COMM_REDUCE, OUT_EWISE_FUSABLE, OPAQUE = (OpPatternKind.COMM_REDUCE,
                                          OpPatternKind.OUT_EWISE_FUSABLE, OpPatternKind.OPAQUE)
MAX_FUSE_DEPTH = 256                         # TVM's default of relax.FuseOps.max_depth
PRIMITIVE = "Primitive"


@dataclass(eq=False)
class GraphNode:
    """A value of the graph: a binding's variable, a parameter or a constant."""
    key: object
    index: int = -1
    pattern: OpPatternKind = OPAQUE
    extern_ref: bool = False                 # used outside the dataflow block
    binding: object = None                   # None for parameters and constants
    callee: str = ""                         # PrimFunc (call_tir) or op name
    function: str = ""
    outputs: list = field(default_factory=list)   # [(consumer GraphNode, edge pattern)]


@dataclass
class FusionGraph:
    nodes: list = field(default_factory=list)      # definitions before uses
    by_key: dict = field(default_factory=dict)

    def node_of(self, key) -> GraphNode | None:
        return self.by_key.get(key)


def is_primitive(func) -> bool:
    return isinstance(func, Function) and bool(func.attrs.get(PRIMITIVE))


def build_graph(mod) -> FusionGraph:
    """The graph of every dataflow block of every non-primitive Relax function."""
    graph = FusionGraph()
    for gv, func in mod.items():
        if isinstance(func, Function) and not is_primitive(func):
            _GraphCreator(graph, mod, gv.name_hint).add_function(func)
    return graph


def call_tir_callee(call) -> GlobalVar | None:
    if isinstance(call, Call) and isinstance(call.op, Op) and call.op.name == "relax.call_tir":
        return call.args[0]
    return None


def call_tir_args(call) -> list:
    packed = call.args[1]
    return list(packed.fields) if isinstance(packed, Tuple) else [packed]


class _GraphCreator:
    def __init__(self, graph: FusionGraph, mod, function_name: str):
        self.graph, self.mod, self.function = graph, mod, function_name

    def add_function(self, func: Function) -> None:
        for param in func.params:
            self._append(GraphNode(param, extern_ref=True, function=self.function))
        if isinstance(func.body, SeqExpr):
            for block in func.body.blocks:
                if isinstance(block, DataflowBlock):    # other blocks may have effects
                    for binding in block.bindings:
                        self.add_binding(binding)

    def _append(self, node: GraphNode) -> GraphNode:
        node.index = len(self.graph.nodes)
        self.graph.nodes.append(node)
        self.graph.by_key[node.key] = node
        return node

    def add_binding(self, binding) -> None:
        node = GraphNode(binding.var, binding=binding, function=self.function,
                         extern_ref=not isinstance(binding.var, DataflowVar))
        value = binding.value
        callee = call_tir_callee(value)
        if isinstance(binding, MatchCast):
            node.callee = "match_cast"
            self._leaves_of(value, node)
        elif callee is not None:
            func = self.mod[callee] if callee in self.mod else None
            attrs = getattr(func, "attrs", {}) or {}
            node.pattern = OpPatternKind(attrs.get("op_pattern", OPAQUE))
            node.callee = callee.name_hint
            for arg in call_tir_args(value):
                self.visit_leaf(arg, node, node.pattern)
        elif isinstance(value, Call):
            node.callee = getattr(value.op, "name", None) or getattr(value.op, "name_hint", "")
            for arg in value.args:
                self.visit_leaf(arg, node, OPAQUE)
        elif isinstance(value, TupleGetItem):
            node.pattern, node.callee = INJECTIVE, "tuple_get_item"
            self.visit_leaf(value.tuple_value, node, INJECTIVE)
        else:
            node.callee = "alias" if isinstance(value, Var) else type(value).__name__.lower()
            self._leaves_of(value, node)
        self._append(node)

    def _leaves_of(self, value, node: GraphNode) -> None:
        """Opaque edges from every variable and constant in ``value``."""
        leaves = []
        post_order_visit(value, lambda e: leaves.append(e)
                         if isinstance(e, (Var, Constant)) else None)
        for leaf in leaves:
            self.visit_leaf(leaf, node, OPAQUE)

    def visit_leaf(self, expr, consumer: GraphNode, pattern: OpPatternKind) -> None:
        if isinstance(expr, Tuple):
            for item in expr.fields:
                self.visit_leaf(item, consumer, pattern)
            return
        if not isinstance(expr, (Var, Constant, ShapeExpr, PrimValue, StringImm)):
            return                   # GlobalVar, ExternFunc, Op: not values of the graph
        leaf = self.graph.node_of(expr)
        if leaf is None:
            # constants, or a variable bound outside the dataflow blocks
            leaf = self._append(GraphNode(expr, extern_ref=isinstance(expr, Var),
                                          function=self.function))
        leaf.outputs.append((consumer, pattern))


# -- post-dominator tree -------------------------------------------------------------------

@dataclass(eq=False)
class DomNode:
    node: GraphNode
    parent: "DomNode | None"
    depth: int
    pattern: OpPatternKind        # the loosest edge on the way to the parent


def post_dominators(graph: FusionGraph) -> list:
    """``tree[i]``: the immediate post-dominator of node i (a DomNode with parent None when
    the node's uses do not meet again, or it is used outside its block)."""
    tree = [None] * len(graph.nodes)
    for node in reversed(graph.nodes):
        tree[node.index] = _dom_node(node, tree)
    return tree


def _dom_node(node: GraphNode, tree) -> DomNode:
    if node.extern_ref:
        return DomNode(node, None, 1, OPAQUE)
    # ELEMWISE is the tightest kind, so the first edge's pattern sets the running maximum.
    parent, pattern = None, ELEMWISE
    for k, (consumer, edge_pattern) in enumerate(node.outputs):
        other = tree[consumer.index]
        if k == 0:
            parent = other
        else:
            parent, pattern = _common_ancestor(parent, other, pattern)
        pattern = max(pattern, edge_pattern)
    return DomNode(node, parent, parent.depth + 1 if parent else 1, pattern)


def _common_ancestor(lhs, rhs, pattern):
    while lhs is not rhs:
        if lhs is None or rhs is None:
            return None, pattern
        if lhs.depth < rhs.depth:
            pattern, rhs = max(pattern, rhs.pattern), rhs.parent
        elif rhs.depth < lhs.depth:
            pattern, lhs = max(pattern, lhs.pattern), lhs.parent
        else:
            pattern = max(pattern, lhs.pattern, rhs.pattern)
            lhs, rhs = lhs.parent, rhs.parent
    return lhs, pattern


# -- partition -----------------------------------------------------------------------------

@dataclass(eq=False)
class Group:
    """A union-find set of nodes; the root's ``pattern`` is the group's."""
    root: GraphNode
    pattern: OpPatternKind
    anchor: GraphNode | None = None          # the out_ewise_fusable op it holds, if any
    num_nodes: int = 1
    parent: "Group | None" = None

    def find_root(self) -> "Group":
        root = self
        while root.parent is not None:
            root = root.parent
        node = self
        while node is not root:               # path compression
            node.parent, node = root, node.parent
        return root


@dataclass(frozen=True)
class Decision:
    """What the partitioner concluded for one producer node.

    ``rule`` names the rule (the keys of ``fusion_report.RULE_TEXT``); ``sink`` is the
    post-dominator it was tried against, ``via`` the node on the way that broke the
    rule, ``edge_pattern`` the loosest edge pattern towards ``sink``.
    """
    producer: int
    rule: str
    fused: bool
    phase: int = 0
    sink: int | None = None
    via: int | None = None
    via_pattern: OpPatternKind | None = None
    edge_pattern: OpPatternKind | None = None
    count: int = 0
    pattern: OpPatternKind | None = None     # the producer's group kind when decided


class GraphPartitioner:
    """``partition()`` returns the group of each node (``groups[i]`` for node i)."""

    def __init__(self, graph: FusionGraph, opt_level: int = 2,
                 max_fuse_depth: int = MAX_FUSE_DEPTH):
        self.graph, self.opt_level, self.max_fuse_depth = graph, opt_level, max_fuse_depth
        self.groups = [Group(n, n.pattern, n if n.pattern == OUT_EWISE_FUSABLE else None)
                       for n in graph.nodes]
        self.decisions: dict[int, Decision] = {}      # last word on each producer
        self.merged_by: dict[int, Decision] = {}      # the fusion that took each node in

    def partition(self) -> list:
        if self.opt_level == 0:
            for node in self.graph.nodes:
                self.decisions[node.index] = Decision(node.index, "fusion_off", False)
            return self.groups
        tree = post_dominators(self.graph)
        for phase in (0, 1):      # TVM's third phase fuses into tuples, which Relax lacks
            for node in self.graph.nodes:
                pattern = self.groups[node.index].pattern
                decision = self._try_fuse(node, tree[node.index], phase)
                if decision is not None:
                    self.decisions[node.index] = replace(decision, pattern=pattern)
        return self.groups

    def root_of(self, node: GraphNode) -> Group:
        return self.groups[node.index].find_root()

    # -- one node ---------------------------------------------------------------------------
    def _try_fuse(self, node: GraphNode, dom: DomNode, phase: int) -> Decision | None:
        """Fuse ``node`` into its post-dominator if a rule allows; None when this phase has
        nothing new to say about it."""
        pattern = self.groups[node.index].pattern
        if node.binding is None:
            return None                          # parameters and constants
        if pattern == OPAQUE:
            return Decision(node.index, "opaque", False, phase)
        if dom.parent is None:
            return Decision(node.index, "extern_ref" if node.extern_ref
                            else "no_post_dominator", False, phase)
        sink = dom.parent.node
        if self.root_of(node) is self.root_of(sink):
            return None                          # an earlier fusion already joined them
        count = self._count_fused_nodes(node, sink)
        if count > self.max_fuse_depth:
            return Decision(node.index, "max_depth", False, phase, sink.index, count=count)
        if pattern == OUT_EWISE_FUSABLE:
            return self._fuse_out_ewise(node, dom, phase) if phase == 0 else None
        if pattern <= BROADCAST:
            return self._fuse_elemwise(node, dom, phase)
        if pattern == INJECTIVE:
            if phase == 0:
                return Decision(node.index, "injective_deferred", False, phase, sink.index)
            return self._fuse_along(node, dom, phase, "injective", _injective_path)
        return Decision(node.index, "reduce_no_consumers", False, phase, sink.index)

    def _fuse_out_ewise(self, node, dom, phase) -> Decision:
        if dom.pattern != ELEMWISE:
            return Decision(node.index, "out_ewise_needs_elemwise", False, phase,
                            dom.parent.node.index, edge_pattern=dom.pattern)
        return self._fuse_along(node, dom, phase, "out_ewise", _broadcast_path)

    def _fuse_elemwise(self, node, dom, phase) -> Decision:
        if not (dom.pattern <= INJECTIVE or dom.pattern == COMM_REDUCE):
            return Decision(node.index, "elemwise_needs_injective_or_reduce", False, phase,
                            dom.parent.node.index, edge_pattern=dom.pattern)
        return self._fuse_along(node, dom, phase, "elemwise", _elemwise_path)

    def _fuse_along(self, node, dom, phase, rule, allowed) -> Decision:
        """Fuse when every node on the paths to the post-dominator passes ``allowed``."""
        sink = dom.parent.node
        blocker = self._check_path(node, sink, allowed)
        if blocker is not None:
            return Decision(node.index, rule + "_path", False, phase, sink.index,
                            via=blocker.index, via_pattern=self.root_of(blocker).pattern,
                            edge_pattern=dom.pattern)
        decision = Decision(node.index, rule, True, phase, sink.index, edge_pattern=dom.pattern,
                            pattern=self.groups[node.index].pattern)
        self._commit_fuse(node, sink, decision)
        return decision

    # -- paths --------------------------------------------------------------------------------
    def _check_path(self, src: GraphNode, sink: GraphNode, allowed) -> GraphNode | None:
        """The first node between ``src`` (excluded) and ``sink`` whose group's pattern
        ``allowed(kind, is_sink)`` refuses, or None when all pass."""
        # Reversed, so the stack pops consumers in use order and reports the earliest blocker.
        visited, stack = set(), [c for c, _ in reversed(src.outputs)]
        while stack:
            current = stack.pop()
            if current.index in visited:
                continue
            visited.add(current.index)
            if not allowed(self.root_of(current).pattern, current is sink):
                return current
            if current is not sink:
                stack.extend(c for c, _ in reversed(current.outputs))
        return None

    def _paths_between(self, src: GraphNode, sink: GraphNode) -> list:
        """Every node on a path from ``src`` to ``sink``, ``src`` included, ``sink`` not."""
        found, seen, stack = [], set(), [src]
        while stack:
            current = stack.pop()
            if current is sink or current.index in seen:
                continue
            seen.add(current.index)
            found.append(current)
            stack.extend(c for c, _ in current.outputs)
        return found

    def _commit_fuse(self, src: GraphNode, sink: GraphNode, decision: Decision) -> None:
        target = self.groups[sink.index]
        for member in self._paths_between(src, sink):
            self.merged_by.setdefault(member.index, decision)
            self._merge(self.groups[member.index], target)

    def _merge(self, child: Group, parent: Group) -> None:
        child, parent = child.find_root(), parent.find_root()
        if child is parent:
            return
        parent.num_nodes += child.num_nodes
        child.parent = parent
        if child.anchor is not None:
            assert parent.anchor is None, "two out_ewise_fusable ops in one group"
            parent.anchor = child.anchor
            # The group takes the looser kind: an add holding a matmul is no longer elementwise.
            parent.pattern = max(child.pattern, parent.pattern)

    def _count_fused_nodes(self, src: GraphNode, sink: GraphNode) -> int:
        total = self.root_of(sink).num_nodes
        for member in self._paths_between(src, sink):
            total += self.groups[member.index].num_nodes
        return total


def _broadcast_path(kind, is_sink) -> bool:
    return kind <= BROADCAST


def _elemwise_path(kind, is_sink) -> bool:
    if not is_sink:
        return kind <= INJECTIVE
    return kind <= INJECTIVE or kind in (COMM_REDUCE, OUT_EWISE_FUSABLE)


def _injective_path(kind, is_sink) -> bool:
    return kind <= INJECTIVE


def partition_module(mod, opt_level: int = 2, max_fuse_depth: int = MAX_FUSE_DEPTH):
    """``(graph, partitioner)`` after partitioning every dataflow block of ``mod``."""
    graph = build_graph(mod)
    partitioner = GraphPartitioner(graph, opt_level, max_fuse_depth)
    partitioner.partition()
    return graph, partitioner
