"""Run the published MLC course notebooks' code cells with mlcbench in place of TVM.

A learner arrives with the course's notebooks (github.com/mlc-ai/notebooks) and types
``import mlcbench as tvm``. This tool does the same for every chapter: it rewrites each
code cell's ``tvm`` imports (``import tvm`` -> ``import mlcbench as tvm``,
``from tvm.script import tir`` -> ``from mlcbench.script import tir``), runs the cells in
order in one namespace, in a fresh subprocess per chapter and a scratch working folder,
and reports per chapter how many cells ran and, for each failing cell, the error.

As Jupyter does, a cell's last expression is shown (its ``repr``, so a printer failure
counts) and ``from __future__ import annotations`` stays in force for later cells.
Shell lines (``!pip install``, ``!nvidia-smi``) are not run. Two cells download data;
they get stand-ins built from ``datasets/`` (nothing is downloaded):

* ``!wget .../fasionmnist_mlp_params.pkl``: the course's 784-128-10 MLP weights. The
  stand-in is the digits MLP of ``datasets/mlp_digits.npz`` spread over a 28x28 image
  (each 8x8 pixel becomes a 3x3 patch, two pixels of margin), so it computes exactly
  ``mlcbench.datasets.mlp_forward`` on the digit it was made from;
* ``torchvision.datasets.FashionMNIST(...)``: one test digit, drawn that way, with the
  digit names as ``class_names``.
Predictions are therefore digits, not clothes; the code paths are the course's.

Usage::

    python notebooks/tools/run_course_cells.py COURSE [--chapter N ...] [-v]

``COURSE`` is a folder of the course's ``.ipynb`` files or a git clone (bare or not) of
mlc-ai/notebooks. Exit status 0 when every chapter was run (cells may fail), 2 on bad
arguments.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import pathlib
import pickle
import re
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAPTER_FILE = re.compile(r"^(\d)_.*\.ipynb$")
PARAMS_FILE = "fasionmnist_mlp_params.pkl"
CHAPTER_TIMEOUT_S = 900

_IMPORT_TVM = re.compile(r"^(\s*)import tvm(\s*(#.*)?)$", re.M)
_IMPORT_TVM_AS = re.compile(r"^(\s*)import tvm(\.[\w.]+)?\s+as\s+", re.M)
_FROM_TVM = re.compile(r"^(\s*)from tvm(\.[\w.]+)?\s+import\s", re.M)

STAND_IN_IMAGE = '''\
import numpy as np
from mlcbench.datasets import load_digits
_x_test, _y_test = load_digits()[2:]
img = np.zeros((1, 28, 28), "float32")
img[0, 2:26, 2:26] = np.kron(_x_test[0, 0], np.ones((3, 3), "float32"))
label = np.array([int(_y_test[0])])
class_names = [str(d) for d in range(10)]
'''


def learner_imports(src: str) -> str:
    """``tvm`` imports as a learner rewrites them for mlcbench."""
    src = _IMPORT_TVM.sub(r"\1import mlcbench as tvm\2", src)
    src = _IMPORT_TVM_AS.sub(lambda m: f"{m[1]}import mlcbench{m[2] or ''} as ", src)
    return _FROM_TVM.sub(lambda m: f"{m[1]}from mlcbench{m[2] or ''} import ", src)


def stand_in_params() -> dict:
    """The digits MLP's weights laid out for a 28x28 image (see the module docstring)."""
    import numpy as np
    from mlcbench.datasets import load_mlp_params
    params = load_mlp_params()
    w0 = params["w0"].reshape(-1, 8, 8) / 9.0
    big = np.zeros((w0.shape[0], 28, 28), "float32")
    big[:, 2:26, 2:26] = np.kron(w0, np.ones((3, 3), "float32"))
    return {"w0": big.reshape(w0.shape[0], 784), "b0": params["b0"],
            "w1": params["w1"], "b1": params["b1"]}


def prepare_cell(src: str) -> tuple[str, str]:
    """(code to run, note): shell lines dropped, downloads replaced by stand-ins."""
    note = ""
    if "torchvision.datasets.FashionMNIST" in src:
        # the cell's other imports (``import torch``) stay: later cells use them
        imports = [line for line in src.splitlines() if line.startswith(("import ", "from "))
                   and "torchvision" not in line]
        return "\n".join(imports + [STAND_IN_IMAGE]), "stand-in: a digit from datasets/digits.npz"
    kept = []
    for line in src.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("!", "%")):
            if PARAMS_FILE in stripped:
                with open(PARAMS_FILE, "wb") as f:
                    pickle.dump(stand_in_params(), f)
                note = "stand-in: digits MLP weights from datasets/mlp_digits.npz"
            else:
                note = note or f"shell line not run: {stripped[:60]}"
            continue
        kept.append(line)
    return learner_imports("\n".join(kept)), note


def run_cell(src: str, path: pathlib.Path, ns: dict, flags: int) -> None:
    """Execute like Jupyter: the statements, then show the last expression's repr."""
    path.write_text(src)
    tree = ast.parse(src, str(path))
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, str(path), "exec", flags=flags, dont_inherit=True), ns)
    if last is not None:
        value = eval(compile(last, str(path), "eval", flags=flags, dont_inherit=True), ns)
        if value is not None:
            repr(value)


def error_line(exc: BaseException) -> str:
    """The failing cell line (cell-relative) and the error, on one line."""
    where = ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if pathlib.Path(frame.filename).name.startswith("cell_"):
            where = f"line {frame.lineno}: "
            break
    text = " ".join(str(exc).split())
    return f"{where}{type(exc).__name__}: {text[:400]}"


def run_chapter_here(notebook: pathlib.Path, verbose: bool) -> list[dict]:
    """Run one chapter's cells in this process (cwd is the scratch folder)."""
    import __future__
    import contextlib
    import io
    import matplotlib
    import nbformat
    matplotlib.use("Agg")
    cells = [c.source for c in nbformat.read(str(notebook), as_version=4).cells
             if c.cell_type == "code"]
    ns: dict = {"__name__": "__main__"}
    flags, results = 0, []
    for index, raw in enumerate(cells):
        if "from __future__ import annotations" in raw:
            flags |= __future__.annotations.compiler_flag
        src, note = prepare_cell(raw.replace("from __future__ import annotations", ""))
        started = time.perf_counter()
        entry = {"cell": index, "note": note}
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                run_cell(src, pathlib.Path(f"cell_{index}.py"), ns, flags)
            entry["ok"] = True
        except BaseException as exc:  # noqa: BLE001  (a cell may raise anything)
            entry.update(ok=False, error=error_line(exc))
            if verbose:
                traceback.print_exc(file=sys.stderr)
        entry["seconds"] = round(time.perf_counter() - started, 2)
        results.append(entry)
    return results


def course_notebooks(course: pathlib.Path, scratch: pathlib.Path) -> dict[int, pathlib.Path]:
    """Chapter number -> notebook file; a git clone's HEAD is copied into ``scratch``."""
    if any(course.glob("*.ipynb")):
        files = {p.name: p for p in course.glob("*.ipynb")}
    else:
        names = subprocess.run(["git", "--git-dir", str(_git_dir(course)), "ls-tree",
                                "--name-only", "HEAD"], check=True, capture_output=True,
                               text=True).stdout.split()
        files = {}
        for name in names:
            if CHAPTER_FILE.match(name):
                blob = subprocess.run(["git", "--git-dir", str(_git_dir(course)), "show",
                                       f"HEAD:{name}"], check=True, capture_output=True)
                (scratch / name).write_bytes(blob.stdout)
                files[name] = scratch / name
    return {int(CHAPTER_FILE.match(n)[1]): p for n, p in files.items() if CHAPTER_FILE.match(n)}


def _git_dir(course: pathlib.Path) -> pathlib.Path:
    return course / ".git" if (course / ".git").exists() else course


def run_chapter(notebook: pathlib.Path, verbose: bool) -> list[dict]:
    """Run one chapter in a fresh interpreter and scratch folder."""
    with tempfile.TemporaryDirectory(prefix="course_") as scratch:
        cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--child",
               str(notebook.resolve())] + (["-v"] if verbose else [])
        env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}" + os.environ.get("PYTHONPATH", ""))
        try:
            proc = subprocess.run(cmd, cwd=scratch, capture_output=True, text=True,
                                  timeout=CHAPTER_TIMEOUT_S, env=env)
        except subprocess.TimeoutExpired:
            return [{"cell": -1, "ok": False, "note": "",
                     "error": f"chapter ran past {CHAPTER_TIMEOUT_S} s"}]
        if verbose:
            sys.stderr.write(proc.stderr)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            tail = " ".join(proc.stderr.split()[-40:])
            return [{"cell": -1, "ok": False, "note": "",
                     "error": f"interpreter exited {proc.returncode}: {tail}"}]
        return json.loads(lines[-1])


def report(chapter: int, results: list[dict], seconds: float) -> str:
    """One chapter's summary line and its failing / noted cells."""
    ran = sum(r["ok"] for r in results)
    head = f"chapter {chapter}: {ran}/{len(results)} cells ran ({seconds:.0f} s"
    slowest = max(results, key=lambda r: r.get("seconds", 0))
    if slowest.get("seconds", 0) >= 1:
        head += f"; slowest: cell {slowest['cell']}, {slowest['seconds']:.0f} s"
    out = [head + ")"]
    for r in results:
        if not r["ok"]:
            out.append(f"  cell {r['cell']}: FAIL {r['error']}")
        elif r["note"]:
            out.append(f"  cell {r['cell']}: ok ({r['note']})")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("course", type=pathlib.Path, help="folder or git clone of mlc-ai/notebooks")
    parser.add_argument("--chapter", type=int, action="append", help="run only these chapters")
    parser.add_argument("-v", action="store_true", help="print tracebacks of failing cells")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_chapter_here(args.course, args.v)))
        return 0
    with tempfile.TemporaryDirectory(prefix="course_nb_") as scratch:
        chapters = course_notebooks(args.course, pathlib.Path(scratch))
        if not chapters:
            parser.error(f"no chapter notebooks (N_*.ipynb) found in {args.course}")
        for chapter in sorted(args.chapter or chapters):
            if chapter not in chapters:
                parser.error(f"chapter {chapter} not found; chapters: {sorted(chapters)}")
            started = time.perf_counter()
            results = run_chapter(chapters[chapter], args.v)
            print(report(chapter, results, time.perf_counter() - started), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
