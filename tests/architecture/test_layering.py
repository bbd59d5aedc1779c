"""Imports flow downward only: a module may import its own layer and the layers below.

The layers, lowest first, are listed in LAYERS (and in docs/architecture.md). Imports
inside functions count too, except the few in LAZY_UPWARD, each with its reason.
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


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: pathlib.Path):
    """(line, imported module, at module level?) for every mlcbench import in ``path``."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top_level = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, id(node) in top_level
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                resolved = sub if _is_module(sub) else target
                yield node.lineno, resolved, id(node) in top_level


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


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
