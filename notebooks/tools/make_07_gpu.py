"""Write notebooks/07_gpu.ipynb (run from the repository root)."""
import base64
import io

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import gpu_figures
from gpu_exercises import EXERCISE_CELLS

MD, CODE = new_markdown_cell, new_code_cell


def figure_cell(text, name, fig):
    """A markdown cell showing ``fig`` as an attachment (no drawing code in the notebook)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight", metadata={"Software": None})
    gpu_figures.plt.close(fig)
    cell = new_markdown_cell(text + f"\n\n![{name}](attachment:{name})")
    cell["attachments"] = {name: {"image/png": base64.b64encode(buf.getvalue()).decode()}}
    return cell


INTRO = [
    MD("# 7. GPU and hardware acceleration\n\n"
       "> **This chapter cannot run its GPU programs yet.** mlcbench compiles for the CPU "
       "only until its simulated GPU lands: `tvm.build(..., target=\"cuda\")` is refused, "
       "and so is a CPU build of a program whose loops are bound to GPU threads. "
       "Everything GPU-specific below is therefore *scheduled and printed* (the "
       "TVMScript is exactly what a GPU backend would receive), and the runnable part of "
       "the chapter applies the same blocking ideas to the CPU, checked and timed "
       "against numpy.\n\n"
       "Until now every program we scheduled ran on the cores of a CPU: a handful of "
       "fast, independent processors with large caches. A GPU is built the other way "
       "round: thousands of simple arithmetic units, grouped so that they can share "
       "small on-chip memories, fed by a memory system that rewards programs that read "
       "each byte once and reuse it many times. The transformations of chapter 3 "
       "(split, reorder, fuse, `cache_read`, `compute_at`) are still the tools; what "
       "changes is the *target* of the mapping. We will use CUDA's vocabulary; other "
       "GPU programming models (OpenCL, Vulkan, Metal) have the same concepts under "
       "other names."),
    CODE("import numpy as np\nimport mlcbench as tvm\n"
         "from mlcbench.script import tir as T, ir as I\n"
         "from mlcbench.runtime import timing"),
]

MODEL = [
    MD("## The GPU execution model\n\n"
       "A GPU is a collection of **streaming multiprocessors** (SMs), a few dozen to a "
       "hundred or more, each with many arithmetic cores, a register file and a small "
       "fast memory. A program for it, a **kernel**, is launched as a **grid** of "
       "**thread blocks**; every block is a group of **threads** (up to 1024) that all "
       "run the same code on different data. Each thread knows where it is through two "
       "indices: `blockIdx.x` (which block of the grid) and `threadIdx.x` (which thread "
       "of the block). Both can have `.y` and `.z` components as well, which are a "
       "convenience: a 2-D grid is just a fused 1-D grid with a different index "
       "calculation.\n\n"
       "The hardware places each block on one SM and keeps it there until it "
       "finishes; an SM runs several blocks at once when they fit. Inside an SM, threads "
       "are executed in groups of 32 called **warps**, which move through the program in "
       "lock step. That is the whole scheduling contract: blocks are independent and "
       "may run in any order (so they cannot wait for one another), while the threads "
       "of one block run together on one SM and can synchronize with a barrier.\n\n"
       "The memory follows the same hierarchy, and this is what most of the chapter is "
       "about:\n\n"
       "* **global memory**: gigabytes of DRAM, visible to every thread of every block, "
       "with a bandwidth that, although high, is the bottleneck of most kernels: "
       "a load costs hundreds of cycles;\n"
       "* **shared memory**: from tens to a couple of hundred kilobytes on each SM, "
       "divided among the blocks running there; a block's part is shared by all its "
       "threads and invisible to other blocks, about as fast as a first-level cache. "
       "A block can copy data it needs several times from global memory into shared "
       "memory once;\n"
       "* **registers** (the scope `\"local\"` in TensorIR): private to one thread, the "
       "fastest storage there is. A thread that keeps a small tile of its result in registers "
       "touches memory only to load operands and to write the tile back."),
    figure_cell(
        "On the left, a grid of 8 blocks of 128 threads covers a vector of 1024 elements: "
        "the thread with indices `(blockIdx.x, threadIdx.x)` handles element "
        "`blockIdx.x * 128 + threadIdx.x`. On the right, where the three memories live: "
        "registers per thread, shared memory per block (on the SM that runs it), global "
        "memory for everything.", "gpu_model.png", gpu_figures.gpu_model_figure()),
]

VECTOR_ADD = [
    MD("## Binding loops to threads: vector add\n\n"
       "In TensorIR, a kernel launch is not a separate concept: it is a loop nest in "
       "which some loops are **bound** to thread indices. We start from an element-wise "
       "addition of two 1024-vectors and split its loop in two, an outer loop of 8 and "
       "an inner loop of 128."),
    CODE('''@I.ir_module
class MyModuleVecAdd:
    @T.prim_func
    def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"),
             C: T.Buffer((1024,), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in range(1024):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = A[vi] + B[vi]


sch = tvm.tir.Schedule(MyModuleVecAdd)
block_C = sch.get_block("C")
(i,) = sch.get_loops(block_C)
i0, i1 = sch.split(i, [None, 128])
sch.mod.show()'''),
    MD("`bind` turns a loop into a thread index: the loop no longer iterates; instead "
       "the GPU launches as many blocks (or threads) as the loop's extent, and each "
       "one sees a different value of the index. The printed program shows it as "
       "`T.thread_binding(8, thread=\"blockIdx.x\")`: read it as \"for each of 8 "
       "blocks, in parallel\"."),
    CODE('''sch.bind(i0, "blockIdx.x")
sch.bind(i1, "threadIdx.x")
sch.mod.show()'''),
    MD("This is a complete GPU program: a grid of 8 blocks of 128 threads, each thread "
       "computing one element. A GPU backend would emit a kernel whose body is the block "
       "`C` with `vi = blockIdx.x * 128 + threadIdx.x`, and a host function that "
       "launches it. Here the build stops, and says why:"),
    CODE('''from mlcbench.ir.errors import MLCBenchError

for target in ["cuda", "llvm"]:
    try:
        tvm.build(sch.mod, target=target)
    except MLCBenchError as err:
        print(f"{target}: {err}")'''),
    MD("The CPU counterpart of the same split is worth seeing now, because we will "
       "come back to it. A CPU has a few cores instead of many SMs and, inside each "
       "core, vector units that process 8 or 16 floats per instruction instead of "
       "warps of 32 threads. So the outer loop becomes `parallel` (one chunk per core) "
       "and the inner one `vectorize` (the lanes of a vector register play the threads "
       "of a warp):"),
    CODE('''cpu = tvm.tir.Schedule(MyModuleVecAdd)
i0, i1 = cpu.split(cpu.get_loops("C")[0], [None, 128])
i1, lanes = cpu.split(i1, [None, 16])
cpu.parallel(i0)
cpu.vectorize(lanes)
cpu.mod.show()

rng = np.random.default_rng(0)
a_np, b_np = rng.random(1024, dtype="float32"), rng.random(1024, dtype="float32")
c_nd = tvm.nd.empty((1024,), "float32")
tvm.build(cpu.mod, target="llvm")["main"](tvm.nd.array(a_np), tvm.nd.array(b_np), c_nd)
np.testing.assert_allclose(c_nd.numpy(), a_np + b_np)
print("the CPU version matches numpy")'''),
]

WINDOW_SUM = [
    MD("## Window sum: shared memory and cooperative fetching\n\n"
       "The next program is a one-dimensional convolution with the fixed weights "
       "`[1, 1, 1]`: each output is the sum of three neighbouring inputs. Unlike the "
       "vector add, it **reuses** its input: every element of `A` is read by three "
       "different outputs, so by three different threads, usually of the same block."),
    CODE('''@I.ir_module
class MyModuleWindowSum:
    @T.prim_func
    def main(A: T.Buffer((1027,), "float32"), B: T.Buffer((1024,), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in range(1024):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + A[vi + 1] + A[vi + 2]


sch = tvm.tir.Schedule(MyModuleWindowSum)
nthread = 128
block_C = sch.get_block("C")
(i,) = sch.get_loops(block_C)
i0, i1 = sch.split(i, [None, nthread])
sch.bind(i0, "blockIdx.x")
sch.bind(i1, "threadIdx.x")
sch.mod.show()'''),
    MD("Bound like this, each thread loads three values from global memory, and each "
       "value is loaded three times in total. The block's 128 threads need only 130 "
       "distinct inputs between them, so the block can copy those 130 values into "
       "shared memory once and let every thread read its three from there."),
    figure_cell(
        "The block's inputs (green) are its own 128 elements plus a *halo* of two on the "
        "right. They are copied into `A_shared` once; every output of the block (red) is "
        "then computed from shared memory.", "window_shared.png",
        gpu_figures.window_figure()),
    MD("`cache_read` with the storage scope `\"shared\"` adds the copy stage, and "
       "`compute_at` moves it under the thread loop, right before the computation that "
       "uses it. Look at the region the copy covers: `v0 = i_0 * 128 + ax0` for `ax0` "
       "in `range(130)`. It depends on the block index `i_0` but not on the thread "
       "index `i_1`. Shared memory belongs to the block, so when `compute_at` places a "
       "shared copy under a thread-bound loop it covers what the **whole block** needs "
       "(130 values), not what one thread needs (3 values)."),
    CODE('''A_shared = sch.cache_read(block_C, read_buffer_index=0, storage_scope="shared")
sch.compute_at(A_shared, i1)
sch.mod.show()'''),
    MD("There is a problem left. The copy loop sits *inside* the thread loop, so as "
       "written every one of the 128 threads would copy all 130 values: correct, but 128 "
       "times more work than needed. The fix is **cooperative fetching**: split the "
       "copy loop by the number of threads and bind the inner part to `threadIdx.x` as "
       "well. Then thread `t` copies elements `t` and `t + 128` (the second only if it "
       "exists: note the `T.where` guard that the split added, since 130 is not a "
       "multiple of 128). The threads of the block share the work of filling the shared "
       "buffer, and then share its contents."),
    CODE('''ax = sch.get_loops(A_shared)[-1]
ax0, ax1 = sch.split(ax, [None, nthread])
sch.bind(ax1, "threadIdx.x")
sch.mod.show()'''),
    MD("Two things a GPU backend adds to this program are not visible in the schedule. "
       "First, a **barrier** (`__syncthreads()` in CUDA) between the copy and the "
       "computation: thread 5 reads values that threads 6 and 7 copied, and it must "
       "not read them before they are there. Second, the allocation: `A_shared` is "
       "declared with the full shape `(1027,)`, but lowering shrinks every buffer to the "
       "region used where it lives, so each block gets 130 floats of shared memory. "
       "Both belong to the GPU lowering passes, which arrive with the simulated GPU."),
]

MATMUL_LOCAL = [
    MD("## Matrix multiplication: local blocking\n\n"
       "Matrix multiplication is where the memory hierarchy pays most. We take a "
       "1024 x 1024 x 1024 matmul, as in the course. Computed naively, with one thread per "
       "output element, each multiply-add loads one value of `A` and one of `B` from "
       "global memory: two loads per multiply-add, and the arithmetic units wait for "
       "memory almost all the time."),
    CODE('''@I.ir_module
class MyModuleMatmul:
    @T.prim_func
    def main(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
             C: T.Buffer((1024, 1024), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(1024, 1024, 1024):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]'''),
    MD("**Local blocking** gives each thread a small tile of `C`, say 8 x 8, kept in "
       "registers. For every step of `k` the thread loads a column of 8 values of `A` "
       "and a row of 8 values of `B`, and does 8 x 8 = 64 multiply-adds with them: each "
       "loaded value is used 8 times. The schedule below builds this mapping:\n\n"
       "* `cache_write(block_C, 0, \"local\")` makes the computation accumulate into "
       "`C_local`, a buffer in the thread's registers, and adds a block that writes it "
       "back to `C`;\n"
       "* `split` cuts `i` and `j` three ways: blocks of the grid, threads of a block, "
       "and the thread's own 8 x 8 tile; `k` is cut into steps of 4, unrolled;\n"
       "* `reorder` puts the grid and thread loops outside, then `k`, then the tile;\n"
       "* `reverse_compute_at` places the write-back at the end of each thread's work;\n"
       "* `bind` maps the outer loops to `blockIdx.y/x` and `threadIdx.y/x`: a grid of "
       "16 x 16 blocks of 8 x 8 threads;\n"
       "* `decompose_reduction` separates the zeroing of the tile from the updates."),
    CODE('''def blocking(sch, tile_local_y, tile_local_x, tile_block_y, tile_block_x, tile_k):
    block_C = sch.get_block("C")
    C_local = sch.cache_write(block_C, 0, "local")
    i, j, k = sch.get_loops(block=block_C)
    i0, i1, i2 = sch.split(loop=i, factors=[None, tile_block_y, tile_local_y])
    j0, j1, j2 = sch.split(loop=j, factors=[None, tile_block_x, tile_local_x])
    k0, k1 = sch.split(loop=k, factors=[None, tile_k])
    sch.unroll(k1)
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(C_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    sch.decompose_reduction(block_C, k0)
    return sch


sch = blocking(tvm.tir.Schedule(MyModuleMatmul), 8, 8, 8, 8, 4)
sch.mod.show()'''),
    MD("Read the program from the outside in: `i_0` and `j_0` pick a block's 64 x 64 "
       "tile of `C`; `i_1` and `j_1` pick a thread's 8 x 8 tile inside it; the thread "
       "zeroes its `C_local` tile (`C_init`), walks `k` accumulating into it "
       "(`C_update`), and copies it to `C` (`C_local`). The global loads per "
       "multiply-add drop from 2 to (8 + 8) / 64 = 0.25."),
]

MATMUL_SHARED = [
    MD("## Matrix multiplication: shared-memory tiling\n\n"
       "Local blocking made each thread reuse its own loads, but the 64 threads of a "
       "block still load overlapping data: the 8 threads of one row of the block all "
       "load the same rows of `A`, and the 8 threads of one column the same columns of "
       "`B`. The block as a whole computes a 64 x 64 tile of `C`, so for each step of 8 "
       "along `k` it needs a 64 x 8 piece of `A` and an 8 x 64 piece of `B`: 1024 values for "
       "64 x 64 x 8 = 32768 multiply-adds. Staged in shared memory, they are loaded from "
       "global memory once per block."),
    figure_cell(
        "One block of the shared-memory matmul. The block's tile of `C` (red) needs a "
        "strip of `A` and a strip of `B` (blue); at each step of `k0` it stages a 64 x 8 "
        "piece of `A` and an 8 x 64 piece of `B` (green) in shared memory; each of its "
        "64 threads accumulates an 8 x 8 tile (one is drawn orange) in registers.",
        "matmul_tiles.png", gpu_figures.matmul_tiles_figure()),
    MD("The schedule is the local blocking above with three changes. The two thread "
       "loops are fused into one `threadIdx.x` of 64, which makes the cooperative fetch "
       "simpler to write. The `k` loop is split into steps of 8. And for each input, "
       "`cache_read_and_coop_fetch` adds a shared copy at the `k0` loop, fuses the two "
       "copy loops into one, and splits it into `[rounds, threads, 4]`: each thread "
       "copies 4 adjacent values with one vector load (`vectorize`), all 64 threads "
       "together copy 256 values per round, and two rounds fill a 512-value piece."),
    CODE('''def cache_read_and_coop_fetch(sch, block, nthread, read_idx, read_loc):
    read_cache = sch.cache_read(block=block, read_buffer_index=read_idx, storage_scope="shared")
    sch.compute_at(block=read_cache, loop=read_loc)
    # vectorized cooperative fetch: every thread copies 4 adjacent values per round
    inner0, inner1 = sch.get_loops(block=read_cache)[-2:]
    inner = sch.fuse(inner0, inner1)
    _, tx, vec = sch.split(loop=inner, factors=[None, nthread, 4])
    sch.vectorize(vec)
    sch.bind(tx, "threadIdx.x")


def blocking_with_shared(sch, tile_local_y, tile_local_x, tile_block_y, tile_block_x, tile_k):
    block_C = sch.get_block("C")
    C_local = sch.cache_write(block_C, 0, "local")
    i, j, k = sch.get_loops(block=block_C)
    i0, i1, i2 = sch.split(loop=i, factors=[None, tile_block_y, tile_local_y])
    j0, j1, j2 = sch.split(loop=j, factors=[None, tile_block_x, tile_local_x])
    k0, k1 = sch.split(loop=k, factors=[None, tile_k])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(C_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    tx = sch.fuse(i1, j1)
    sch.bind(tx, "threadIdx.x")
    nthread = tile_block_y * tile_block_x
    cache_read_and_coop_fetch(sch, block_C, nthread, 0, k0)
    cache_read_and_coop_fetch(sch, block_C, nthread, 1, k0)
    sch.decompose_reduction(block_C, k0)
    return sch


sch = blocking_with_shared(tvm.tir.Schedule(MyModuleMatmul), 8, 8, 8, 8, 8)
sch.mod.show()'''),
    MD("In the printed program, the blocks `A_shared` and `B_shared` sit at the top of "
       "the `k_0` loop, their index expressions depend on the block indices `i_0`, "
       "`j_0` and on `k_0`, and their copy loops are bound to the same `threadIdx.x` as "
       "the computation. As with the window sum, a GPU backend would add barriers "
       "around the copies (the next step's copy must not overwrite values a slow thread "
       "is still reading) and allocate 64 x 8 and 8 x 64 floats of shared memory per "
       "block.\n\n"
       "How much global traffic did each step save? Counting loads per multiply-add for "
       "the three mappings:"),
    CODE('''def global_loads_per_madd(thread_tile, block_tile, shared):
    """Values loaded from global memory per multiply-add, for one step of k."""
    if shared:                      # the block loads its A and B pieces once
        return (block_tile + block_tile) / (block_tile * block_tile)
    return (thread_tile + thread_tile) / (thread_tile * thread_tile)


for name, args in [("one element per thread", (1, 64, False)),
                   ("local 8 x 8 tiles", (8, 64, False)),
                   ("shared 64 x 64 block tiles", (8, 64, True))]:
    print(f"{name:>28}: {global_loads_per_madd(*args):.4f} global loads per multiply-add")'''),
    MD("From 2 to 1/32: a factor of 64 less global memory traffic, at the price of "
       "registers (64 accumulators per thread) and shared memory (4 KB per block). "
       "Those prices limit how many blocks fit on one SM at the same time, which is why "
       "the tile sizes are parameters: the best ones depend on the GPU, and chapter 5's "
       "tuning is how they are found in practice."),
]

CPU_ANALOGUE = [
    MD("## The same blocking on the CPU\n\n"
       "None of the GPU programs above can run here yet, but the ideas carry over to "
       "the CPU almost one for one:\n\n"
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
       "before drawing conclusions from it.\n\n"
       "## Discussion\n\n"
       "Everything in this chapter was a *mapping* problem: the computation never "
       "changed, only which loop runs where. The GPU gave the loops three new "
       "destinations, grid blocks, threads and vector lanes, and the memory gave the "
       "data three, global, shared and local; the schedule primitives express both "
       "mappings, and the printed TVMScript records them exactly. What a real GPU "
       "backend adds (barriers, shared-memory allocation, the kernel launch, the "
       "CUDA or PTX text) is mechanical once the mapping is fixed. What is not "
       "mechanical is choosing the tiles: too small and the memory starves the "
       "arithmetic, too large and the registers or shared memory run out. That search "
       "is what the automatic optimization of chapter 5 does, on GPUs as on CPUs.\n\n"
       "## Summary\n\n"
       "* A GPU runs a grid of thread blocks; a block runs on one streaming "
       "multiprocessor, and its threads can share memory and synchronize.\n"
       "* `bind(loop, \"blockIdx.x\" / \"threadIdx.x\")` maps loops onto the thread "
       "hierarchy; the program prints them as `T.thread_binding`.\n"
       "* `cache_read(..., \"shared\")` + `compute_at` under the thread loops stages what "
       "a whole block needs; splitting the copy by the thread count and binding it "
       "makes the fetch cooperative.\n"
       "* `cache_write(..., \"local\")` gives each thread a register tile: local "
       "blocking; shared-memory tiling adds reuse across the threads of a block.\n"
       "* On the CPU the same blocking is a `local` tile, `parallel` over the tiles and "
       "`vectorize` over the lanes."),
]

cells = (INTRO + MODEL + VECTOR_ADD + WINDOW_SUM + MATMUL_LOCAL + MATMUL_SHARED
         + CPU_ANALOGUE + EXERCISE_CELLS)

nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                        "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "notebooks/07_gpu.ipynb")
