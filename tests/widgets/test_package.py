"""The UI layer's boundary: it uses mlcbench's public API only, and the core never
imports it; importing the package does not load ipywidgets or matplotlib."""
import ast
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
WIDGETS = sorted((ROOT / "widgets" / "mlcbench_widgets").glob("*.py"))

# The public modules the widgets may import (documented in docs/ and API.md).
PUBLIC = {"mlcbench", "mlcbench.ir", "mlcbench.ir.instrument", "mlcbench.ir.transform",
          "mlcbench.tir", "mlcbench.tir.transform", "mlcbench.script",
          "mlcbench.runtime.timing",      # the timing protocol every printed figure follows
          "mlcbench.runtime.machine_peaks",   # the peaks every GFLOPS figure is set against
          "mlcbench.driver.machine_peaks"}    # and their measurement


def imported(path: pathlib.Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", WIDGETS, ids=lambda p: p.name)
def test_widgets_import_only_public_mlcbench_modules(path):
    private = sorted(m for m in imported(path) if m.split(".")[0] == "mlcbench"
                     and m not in PUBLIC)
    assert not private, f"{path.name} imports non-public mlcbench modules {private}"


def test_core_never_imports_the_widgets():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "mlcbench").rglob("*.py")
                 if "mlcbench_widgets" in p.read_text(encoding="utf-8")]
    assert not offenders


def test_importing_the_package_loads_no_ui_library():
    code = ("import sys, mlcbench_widgets; "
            "print(sorted(m for m in ('ipywidgets', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
