"""The CPU-GEMM schedule of ``benchmarks/matmul_schedule.py`` with B packed into
32-wide panels by ``cache_read`` + ``transform_layout``: the packing runs once per call
(before the parallel tile loop), the K loop reads the panels, the 8 x 32 accumulator
stays in registers, and the result matches numpy."""
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from mlcbench import te
from mlcbench.tir.stmt import For
from mlcbench.tir.schedule.ir_utils import as_seq_list
from helpers.schedule_testing import check_trace_roundtrip, run

_PATH = pathlib.Path(__file__).resolve().parents[3] / "benchmarks" / "matmul_schedule.py"
sys.path.insert(0, str(_PATH.parent))   # the benchmark imports its sibling timing.py
_SPEC = importlib.util.spec_from_file_location("matmul_schedule", _PATH)
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)

N = 64


def _plain_matmul(n):
    a, b = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return te.create_prim_func([a, b, c])


def test_packing_runs_once_before_the_parallel_tiles():
    sch = bench.schedule_matmul(N, packed=True)
    func = sch.mod["main"]
    first, kernel = as_seq_list(func.body.block.body)
    assert isinstance(first, For) and first.kind.name == "PARALLEL"
    assert first.body.body.body.block.name_hint == "B_global"
    assert [tuple(int(s.value) for s in b.shape) for b in func.body.block.alloc_buffers
            if b.name == "B_global"] == [(N // bench.TILE_COLS, N, bench.TILE_COLS)]
    update = sch.get(sch.get_block("C_update"))
    assert "B_global" in [r.buffer.name for r in update.reads]
    assert isinstance(kernel, For) and kernel.kind.name == "PARALLEL"


def test_packed_schedule_matches_numpy_and_keeps_the_register_tile():
    import mlcbench
    sch = bench.schedule_matmul(N, packed=True)
    rng = np.random.default_rng(1)
    a, b = rng.random((N, N), dtype="float32"), rng.random((N, N), dtype="float32")
    c = run(sch.mod["main"], [a, b, np.zeros((N, N), "float32")])[-1]
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)
    lib = mlcbench.build(sch.mod, target="llvm")
    assert "none on the stack" in bench.check_register_tile(sch, lib)


def test_packed_schedule_replays_from_its_trace():
    sch = bench.schedule_matmul(N, packed=True)
    check_trace_roundtrip(_plain_matmul(N), sch)


@pytest.mark.parametrize("ahead", [0, 4])
def test_register_tile_probe_computes_the_repeated_product(monkeypatch, ahead):
    from mlcbench.driver.build import build
    from mlcbench.script import from_source
    monkeypatch.setattr(bench, "TILE_PROBE_STEPS", 512)
    depth = 128                                     # the panel walked 512 // 128 = 4 times
    lib = build(from_source(bench.register_tile_kernel(depth, ahead)), target=bench.target(1))
    rng = np.random.default_rng(2)
    a = rng.random((bench.TILE_ROWS, depth), dtype="float32")
    b = rng.random((depth, bench.TILE_COLS), dtype="float32")
    c = np.full((bench.TILE_ROWS, bench.TILE_COLS), np.nan, "float32")
    lib["tile"](a, b, c)
    np.testing.assert_allclose(c, 4 * (a @ b), rtol=1e-4)


def test_register_tile_probe_keeps_the_znver4_tile_in_zmm_registers():
    from mlcbench.driver.build import build, lower
    from mlcbench.script import from_source
    bench.configure("znver4")
    try:
        assert (bench.TILE_ROWS, bench.TILE_COLS) == (8, 32)
        mod = from_source(bench.register_tile_kernel(1024))
        assert 'T.allocate([256], "float32", "local")' in lower(mod).script()
        asm = build(mod, target=bench.target(1)).get_source("asm")   # built, not run
    finally:
        bench.configure(None)
    fmas = [line for line in asm.splitlines() if "vfmadd" in line]
    assert len(fmas) >= 16 and all("zmm" in line and "rsp" not in line for line in fmas)
