"""The ONNX conformance cases of the onnx wheel through ``from_onnx``, ``relax.build`` and
the VM: pass/total per directory, and why each failure failed.

Run: ``python benchmarks/onnx_conformance.py [--dirs pytorch-converted pytorch-operator
simple] [--filter SUBSTRING]``.

Each case is a directory with ``model.onnx`` and ``test_data_set_*/{input,output}_*.pb``.
A case passes when every output matches the stored one within the tolerance of onnx's
own backend tests (rtol 1e-3, atol 1e-7; with atol raised to 1e-5 for float32 sums that
reorder). A case fails at import (``unsupported``: an operator without a converter,
``import``: a converter refused), at build, or on the numbers (``mismatch``).
"""
from __future__ import annotations

import argparse
import collections
import glob
import os
import time

import numpy as np

import mlcbench
from mlcbench import relax
from mlcbench.relax.frontend.onnx import OnnxImportError, from_onnx

DIRS = ("pytorch-converted", "pytorch-operator", "simple")
RTOL, ATOL = 1e-3, 1e-5


def data_root() -> str:
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")


def case_dirs(kinds=DIRS, pattern: str = "") -> list[str]:
    found = []
    for kind in kinds:
        found += sorted(d for d in glob.glob(os.path.join(data_root(), kind, "*"))
                        if pattern in os.path.basename(d))
    return found


def load_case(case_dir: str):
    """(model, [(inputs, outputs)]) of one conformance case."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    sets = []
    for data_dir in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
        arrays = {}
        for prefix in ("input", "output"):
            files = sorted(glob.glob(os.path.join(data_dir, f"{prefix}_*.pb")),
                           key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
            arrays[prefix] = [numpy_helper.to_array(onnx.load_tensor(f)) for f in files]
        sets.append((arrays["input"], arrays["output"]))
    return model, sets


def run_case(case_dir: str) -> tuple[str, str]:
    """("pass" | "unsupported" | "import" | "build" | "mismatch", detail)."""
    model, sets = load_case(case_dir)
    try:
        mod = from_onnx(model)
    except OnnxImportError as err:
        kind = "unsupported" if "unsupported operator" in str(err) else "import"
        return kind, str(err).splitlines()[0][:200]
    try:
        vm = relax.VirtualMachine(relax.build(mod, "llvm"), mlcbench.cpu())
    except Exception as err:   # a build failure is a finding to report, not a crash
        return "build", f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"
    for inputs, expected in sets:
        got = vm["main"](*(mlcbench.nd.array(np.ascontiguousarray(a)) for a in inputs))
        got = [g.numpy() for g in (got if isinstance(got, (list, tuple)) else [got])]
        for k, (g, e) in enumerate(zip(got, expected)):
            if g.shape != e.shape or not np.allclose(g, e, rtol=RTOL, atol=ATOL, equal_nan=True):
                err = np.abs(g - e).max() if g.shape == e.shape else "shape"
                return "mismatch", f"output {k}: shape {g.shape} vs {e.shape}, max err {err}"
    return "pass", ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dirs", nargs="*", default=list(DIRS))
    parser.add_argument("--filter", default="")
    args = parser.parse_args()
    results = collections.defaultdict(list)
    start = time.perf_counter()
    for case in case_dirs(args.dirs, args.filter):
        kind = os.path.basename(os.path.dirname(case))
        status, detail = run_case(case)
        results[kind].append((os.path.basename(case), status, detail))
        print(f"{kind}/{os.path.basename(case):<48}{status:<12}{detail}", flush=True)
    print()
    for kind, rows in results.items():
        passed = sum(s == "pass" for _, s, _ in rows)
        counts = collections.Counter(s for _, s, _ in rows)
        print(f"{kind:<20}{passed:>4}/{len(rows):<4} {dict(counts)}")
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
