"""Notebook 7's last sections: the GPU blockings applied to the CPU (built, checked
against numpy and timed: real times, on this machine), then the discussion and summary."""
from nbformat.v4 import new_code_cell, new_markdown_cell

MD, CODE = new_markdown_cell, new_code_cell

CPU_ANALOGUE = [
    MD("## The same blocking on the CPU\n\n"
       "The simulated GPU runs on the CPU, but it does not make the CPU fast: it "
       "reproduces what a GPU computes and counts what a GPU would do. The *ideas* "
       "carry over to the CPU almost one for one:\n\n"
       "| GPU | CPU |\n|---|---|\n"
       "| blocks of the grid (`blockIdx`), one per SM | tiles spread over the cores "
       "(`parallel`) |\n"
       "| threads of a warp (`threadIdx`), 32 in lock step | lanes of a vector register "
       "(`vectorize`), 8 or 16 floats |\n"
       "| per-thread tile in registers (`cache_write(..., \"local\")`) | the same: a "
       "`local` tile that LLVM keeps in vector registers |\n"
       "| shared memory, filled by explicit copies | the L1/L2 caches, filled by the "
       "hardware; an explicit copy there is *packing*: `cache_read` into a `\"global\"` "
       "buffer laid out so that a tile's values are adjacent |\n\n"
       "We apply the CPU version of local blocking to a 512 x 512 x 512 matmul: each "
       "parallel task owns a 4 x 16 tile of `C` in a `local` accumulator, walks the "
       "whole `k` loop with it (16 floats are one or two vector registers per row), and "
       "writes it back once."),
    CODE('''@I.ir_module
class Matmul512:
    @T.prim_func
    def main(A: T.Buffer((512, 512), "float32"), B: T.Buffer((512, 512), "float32"),
             C: T.Buffer((512, 512), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(512, 512, 512):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def tile_with_local(sch, tile_y, tile_x):
    """The register tile: tiles of C accumulated in a local buffer over all of k."""
    block_C = sch.get_block("C")
    C_local = sch.cache_write(block_C, 0, "local")
    i, j, k = sch.get_loops(block_C)
    i0, i1 = sch.split(i, [None, tile_y])
    j0, j1 = sch.split(j, [None, tile_x])
    sch.reorder(i0, j0, k, i1, j1)
    sch.reverse_compute_at(C_local, j0)
    return sch


def cpu_blocking(sch, tile_y, tile_x):
    """The register tile, with the tiles over the cores and the columns in vectors."""
    sch = tile_with_local(sch, tile_y, tile_x)
    i0, j0, k, i1, j1 = sch.get_loops("C")
    sch.parallel(sch.fuse(i0, j0))
    sch.unroll(i1)
    sch.vectorize(j1)
    init = sch.decompose_reduction(sch.get_block("C"), k)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.vectorize(sch.get_loops("C_local")[-1])
    return sch


sch_cpu = cpu_blocking(tvm.tir.Schedule(Matmul512), 4, 16)
sch_cpu.mod.show()'''),
    MD("The outer loop `i_0_j_0_fused` is the CPU's grid: 128 x 32 = 4096 tiles "
       "handed out to the cores. Inside, the structure is that of one GPU thread: zero the tile, "
       "accumulate over `k`, write back. We build three versions, check each against "
       "numpy, and time them.\n\n"
       "The timings use `mlcbench.runtime.timing`: the programs take turns for several "
       "rounds, each after a short pause; each keeps its best round; a program whose two "
       "best rounds differ by more than 20% is flagged *unsteady* (the machine was "
       "busy); every ratio reads \"x faster than numpy\" or \"x slower than numpy\"."),
    CODE('''rng = np.random.default_rng(0)
a_np = rng.random((512, 512), dtype="float32")
b_np = rng.random((512, 512), dtype="float32")
a_nd, b_nd = tvm.nd.array(a_np), tvm.nd.array(b_np)
c_nd = tvm.nd.empty((512, 512), "float32")

programs = {
    "naive loops": tvm.build(Matmul512, target="llvm"),
    "local 4 x 16 tiles": tvm.build(tile_with_local(tvm.tir.Schedule(Matmul512), 4, 16).mod,
                                   target="llvm"),
    "+ parallel + vectorize": tvm.build(sch_cpu.mod, target="llvm"),
}
for name, lib in programs.items():
    lib["main"](a_nd, b_nd, c_nd)
    np.testing.assert_allclose(c_nd.numpy(), a_np @ b_np, rtol=1e-4)
print("all three match numpy")

contenders = {name: timing.kernel(lib, "main", a_nd, b_nd, c_nd) for name, lib in programs.items()}
contenders["numpy"] = timing.call(lambda: a_np @ b_np)
result = timing.compare(contenders, rounds=3)
for name in programs:
    print(result.describe(name, "numpy"))'''),
    MD("Read the figures before the explanation; they vary with the machine and with "
       "what else it is doing. The naive loop nest is far behind: its inner loop walks "
       "`k`, so it reads `B` down a column, one cache line per value, one scalar "
       "multiply-add at a time. The local tile alone changes the picture: "
       "the inner loops are now a fixed 4 x 16 block that LLVM turns into vector "
       "multiply-adds by itself, every loaded value of `B` is used 4 times and every "
       "value of `A` 16 times: the register blocking of the GPU threads, on one core. "
       "Spreading the tiles over the cores divides the time by at most the number of "
       "cores that are free (on a shared 2-core machine, often fewer), and explicit "
       "`vectorize` and `unroll` make the vector form certain instead of left to "
       "LLVM. numpy calls an optimized BLAS, which also packs its inputs for the "
       "cache; a figure marked unsteady was disturbed by other work, so rerun the cell "
       "before drawing conclusions from it."),
]

CLOSING = [
    MD("## Discussion\n\n"
       "Everything in this chapter was a *mapping* problem: the computation never "
       "changed, only which loop runs where. The GPU gave the loops three new "
       "destinations, grid blocks, threads and vector lanes, and the memory gave the "
       "data three, global, shared and local; the schedule primitives express both "
       "mappings, and the printed TVMScript records them exactly. What lowering adds "
       "(barriers, the shared-memory allocation, the kernel launch, the CUDA or PTX "
       "text) is mechanical once the mapping is fixed. What is not mechanical is "
       "choosing the tiles: too small and the memory starves the arithmetic, too large "
       "and the registers or shared memory run out. That search is what the automatic "
       "optimization of chapter 5 does, on GPUs as on CPUs.\n\n"
       "## Summary\n\n"
       "* A GPU runs a grid of thread blocks; a block runs on one streaming "
       "multiprocessor, and its threads can share memory and synchronize.\n"
       "* `bind(loop, \"blockIdx.x\" / \"threadIdx.x\")` maps loops onto the thread "
       "hierarchy; the program prints them as `T.thread_binding`, the CUDA source as "
       "`blockIdx.x` / `threadIdx.x`.\n"
       "* `cache_read(..., \"shared\")` + `compute_at` under the thread loops stages what "
       "a whole block needs; splitting the copy by the thread count and binding it "
       "makes the fetch cooperative; lowering adds the `__syncthreads()` barriers.\n"
       "* `cache_write(..., \"local\")` gives each thread a register tile: local "
       "blocking; shared-memory tiling adds reuse across the threads of a block.\n"
       "* The counters (coalesced transactions, bank conflicts, occupancy) explain the "
       "modeled times; the model ranks schedules, real measurements decide.\n"
       "* On the CPU the same blocking is a `local` tile, `parallel` over the tiles and "
       "`vectorize` over the lanes."),
]
