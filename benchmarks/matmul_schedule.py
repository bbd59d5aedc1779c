"""A CPU-GEMM-scheduled 1024^3 fp32 matmul against numpy and against the FMA peak.

The first rows are the default schedule (``dlight``'s Matmul rule on the plain
``topi.nn.matmul``); the next come from ``schedule_matmul``: the same schedule applied to the plain
``te`` matmul with Schedule primitives (split / reorder into a register tile, 8 x 32 with AVX-512,
``cache_write(C, 0, "local")`` + ``reverse_compute_at``, ``decompose_reduction``,
``unroll`` / ``vectorize``, ``parallel`` on the fused outer loops); then the same schedule
with B packed into tile-wide panels by primitives (``cache_read(C_update, "B", "global")``
at the start of the function, ``transform_layout`` to ``(j // 32, k, j % 32)`` (16 on AVX2), the
packing loop parallel and vectorized). The packed trace is printed, and the lowered IR
and assembly of both are checked to keep the tile in vector registers.

Run: ``python benchmarks/matmul_schedule.py [--n 1024] [--rounds 5] [--tvm-python PATH]
[--mcpu CPU] [--tile-only]`` (``--tvm-python``: a Python with apache-tvm installed; adds Apache TVM's
figures for the same schedule, see ``tvm_matmul.py``; ``--mcpu haswell``: every kernel,
the peak's included, built for that CPU and run on this host, e.g. AVX2 code on an
AVX-512 host, whose ymm FMAs a Zen 4 issues at the rate of its zmm ones).

The kernels are written in the form TVM's schedule prints for the classic CPU GEMM
schedule: ``cache_write(C, "local")`` at the root with the full shape, outer i/j tiles
fused and ``T.parallel``, a K loop, a register tile (``T.unroll`` rows,
``T.vectorized`` columns: two vectors per row; 8 x 32 with 16 zmm accumulators on
AVX-512, 4 x 16 with 8 ymm accumulators on AVX2), the init decomposed before the K
loop and the write-back ``reverse_compute_at`` after it; optionally B packed into
tile-wide panels (``B_packed[j0, k, j1]``, the cache_read + transform_layout idea).
Lowering moves the accumulator into the parallel loop at the tile's size
(``CompactBufferAllocation``) and LLVM keeps it in registers.

The last table runs the register tile alone on one thread (``register_tile_kernel``): the
same loop over A's rows and one packed panel of B, the panel 128, 1024 or 4096 rows deep
(in L1, in L2 as in the 1024^3 product, and deeper), walked again and again, each depth
plain and with the panel prefetched 4 rows ahead. Its share of the peak tells where the
full product's share is lost: in the tile's loop itself, or in feeding it from L2.

The FMA peak comes from a TVMScript kernel of independent one-register accumulators
(24 zmm on AVX-512, 12 ymm on AVX2)
updated in an unrolled loop (``acc = acc * x + y``), on one core and on all cores.
Timings drift on this machine (other work shares both cores): each figure is the best
of several interleaved rounds, numpy's ``a @ b`` and the peak kernel on as many threads
measured in the same rounds. On a 2-vCPU Cascade Lake VM the peak measured 220 to 300
GFLOPS minutes apart; against the peak of the same rounds a kernel's share holds still.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess

os.environ.setdefault("GOMP_SPINCOUNT", "10000")   # before libgomp loads: see parallel.py

import numpy as np  # noqa: E402

from mlcbench import dlight, te, topi  # noqa: E402
from mlcbench.driver.build import build  # noqa: E402
from mlcbench.ir import IRModule  # noqa: E402
from mlcbench.driver.kernels import register_tile, tiled_matmul_schedule  # noqa: E402
from mlcbench.script import from_source  # noqa: E402
from mlcbench.target import Target  # noqa: E402
from mlcbench.runtime.timing import compare as compare_rounds  # noqa: E402
from timing import call, compare, kernel  # noqa: E402

# The hand-written register tile (``driver.kernels.register_tile``) fits the CPU the
# kernels are built for: two vector registers wide, accumulators in half of the register
# file (8 x 32 on AVX-512's 32 zmm registers, 4 x 16 on AVX2's 16 ymm). That CPU is the
# host's, or ``--mcpu``'s (``haswell``: AVX2 code, run on this host; see :func:`configure`).
MCPU = ""


def target(cores: int) -> Target:
    return Target(f"llvm{MCPU} --num-cores={cores}")


def configure(mcpu: str | None) -> None:
    """Size the register tile and the peak kernel for ``mcpu`` (the host's CPU if None)."""
    global MCPU, LANES, TILE_ROWS, TILE_COLS, VECTOR_REGISTER, PEAK_ACCUMULATORS, PEAK_LANES
    MCPU = f" -mcpu={mcpu}" if mcpu else ""
    built_for = target(1)
    LANES = built_for.vector_lanes(32)
    TILE_ROWS, TILE_COLS = register_tile(built_for)
    VECTOR_REGISTER = {16: "zmm", 8: "ymm"}.get(LANES, "xmm")
    PEAK_ACCUMULATORS, PEAK_LANES = built_for.vector_registers * 3 // 4, LANES


PEAK_ITERS = 200_000
configure(None)


def scheduled_matmul(n: int = 1024, packed: bool = True) -> str:
    """TVMScript of the scheduled matmul (``n`` a multiple of ``TILE_COLS``)."""
    tiles_j, w = n // TILE_COLS, TILE_COLS
    b_read = f"B_packed[vj // {w}, vk, vj % {w}]" if packed else "B[vk, vj]"
    pack = f'''
    for ax0 in T.parallel({tiles_j}):
        for ax1 in range({n}):
            for ax2 in T.vectorized({w}):
                with T.block("B_packed"):
                    v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                    B_packed[v0, v1, v2] = B[v1, v0 * {w} + v2]''' if packed else ""
    alloc = f'B_packed = T.alloc_buffer(({tiles_j}, {n}, {w}))' if packed else ""
    return f'''
@T.prim_func
def matmul(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"global_symbol": "matmul", "tir.noalias": True}})
    C_local = T.alloc_buffer(({n}, {n}), scope="local")
    {alloc}{pack}
    for i_0_j_0_fused in T.parallel({n // TILE_ROWS * tiles_j}):
        for i_1_init in T.unroll({TILE_ROWS}):
            for j_1_init in T.vectorized({TILE_COLS}):
                with T.block("C_init"):
                    vi = T.axis.spatial({n}, i_0_j_0_fused // {tiles_j} * {TILE_ROWS} + i_1_init)
                    vj = T.axis.spatial({n}, i_0_j_0_fused % {tiles_j} * {TILE_COLS} + j_1_init)
                    C_local[vi, vj] = T.float32(0)
        for k in range({n}):
            for i_1 in T.unroll({TILE_ROWS}):
                for j_1 in T.vectorized({TILE_COLS}):
                    with T.block("C_update"):
                        vi = T.axis.spatial({n}, i_0_j_0_fused // {tiles_j} * {TILE_ROWS} + i_1)
                        vj = T.axis.spatial({n}, i_0_j_0_fused % {tiles_j} * {TILE_COLS} + j_1)
                        vk = T.axis.reduce({n}, k)
                        C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * {b_read}
        for ax0 in range({TILE_ROWS}):
            for ax1 in T.vectorized({TILE_COLS}):
                with T.block("C_local"):
                    v0 = T.axis.spatial({n}, i_0_j_0_fused // {tiles_j} * {TILE_ROWS} + ax0)
                    v1 = T.axis.spatial({n}, i_0_j_0_fused % {tiles_j} * {TILE_COLS} + ax1)
                    C[v0, v1] = C_local[v0, v1]
'''


def fma_peak_kernel(cores: int) -> str:
    """``cores`` threads, each updating 24 independent 16-lane accumulators."""
    acc, lanes = PEAK_ACCUMULATORS, PEAK_LANES
    return f'''
@T.prim_func
def fma_peak(X: T.Buffer((2, {lanes}), "float32"),
             Out: T.Buffer(({cores}, {acc}, {lanes}), "float32")):
    T.func_attr({{"global_symbol": "fma_peak", "tir.noalias": True}})
    for p in T.parallel({cores}):
        with T.block("thread"):
            acc = T.alloc_buffer(({acc}, {lanes}), scope="local")
            for r in T.unroll({acc}):
                for l in T.vectorized({lanes}):
                    acc[r, l] = X[1, l] + T.float32(r)
            for it in range({PEAK_ITERS}):
                for r in T.unroll({acc}):
                    for l in T.vectorized({lanes}):
                        acc[r, l] = acc[r, l] * X[0, l] + X[1, l]
            for r in T.unroll({acc}):
                for l in T.vectorized({lanes}):
                    Out[p, r, l] = acc[r, l]
'''


def schedule_matmul(n: int = 1024, packed: bool = False):
    """The same kernel made by Schedule primitives from the plain ``te`` matmul
    (``mlcbench.driver.kernels.tiled_matmul_schedule``, the demo's schedule).

    ``packed=True`` adds ``cache_read`` of B (placed at the start of the function, so it
    runs once per call) re-laid out by ``transform_layout`` into ``TILE_COLS``-wide
    panels ``B_global[j // TILE_COLS, k, j % TILE_COLS]``; the packing loops are parallel and vectorized.
    Returns the Schedule; ``print(sch.trace)`` shows the steps as Python."""
    sch = tiled_matmul_schedule(n, TILE_ROWS, TILE_COLS)
    if packed:
        _pack_b(sch, sch.get_block("C_update"))
    return sch


def _pack_b(sch, block) -> None:
    """B -> panels of ``TILE_COLS`` columns, once per call, read by ``block`` (the K-loop update)."""
    pack = sch.cache_read(block, "B", "global")
    sch.transform_layout(pack, ("write", 0), lambda k, j: (j // TILE_COLS, k, j % TILE_COLS))
    rows, cols = sch.get_loops(pack)
    panel, col = sch.split(cols, factors=[None, TILE_COLS])
    sch.reorder(panel, rows, col)
    sch.parallel(panel)
    sch.vectorize(col)


def check_register_tile(sch, lib) -> str:
    """The lowered accumulator is the register tile, and the K loop keeps it in vector
    registers (FMAs on zmm / ymm, no stack traffic between them)."""
    from mlcbench.driver.build import lower
    lowered = lower(sch.mod).script()
    tile = f'T.allocate([{TILE_ROWS * TILE_COLS}], "float32", "local")'
    if tile not in lowered:
        raise AssertionError(f"expected the local accumulator {tile} in the lowered IR")
    asm = lib.get_source("asm")
    fmas = [line for line in asm.splitlines() if "vfmadd" in line and VECTOR_REGISTER in line]
    spills = [line for line in fmas if "rsp" in line]
    if len(fmas) < 2 * TILE_ROWS or spills:
        raise AssertionError(f"expected >= {2 * TILE_ROWS} {VECTOR_REGISTER} FMAs without stack operands, "
                             f"found {len(fmas)} ({len(spills)} on the stack)")
    return f"lowered tile {tile}; {len(fmas)} {VECTOR_REGISTER} FMAs, none on the stack"


# Panel depths of the register-tile probe (``tile_rows``): A's rows and B's panel in L1 (128
# rows: 20 KB with AVX-512's 8 x 32 tile), then in L2 (1024 rows, as in a 1024^3 product:
# 160 KB; 4096 rows: 640 KB).
TILE_PROBE_DEPTHS = (128, 1024, 4096)
# Multiply-adds per tile element and call of the probe (the panel walked again and again).
TILE_PROBE_STEPS = 1 << 18
# Each depth runs plain and with the panel prefetched this many rows ahead.
TILE_PROBE_AHEAD = 4


def register_tile_kernel(depth: int, ahead: int = 0) -> str:
    """TVMScript of the matmul's register tile alone, on one thread: ``C += A @ B`` for a
    ``TILE_ROWS x depth`` block of A and a ``depth x TILE_COLS`` packed panel of B, the
    panel walked ``TILE_PROBE_STEPS // depth`` times with the accumulators kept. What it
    reaches of the peak is what the tile's loop can give with its operands at that
    depth of the cache hierarchy. ``ahead > 0``: the k loop prefetches the panel that
    many rows ahead (``pragma_prefetch_ahead``, as the Matmul rule does on Skylake-SP)."""
    rows, cols, repeat = TILE_ROWS, TILE_COLS, TILE_PROBE_STEPS // depth
    k_loop = (f'T.serial({depth}, annotations={{"pragma_prefetch_ahead": {ahead}}})'
              if ahead else f"range({depth})")
    return f'''
@T.prim_func
def tile(A: T.Buffer(({rows}, {depth}), "float32"), B: T.Buffer(({depth}, {cols}), "float32"),
         C: T.Buffer(({rows}, {cols}), "float32")):
    T.func_attr({{"global_symbol": "tile", "tir.noalias": True}})
    C_local = T.alloc_buffer(({rows}, {cols}), scope="local")
    for i in T.unroll({rows}):
        for j in T.vectorized({cols}):
            with T.block("C_init"):
                vi, vj = T.axis.remap("SS", [i, j])
                C_local[vi, vj] = T.float32(0)
    for r in range({repeat}):
        for k in {k_loop}:
            for i in T.unroll({rows}):
                for j in T.vectorized({cols}):
                    with T.block("C_update"):
                        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                        C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
    for i in T.unroll({rows}):
        for j in T.vectorized({cols}):
            with T.block("C_local"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = C_local[vi, vj]
'''


def tile_rows(rounds: int) -> list[dict]:
    """The register tile alone at each of ``TILE_PROBE_DEPTHS`` on one thread, the peak
    kernel in the same rounds: where the full product's share of the peak is lost, in
    the tile's loop itself (the panel in L1) or in feeding it from L2."""
    rng = np.random.default_rng(0)
    peak_timer, peak_flops = _peak_contender(1)
    rows = []
    for depth, ahead in [(d, ahead) for d in TILE_PROBE_DEPTHS for ahead in (0, TILE_PROBE_AHEAD)]:
        a = rng.random((TILE_ROWS, depth), dtype="float32")
        b = rng.random((depth, TILE_COLS), dtype="float32")
        c = np.zeros((TILE_ROWS, TILE_COLS), "float32")
        lib = build(from_source(register_tile_kernel(depth, ahead)), target=target(1))
        lib["tile"](a, b, c)
        repeat = TILE_PROBE_STEPS // depth
        np.testing.assert_allclose(c, repeat * (a @ b), rtol=1e-3)
        result = compare_rounds({"tile": kernel(lib, "tile", a, b, c), "peak": peak_timer},
                                rounds, 50, 300)
        flops = 2 * TILE_ROWS * TILE_COLS * depth * repeat
        rows.append({"depth": depth, "ahead": ahead, "kib": (a.nbytes + b.nbytes) // 1024,
                     **_peak_shares(flops, result["tile"], peak_flops, result["peak"])})
    return rows


def scheduled_rows(n: int, rounds: int, verbose: bool = True) -> list[dict]:
    """Rows for the kernels made by Schedule primitives (B as is, and B packed)."""
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    rows = []
    for packed in (False, True):
        sch = schedule_matmul(n, packed)
        if verbose and packed:
            print(sch.trace)
        variant = "primitives, packed B" if packed else "primitives"
        for cores in (1, 2):
            lib = build(sch.mod, target=target(cores))
            if verbose and cores == 2:
                print(f"{variant}: {check_register_tile(sch, lib)}")
            rows.append(_measure(lib, "main", a, b, rounds, variant, cores))
    return rows


def _measure(lib, name, a, b, rounds, variant, cores) -> dict:
    """GFLOPS of ``lib[name]`` and numpy's, and the share of the FMA peak: the peak
    kernel on ``cores`` threads runs in the same rounds, so a round in which other work
    on the host (a neighbour on the same physical cores) slows everything counts against
    the peak too. ``of_peak`` is the best round against the best peak round, ``median``
    the median of the rounds' own shares."""
    n = a.shape[0]
    c = np.zeros((n, n), "float32")
    lib[name](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3)
    peak_timer, peak_flops = _peak_contender(cores)
    result = compare_rounds({"ours": kernel(lib, name, a, b, c), "numpy": call(lambda: a @ b),
                             "peak": peak_timer}, rounds, 50, 300)
    flops = 2 * n ** 3
    return {"variant": variant, "threads": cores,
            "numpy": flops / result["numpy"].best / 1e9,
            "ratio": result["numpy"].best / result["ours"].best,
            **_peak_shares(flops, result["ours"], peak_flops, result["peak"])}


def _peak_shares(flops: float, ours, peak_flops: float, peak) -> dict:
    """GFLOPS of ``ours`` and of the peak kernel timed in the same rounds (timings of
    ``compare_rounds``); ``of_peak``: the best round against the best peak round;
    ``median``: the median of the rounds' own shares."""
    shares = sorted((flops / o) / (peak_flops / p) for o, p in zip(ours.rounds, peak.rounds))
    return {"gflops": flops / ours.best / 1e9, "peak": peak_flops / peak.best / 1e9,
            "of_peak": peak.best / ours.best * flops / peak_flops,
            "median": shares[len(shares) // 2]}


_PEAK_CONTENDERS: dict = {}


def _peak_contender(cores: int):
    """``(timer, flops per call)`` of the FMA peak kernel on ``cores`` threads (built once)."""
    if cores not in _PEAK_CONTENDERS:
        lib = build(from_source(fma_peak_kernel(cores)), target=target(cores))
        x = np.stack([np.full(PEAK_LANES, 0.999999, "float32"),
                      np.full(PEAK_LANES, 1e-6, "float32")])
        out = np.zeros((cores, PEAK_ACCUMULATORS, PEAK_LANES), "float32")
        _PEAK_CONTENDERS[cores] = (kernel(lib, "fma_peak", x, out),
                                   2 * cores * PEAK_ACCUMULATORS * PEAK_LANES * PEAK_ITERS)
    return _PEAK_CONTENDERS[cores]


def fma_peak_gflops(cores: int, rounds: int) -> float:
    timer, flops = _peak_contender(cores)
    seconds = compare({"peak": timer}, rounds)["peak"]
    return flops / seconds / 1e9


def matmul_rows(n: int, rounds: int) -> list[dict]:
    """GFLOPS of each variant on 1 and 2 threads, with numpy measured alongside."""
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    rows = []
    for packed in (True, False):
        for cores in (1, 2):
            lib = build(from_source(scheduled_matmul(n, packed)),
                        target=target(cores))
            rows.append(_measure(lib, "matmul", a, b, rounds,
                                 "packed B" if packed else "no packing", cores))
    return rows


def default_rows(n: int, rounds: int) -> list[dict]:
    """The plain ``topi.nn.matmul`` under the default schedule (``dlight``'s Matmul rule:
    B packed on every call, column tiles grouped so their panels stay in L2)."""
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    x, w = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    rows = []
    for cores in (1, 2):
        built_for = target(cores)
        mod = IRModule({"main": te.create_prim_func([x, w, topi.nn.matmul(x, w)])})
        with built_for:
            mod = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(mod)
        rows.append(_measure(build(mod, target=built_for), "main", a, b, rounds,
                             "default schedule", cores))
    return rows


def tvm_rows(python: str, n: int, rounds: int) -> list[dict]:
    """Apache TVM's figures for the same schedule, from ``tvm_matmul.py`` run by ``python``
    (a Python with apache-tvm; numpy is timed in that process alongside)."""
    script = pathlib.Path(__file__).with_name("tvm_matmul.py")
    rows = []
    for threads in (1, 2):
        out = subprocess.run([python, str(script), "--n", str(n), "--rows", str(TILE_ROWS),
                              "--cols", str(TILE_COLS), "--rounds", str(rounds),
                              "--threads", str(threads)],
                             check=True, capture_output=True, text=True).stdout
        fig = json.loads(out.splitlines()[-1])
        rows.append({"variant": "Apache TVM, packed B", "threads": fig["threads"],
                     "gflops": fig["tvm_gflops"], "numpy": fig["numpy_gflops"],
                     "ratio": fig["tvm_gflops"] / fig["numpy_gflops"]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tvm-python", default=None,
                        help="a Python with apache-tvm: adds TVM's figures (tvm_matmul.py)")
    parser.add_argument("--mcpu", default=None,
                        help="build for this CPU instead of the host's (e.g. haswell: AVX2 "
                             "code, run here; the peak is then that of AVX2 code on this host)")
    parser.add_argument("--tile-only", action="store_true",
                        help="only the register tile alone at each panel depth")
    args = parser.parse_args()
    configure(args.mcpu)
    host = Target("llvm")
    print(f"host CPU {host.mcpu}, vector width {host.vector_width_bits} bits; built for "
          f"{args.mcpu or host.mcpu}: {LANES} float lanes, register tile {TILE_ROWS} x {TILE_COLS}")
    peak = {cores: fma_peak_gflops(cores, args.rounds) for cores in (1, 2)}
    print(f"FMA peak ({PEAK_ACCUMULATORS} x {PEAK_LANES}-lane chains): {peak[1]:.0f} GFLOPS on 1 core, "
          f"{peak[2]:.0f} on 2 cores")
    rows = [] if args.tile_only else (default_rows(args.n, args.rounds)
                                      + scheduled_rows(args.n, args.rounds)
                                      + matmul_rows(args.n, args.rounds))
    if args.tvm_python and not args.tile_only:
        rows += tvm_rows(args.tvm_python, args.n, args.rounds)
    if rows:
        print(f"{'matmul ' + str(args.n) + '^3':<22}{'threads':>8}{'GFLOPS':>9}{'numpy':>9}"
              f"{'vs numpy':>10}{'peak':>7}{'of peak':>9}{'median':>8}")
        for row in rows:
            # Apache TVM's rows come from another process: against the peak measured above.
            peak_cells = (f"{row['peak']:>7.0f}{row['of_peak']:>9.0%}{row['median']:>8.0%}"
                          if "peak" in row else f"{peak[row['threads']]:>7.0f}"
                          f"{row['gflops'] / peak[row['threads']]:>9.0%}{'':>8}")
            print(f"{row['variant']:<22}{row['threads']:>8}{row['gflops']:>9.0f}{row['numpy']:>9.0f}"
                  f"{row['ratio']:>9.2f}x{peak_cells}")
    print(f"\nregister tile {TILE_ROWS} x {TILE_COLS} alone, 1 thread: A's rows and a packed "
          f"panel of B, {TILE_PROBE_STEPS} multiply-adds per tile element and call")
    print(f"{'panel rows':<12}{'KiB':>6}{'prefetch':>10}{'GFLOPS':>9}{'peak':>7}{'of peak':>9}"
          f"{'median':>8}")
    for row in tile_rows(args.rounds):
        ahead = f"{row['ahead']} rows" if row["ahead"] else "-"
        print(f"{row['depth']:<12}{row['kib']:>6}{ahead:>10}{row['gflops']:>9.0f}"
              f"{row['peak']:>7.0f}{row['of_peak']:>9.0%}{row['median']:>8.0%}")
    print("numpy: a @ b with its default threads (OpenBLAS), timed alongside by timing.compare;\n"
          "peak: the FMA peak kernel on as many threads, timed in the same rounds; of peak: "
          "the best round against the best peak round;\nmedian: the median of the rounds' "
          "own shares (steadier where other work on the host comes and goes)")


if __name__ == "__main__":
    main()
