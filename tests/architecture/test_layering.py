"""Imports flow downward only, and no module imports itself back through others.

The layers, lowest first, are listed in LAYERS (and in docs/architecture.md). Imports
inside functions count too, except the few in LAZY_UPWARD, each with its reason.

Import cycles are checked on the imports that run when a module is imported (not those
inside functions). Importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py``
first, so a module importing ``a.b.c`` also depends on the packages ``a`` and ``a.b``,
unless it lies inside them (its own packages are already being imported).
"""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "mlcbench"

LAYERS = [
    ("foundation", ["mlcbench.ir", "mlcbench.runtime", "mlcbench.testing",
                    "mlcbench.datasets"]),
    ("tensor IR nodes and analysis", ["mlcbench.tir.expr", "mlcbench.tir.stmt",
                                      "mlcbench.tir.buffer", "mlcbench.tir.function",
                                      "mlcbench.tir.functor", "mlcbench.tir.op",
                                      "mlcbench.arith", "mlcbench.tir.analysis"]),
    ("codegen", ["mlcbench.target", "mlcbench.codegen"]),
    ("script", ["mlcbench.script"]),
    ("tensor IR passes and schedules", ["mlcbench.tir"]),
    ("tensor expressions and operators", ["mlcbench.te", "mlcbench.topi"]),
    ("default schedules", ["mlcbench.dlight"]),
    ("graph IR", ["mlcbench.relax"]),
    ("tuning", ["mlcbench.meta_schedule", "mlcbench.autotvm"]),
    ("Relay-era facade", ["mlcbench.contrib", "mlcbench.relay"]),
    ("drivers", ["mlcbench.driver", "mlcbench.__main__", "mlcbench"]),
]

LAZY_UPWARD = {
    # TVMScript text may spell names as ``tvm.tir.max``: the parser resolves them
    # against the public namespace, imported when parsing text, never at import time.
    ("mlcbench.script.parser.entry", "mlcbench"),
    # ``from mlcbench.script import relax as R`` is TVM's spelling; the R names live with
    # the graph IR and are looked up on first use.
    ("mlcbench.script.relax", "mlcbench.relax.tvmscript.namespace"),
}

UI_LIBRARIES = ("ipywidgets", "matplotlib", "graphviz", "IPython")


def layer_of(module: str) -> int:
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best


def module_name(path: pathlib.Path, root: pathlib.Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _import_time_nodes(tree: ast.Module):
    """The ids of the statements that run when the module is imported.

    Function bodies run later; ``if TYPE_CHECKING:`` bodies never run.
    """
    found, pending = set(), list(tree.body)
    while pending:
        node = pending.pop()
        found.add(id(node))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
            continue
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) or isinstance(child, ast.excepthandler):
                pending.append(child)
    return found


def imported_modules(path: pathlib.Path, root: pathlib.Path = ROOT):
    """(line, imported module, at import time?) for every import in ``path``."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    eager = _import_time_nodes(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, id(node) in eager
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                resolved = sub if _is_module(sub, root) else target
                yield node.lineno, resolved, id(node) in eager


def _is_module(dotted: str, root: pathlib.Path = ROOT) -> bool:
    path = root.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def import_graph(package_dir: pathlib.Path):
    """Module -> {(module it needs at import time, line)}, packages' ``__init__`` included."""
    root = package_dir.parent
    top = package_dir.name
    graph = {}
    for path in sorted(package_dir.rglob("*.py")):
        name = module_name(path, root)
        edges = graph.setdefault(name, set())
        own = name.split(".")
        for line, target, eager in imported_modules(path, root):
            if not eager or not (target == top or target.startswith(top + ".")):
                continue
            parts = target.split(".")
            for depth in range(1, len(parts) + 1):
                needed = ".".join(parts[:depth])
                if parts[:depth] != own[:depth] and _is_module(needed, root):
                    edges.add((needed, line))
    return graph


def import_cycles(graph):
    """Each strongly connected group of two or more modules, as one cycle through it."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(start):
        # Tarjan's algorithm, iterative: the package is deeper than Python's recursion.
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target, _ in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_one_cycle(graph, group) for group in groups]


def _one_cycle(graph, group):
    """A path ``a -> b (line n) -> ... -> a`` inside a strongly connected ``group``."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for target, line in sorted(graph[node]):
            if target == start:
                return " -> ".join(paths[node] + [f"{start} (line {line})"])
            if target in group and target not in paths:
                paths[target] = paths[node] + [f"{target} (line {line})"]
                frontier.append(target)
    raise AssertionError(f"no cycle through {start}")


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_flow_downward(path):
    own = layer_of(module_name(path))
    upward = [f"line {line}: {target} ({LAYERS[layer_of(target)][0]})"
              for line, target, top in imported_modules(path)
              if target.startswith("mlcbench") and layer_of(target) > own
              and (top or (module_name(path), target) not in LAZY_UPWARD)]
    assert not upward, (f"{module_name(path)} ({LAYERS[own][0]}) imports a higher layer:\n"
                        + "\n".join(upward))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_core_never_imports_ui_libraries_at_import_time(path):
    offenders = [f"line {line}: {target}" for line, target, top in imported_modules(path)
                 if top and target.split(".")[0] in UI_LIBRARIES]
    assert not offenders, f"{module_name(path)} imports UI libraries at import time: {offenders}"


def test_no_import_cycles():
    cycles = import_cycles(import_graph(PACKAGE))
    assert not cycles, "import cycles (each line one cycle, lines of the import):\n" + \
        "\n".join(cycles)


def _plant(root: pathlib.Path, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_a_planted_cycle_through_a_package_init_is_found(tmp_path):
    # low.py needs pkg.upper.nodes, whose package __init__ imports pkg.upper.passes,
    # which needs low.py back: a cycle no single file shows.
    package = _plant(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "from .upper.nodes import Node\n",
        "pkg/upper/__init__.py": "from . import passes\n",
        "pkg/upper/nodes.py": "class Node: pass\n",
        "pkg/upper/passes.py": "from ..low import Node\n",
    })
    cycles = import_cycles(import_graph(package))
    assert cycles == ["pkg.low -> pkg.upper (line 1) -> pkg.upper.passes (line 1) "
                      "-> pkg.low (line 1)"]


def test_imports_inside_functions_and_type_checking_make_no_cycle(tmp_path):
    package = _plant(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                    "    from .b import B\n",
        "pkg/b.py": "def f():\n    from .a import A\n",
        "pkg/c.py": "try:\n    from .d import D\nexcept ImportError:\n    D = None\n",
        "pkg/d.py": "from .c import D\n",
    })
    assert import_cycles(import_graph(package)) == [
        "pkg.c -> pkg.d (line 2) -> pkg.c (line 1)"]
