"""The Relax dataflow graph of one function as plain data, and its DOT / text drawings.

One node per binding (and one per function parameter), one edge per use of a binding
or parameter by a later binding. With a fusion report (``relax.transform.fusion_report``
on the module just before FuseOps) each binding-to-binding edge says whether FuseOps
fused it and why, and the fused groups become boxes::

    graph = build_graph(annotated_mod, report=relax.transform.fusion_report(annotated_mod))
    graph.kernel_count                  # R.call_tir bindings: kernels launched per call
    print(to_text(graph))               # indented list, groups as sections
    print(to_dot(graph))                # graphviz source, groups as clusters
"""
from __future__ import annotations

import html
import keyword
import re
from dataclasses import dataclass

from mlcbench import relax
from mlcbench.ir import MLCBenchError

__all__ = ["Graph", "GraphEdge", "GraphGroup", "GraphNode", "PATTERN_COLORS", "build_graph",
           "edge_table_html", "main_function_name", "to_dot", "to_text"]

# One fill colour per op pattern kind (relax.op.OpPatternKind, lower case); "fused" is a
# kernel FuseTIR made, which carries no pattern of its own.
PATTERN_COLORS = {
    "elemwise": "#c6e5b1", "broadcast": "#d9ead3", "injective": "#cfe2f3",
    "comm_reduce": "#fce5cd", "out_ewise_fusable": "#f4cccc", "tuple": "#eeeeee",
    "opaque": "#d9d2e9", "fused": "#ffe599", "input": "#ffffff", "": "#f3f3f3",
}


@dataclass(frozen=True)
class GraphNode:
    """A binding (or a parameter): ``name`` as bound, ``op`` called (kernel name for
    ``call_tir``), ``pattern`` its op pattern kind (``""`` when unknown)."""
    name: str
    op: str
    pattern: str = ""
    is_input: bool = False
    kernel: bool = False

    @property
    def label(self) -> str:
        return self.name if self.is_input else f"{self.name} = {self.op}"


@dataclass(frozen=True)
class GraphEdge:
    """``src`` is used by ``dst``. ``fused`` is None where no fusion report speaks of the
    edge (parameters, or no report given)."""
    src: str
    dst: str
    fused: bool | None = None
    reason: str = ""
    rule: str = ""


@dataclass(frozen=True)
class GraphGroup:
    """Bindings that FuseOps puts in one function ``name``."""
    name: str
    nodes: tuple


@dataclass(frozen=True)
class Graph:
    function: str
    nodes: tuple
    edges: tuple
    groups: tuple = ()

    @property
    def bindings(self) -> tuple:
        return tuple(n for n in self.nodes if not n.is_input)

    @property
    def kernel_count(self) -> int:
        """Bindings that call a PrimFunc (``R.call_tir``): kernels launched per call."""
        return sum(1 for n in self.bindings if n.kernel)

    def group_of(self, name: str) -> str:
        return next((g.name for g in self.groups if name in g.nodes), "")


def main_function_name(mod) -> str:
    """``main`` or ``forward`` if the module has one, else its only Relax function."""
    names = [gv.name_hint for gv, f in mod.items() if isinstance(f, relax.Function)
             and not (f.attrs or {}).get("Primitive")]
    for preferred in ("main", "forward"):
        if preferred in names:
            return preferred
    if len(names) == 1:
        return names[0]
    raise MLCBenchError(f"GraphView: expected a module with a Relax function 'main' or "
                        f"'forward' (or exactly one), found {names or 'none'}")


def build_graph(mod, function: str | None = None, report=None) -> Graph:
    """The dataflow graph of ``mod[function]`` (default: :func:`main_function_name`).

    ``report`` is a ``FusionReport`` for ``mod``; its edges and groups of ``function``
    annotate the graph.

    >>> build_graph(mod).kernel_count                    # doctest: +SKIP
    7
    """
    function = function or main_function_name(mod)
    func = mod[function]
    namer = _Namer()
    known = {id(p): namer(p) for p in func.params}
    nodes = [GraphNode(known[id(p)], "input", "input", True) for p in func.params]
    edges = []
    for block in func.body.blocks:
        for binding in block.bindings:
            op, pattern, is_kernel = _describe(mod, binding.value)
            name = namer(binding.var)
            nodes.append(GraphNode(name, op, pattern, kernel=is_kernel))
            for used in dict.fromkeys(_used_vars(binding.value, known)):
                edges.append(GraphEdge(used, name))
            known[id(binding.var)] = name
    graph = Graph(function, tuple(nodes), tuple(edges))
    return _annotate(graph, report) if report is not None else graph


class _Namer:
    """Names variables as ``mod.script()`` prints them (and as the fusion report calls
    them): non-word characters become ``_``, a name taken twice gets ``1``, ``2``, ...
    appended. Parameters first, then bindings in order, as the printer defines them."""

    def __init__(self):
        self.used = {"R", "T", "I", "cls", "metadata", "tvm", "mlcbench"}

    def __call__(self, var) -> str:
        base = re.sub(r"\W", "_", var.name_hint or "v") or "v"
        if base[0].isdigit() or keyword.iskeyword(base):
            base = "v_" + base
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}{k}", k + 1
        self.used.add(name)
        return name


def _describe(mod, value) -> tuple:
    """``(op, pattern, calls a PrimFunc?)`` of a bound value."""
    if isinstance(value, relax.Call):
        op_name = getattr(value.op, "name", None)
        if op_name == "relax.call_tir":
            kernel = value.args[0].name_hint
            return kernel, _pattern_of(mod, kernel), True
        if op_name is not None:
            return op_name.removeprefix("relax."), "", False
        return getattr(value.op, "name_hint", type(value.op).__name__), "", False
    if isinstance(value, relax.Var):
        return "alias", "", False
    if isinstance(value, relax.TupleGetItem):
        return "tuple_get_item", "tuple", False
    if isinstance(value, relax.Tuple):
        return "tuple", "tuple", False
    return type(value).__name__, "", False


def _pattern_of(mod, kernel: str) -> str:
    attrs = getattr(mod[kernel], "attrs", None) or {}
    if "op_pattern" in attrs:
        return relax.op.OpPatternKind(int(attrs["op_pattern"])).name.lower()
    # FuseTIR's kernels have no pattern of their own: colour them as fused.
    return "fused" if kernel.startswith("fused_") else ""


def _used_vars(expr, known: dict):
    """Names of the parameters and earlier bindings ``expr`` reads, in order."""
    if isinstance(expr, relax.Var):
        if id(expr) in known:
            yield known[id(expr)]
    elif isinstance(expr, relax.Call):
        for arg in expr.args:
            yield from _used_vars(arg, known)
    elif isinstance(expr, relax.Tuple):
        for field in expr.fields:
            yield from _used_vars(field, known)
    elif isinstance(expr, relax.TupleGetItem):
        yield from _used_vars(expr.tuple_value, known)


def _annotate(graph: Graph, report) -> Graph:
    records = {(e.producer, e.consumer): e for e in report.edges
               if e.function == graph.function}
    edges = []
    for edge in graph.edges:
        record = records.get((edge.src, edge.dst))
        edges.append(edge if record is None else
                     GraphEdge(edge.src, edge.dst, record.fused, record.reason, record.rule))
    groups = tuple(GraphGroup(g.name, tuple(g.bindings)) for g in report.groups
                   if g.function == graph.function)
    return Graph(graph.function, graph.nodes, tuple(edges), groups)


# -- drawings ---------------------------------------------------------------------------
def _quote(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dot_node(node: GraphNode, indent: str) -> str:
    shape = "ellipse" if node.is_input else "box"
    color = PATTERN_COLORS.get(node.pattern, PATTERN_COLORS[""])
    tooltip = node.pattern or "no op pattern"
    return (f"{indent}{_quote(node.name)} [label={_quote(node.label)}, shape={shape}, "
            f"style=\"filled,rounded\", fillcolor={_quote(color)}, "
            f"tooltip={_quote(tooltip)}];")


def to_dot(graph: Graph, title: str = "") -> str:
    """Graphviz DOT source: nodes coloured by op pattern, each fused group a
    ``subgraph cluster_N``, each edge's fusion reason as its tooltip (fused edges bold,
    refused ones dashed)."""
    lines = [f"digraph {_quote(title or graph.function)} {{", "  rankdir=TB;",
             '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=8];']
    if title:
        lines.append(f"  label={_quote(title)}; labelloc=t;")
    grouped = {name for g in graph.groups for name in g.nodes}
    by_name = {n.name: n for n in graph.nodes}
    for index, group in enumerate(graph.groups):
        lines += [f"  subgraph cluster_{index} {{", f"    label={_quote(group.name)};",
                  '    style="dashed,rounded"; color="#cc0000";']
        lines += [_dot_node(by_name[n], "    ") for n in group.nodes if n in by_name]
        lines.append("  }")
    lines += [_dot_node(n, "  ") for n in graph.nodes if n.name not in grouped]
    for edge in graph.edges:
        style = {True: "bold", False: "dashed", None: "solid"}[edge.fused]
        attrs = f"style={style}"
        if edge.reason:
            attrs += f", tooltip={_quote(edge.reason)}, labeltooltip={_quote(edge.reason)}"
            attrs += f", label={_quote('fused' if edge.fused else 'not fused')}"
        lines.append(f"  {_quote(edge.src)} -> {_quote(edge.dst)} [{attrs}];")
    lines.append("}")
    return "\n".join(lines)


def _text_node(node: GraphNode, graph: Graph, indent: str) -> list:
    kind = f" [{node.pattern}]" if node.pattern else ""
    lines = [f"{indent}{node.label}{kind}"]
    for edge in graph.edges:
        if edge.dst == node.name:
            verdict = {True: "fused", False: "not fused", None: ""}[edge.fused]
            why = f": {verdict}" + (f" -- {edge.reason}" if edge.reason else "") \
                if verdict else ""
            lines.append(f"{indent}    <- {edge.src}{why}")
    return lines


def to_text(graph: Graph, title: str = "") -> str:
    """A readable drawing without graphviz: bindings in order, each with the edges into
    it (and their fusion verdicts); a fused group is a section of its own."""
    lines = [f"== {title or graph.function} =="]
    placed = set()
    for node in graph.nodes:
        if node.name in placed:
            continue
        group = graph.group_of(node.name)
        if not group:
            lines += _text_node(node, graph, "")
            placed.add(node.name)
            continue
        members = next(g.nodes for g in graph.groups if g.name == group)
        lines.append(f"+-- group {group} ({len(members)} bindings)")
        for member in (n for n in graph.nodes if n.name in members):
            lines += _text_node(member, graph, "|   ")
            placed.add(member.name)
        lines.append("+--")
    return "\n".join(lines)


def edge_table_html(graph: Graph) -> str:
    """The binding-to-binding edges with their fusion verdict and reason, as an HTML table."""
    rows = "".join(
        f"<tr><td>{html.escape(e.src)}</td><td>{html.escape(e.dst)}</td>"
        f"<td>{'yes' if e.fused else 'no'}</td><td>{html.escape(e.reason)}</td></tr>"
        for e in graph.edges if e.fused is not None)
    return ("<table><tr><th>producer</th><th>consumer</th><th>fused</th><th>reason</th></tr>"
            f"{rows}</table>")
