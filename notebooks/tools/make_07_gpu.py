"""Write notebooks/07_gpu.ipynb (run from the repository root)."""
import base64
import io

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import gpu_figures
from gpu_cpu_analogue import CLOSING, CPU_ANALOGUE
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
       "> **The GPU in this chapter is simulated.** This notebook runs anywhere, Binder "
       "included, so it asks for the simulated GPU (`MLCBENCH_GPU=sim` below; on a "
       "machine with an NVIDIA GPU and `pip install \"mlcbench[cuda]\"`, "
       "`MLCBENCH_GPU=cuda` builds and runs the same kernels on the real device, times "
       "them with CUDA events, and `ms.tune_tir` then times every candidate on it; the "
       "`profile` cells are the simulator's alone). On the simulated GPU, `tvm.build(..., target=\"cuda\")` "
       "compiles every kernel to CPU code that runs its blocks and threads with a GPU's "
       "semantics (shared memory per block, barriers, registers per thread), so the "
       "results are exact, and it counts what a GPU would do with its memory (global "
       "memory transactions, shared-memory bank conflicts, occupancy). The times it "
       "reports are *modeled* from those counts and the figures of the target GPU "
       "(`Target(\"cuda\")` describes a GeForce RTX 2080 Ti), not measured; the end of "
       "the chapter says how far to trust them.\n\n"
       "Until now every program we scheduled ran on the cores of a CPU: a handful of "
       "fast, independent processors with large caches. A GPU is built the other way "
       "round: thousands of simple arithmetic units, grouped so that they can share "
       "small on-chip memories, fed by a memory system that rewards programs that read "
       "each byte once and reuse it many times. The transformations of chapter 3 "
       "(split, reorder, fuse, `cache_read`, `compute_at`) are still the tools; what "
       "changes is the *target* of the mapping. We will use CUDA's vocabulary; other "
       "GPU programming models (OpenCL, Vulkan, Metal) have the same concepts under "
       "other names."),
    CODE("import os\n"
         "os.environ.setdefault(\"MLCBENCH_GPU\", \"sim\")  # the simulated GPU, said above\n\n"
         "import numpy as np\nimport mlcbench as tvm\n"
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
       "computing one element. `tvm.build` with the target `\"cuda\"` splits it into a "
       "**kernel** (the code one thread runs) and a host function that launches it. "
       "The arrays live on the device `tvm.cuda(0)`: `tvm.nd.array(x, dev)` copies a "
       "numpy array there, `.numpy()` copies it back."),
    CODE('''rt_mod = tvm.build(sch.mod, target="cuda")

A_np = np.random.uniform(size=(1024,)).astype("float32")
B_np = np.random.uniform(size=(1024,)).astype("float32")
A_nd = tvm.nd.array(A_np, tvm.cuda(0))
B_nd = tvm.nd.array(B_np, tvm.cuda(0))
C_nd = tvm.nd.array(np.zeros((1024,), dtype="float32"), tvm.cuda(0))

rt_mod["main"](A_nd, B_nd, C_nd)
np.testing.assert_allclose(C_nd.numpy(), A_np + B_np)
print(C_nd.numpy()[:4], "= A + B, checked against numpy")'''),
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

c_cpu = tvm.nd.empty((1024,), "float32")
tvm.build(cpu.mod, target="llvm")["main"](tvm.nd.array(A_np), tvm.nd.array(B_np), c_cpu)
np.testing.assert_allclose(c_cpu.numpy(), A_np + B_np)
print("the CPU version matches numpy too")'''),
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
sch.mod.show()

rt_direct = tvm.build(sch.mod, target="cuda")   # kept to compare with the shared version'''),
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
    MD("### The CUDA source\n\n"
       "Building for `\"cuda\"` lowers the program into a kernel, and "
       "`rt_mod.imported_modules[0].get_source()` prints that kernel as CUDA C, the "
       "language NVIDIA's compiler reads. Read it against the schedule above:\n\n"
       "* the thread-bound loops are gone: each thread *is* one iteration, and reads "
       "its indices from `blockIdx.x` and `threadIdx.x`; `__launch_bounds__(128)` "
       "says how many threads a block has;\n"
       "* `__shared__ float A_shared[...]` is one array per block;\n"
       "* the copy loop is the cooperative fetch, its `if` the `T.where` guard;\n"
       "* `__syncthreads()` is a **barrier** that lowering inserted: thread 5 reads "
       "values that threads 6 and 7 copied, so no thread may start reading before "
       "every thread of the block has finished copying."),
    CODE('''rt_mod = tvm.build(sch.mod, target="cuda")
print(rt_mod.imported_modules[0].get_source())'''),
    MD("The same kernel can be printed in OpenCL's spelling (`get_group_id(0)`, "
       "`__local`, `barrier(CLK_LOCAL_MEM_FENCE)`), which the course shows next; and "
       "`get_source(\"ptx\")` gives PTX, the assembly language a CUDA driver loads, "
       "produced by LLVM: the shared loads and the barrier are there as `ld.shared` "
       "and `bar.sync`."),
    CODE('''from mlcbench.codegen.cuda import opencl_source

print(opencl_source(tvm.tir.transform.lower_gpu(sch.mod, "cuda")))
ptx = rt_mod.imported_modules[0].get_source("ptx")
wanted = (".target", ".entry", "ld.shared", "bar.sync")
print("\\n".join(line for line in ptx.splitlines() if any(w in line for w in wanted)))'''),
    MD("The kernel runs and computes the window sum. `rt_mod.profile` runs it once more "
       "and reports what the GPU would have done; we compare it with the version "
       "without shared memory, built before `cache_read`."),
    CODE('''dev = tvm.cuda(0)
A_np = np.random.uniform(size=(1027,)).astype("float32")
A_nd = tvm.nd.array(A_np, dev)
B_nd = tvm.nd.array(np.zeros((1024,), dtype="float32"), dev)
rt_mod["main"](A_nd, B_nd)
np.testing.assert_allclose(B_nd.numpy(), A_np[:-3] + A_np[1:-2] + A_np[2:-1], rtol=1e-6)

for name, module in [("global memory only", rt_direct), ("shared memory", rt_mod)]:
    kernel = module.profile("main", A_nd, B_nd)["main_kernel0"]
    print(f"{name:>18}: {kernel.global_loads:3.0f} warp loads from global memory; "
          f"{kernel.global_transactions:3.0f} transactions, loads and stores")
print()
print(rt_mod.profile("main", A_nd, B_nd))'''),
    MD("A **warp load** is one load instruction executed by the 32 threads of a warp; "
       "the memory system serves it with as many 32-byte **transactions** (sectors) as "
       "the addresses span. Here neighbouring threads read neighbouring floats, so a "
       "warp load of 32 floats (128 bytes) needs 4 transactions when it starts on a "
       "sector boundary and 5 when it does not (`A[vi + 1]`): the loads are "
       "*coalesced*. Without shared memory every thread issues three loads, 96 warp "
       "loads in all; with it, the 8 blocks fetch their 130 values in 40, and the "
       "reads of the window move to shared memory, which is much faster. The table "
       "lists every buffer the kernel touches: *ideal* is the number of transactions "
       "(or shared-memory passes) the access would need without waste."),
]

MATMUL_LOCAL = [
    MD("## Matrix multiplication: local blocking\n\n"
       "Matrix multiplication is where the memory hierarchy pays most. We take a "
       "1024 x 1024 x 1024 matmul, as in the course. Computed naively, with one thread per "
       "output element, each multiply-add loads one value of `A` and one of `B` from "
       "global memory: two loads per multiply-add, and the arithmetic units wait for "
       "memory almost all the time. We build that naive version first, as the baseline: "
       "blocks of 8 x 8 threads, each thread one element of `C`."),
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
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def naive(sch):
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 8])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, i1, j1, k)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    return sch


dev = tvm.cuda(0)
A_np = np.random.uniform(size=(1024, 1024)).astype("float32")
B_np = np.random.uniform(size=(1024, 1024)).astype("float32")
A_nd = tvm.nd.array(A_np, dev)
B_nd = tvm.nd.array(B_np, dev)
C_nd = tvm.nd.array(np.zeros((1024, 1024), dtype="float32"), dev)
num_flop = 2 * 1024 * 1024 * 1024

rt_naive = tvm.build(naive(tvm.tir.Schedule(MyModuleMatmul)).mod, target="cuda")
seconds = {"naive": rt_naive.time_evaluator("main", dev, number=10)(A_nd, B_nd, C_nd).mean}
np.testing.assert_allclose(C_nd.numpy(), A_np @ B_np, rtol=1e-4)
print("naive: %f GFLOPS (modeled)" % (num_flop / seconds["naive"] / 1e9))'''),
    MD("`time_evaluator` works as in TVM, and on this GPU it reports the modeled time "
       "of one call (the kernel still runs, so `C_nd` holds the product, checked "
       "above).\n\n"
       "**Local blocking** gives each thread a small tile of `C`, say 8 x 8, kept in "
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
       "multiply-add drop from 2 to (8 + 8) / 64 = 0.25. The course's next cell builds "
       "and times it:"),
    CODE('''rt_mod = tvm.build(sch.mod, target="cuda")
evaluator = rt_mod.time_evaluator("main", dev, number=10)
seconds["local blocking"] = evaluator(A_nd, B_nd, C_nd).mean
np.testing.assert_allclose(C_nd.numpy(), A_np @ B_np, rtol=1e-4)
print("GEMM-Blocking: %f GFLOPS (modeled)" % (num_flop / seconds["local blocking"] / 1e9))'''),
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
       "the computation. In the CUDA source, each copy is one `float4` load and store "
       "per thread and round (the `vectorize`d loop), and lowering put two barriers in "
       "each step of `k_0`: one after the copies, so that no thread reads a piece "
       "before it is complete, and one at the end, so that the next step's copy does "
       "not overwrite values a slower thread is still reading."),
    CODE('''rt_mod = tvm.build(sch.mod, target="cuda")
source = rt_mod.imported_modules[0].get_source()
print("\\n".join(line for line in source.splitlines()
                if "float4" in line or "__syncthreads" in line or "__shared__" in line))

evaluator = rt_mod.time_evaluator("main", dev, number=10)
seconds["shared blocking"] = evaluator(A_nd, B_nd, C_nd).mean
np.testing.assert_allclose(C_nd.numpy(), A_np @ B_np, rtol=1e-4)
print("GEMM-Blocking: %f GFLOPS (modeled)" % (num_flop / seconds["shared blocking"] / 1e9))'''),
    MD("### What the counters say\n\n"
       "`profile` shows where the modeled time goes. Each line is one buffer and one "
       "kind of access; *per request* is the number of transactions (global memory) or "
       "wavefronts (shared memory) one warp-wide access costs, *ideal* what it would "
       "cost without waste."),
    CODE('''print(rt_mod.profile("main", A_nd, B_nd, C_nd))'''),
    MD("Three things to read in it:\n\n"
       "* **The global loads are coalesced.** A warp's `float4` loads of `A` and `B` "
       "cover whole 32-byte sectors, so the transactions equal the ideal: no byte is "
       "fetched that is not used. The stores of `C` are not: the 32 threads of a warp "
       "write 32 different rows or 32-byte pieces, 8 times the ideal; but each thread "
       "writes its tile only once, so they cost little.\n"
       "* **The shared reads have bank conflicts.** Shared memory is split into 32 "
       "banks of 4-byte words; a warp's access takes one pass (a *wavefront*) per "
       "distinct word that falls into the same bank. In `A_shared[tx // 8 * 64 + ...]` "
       "the 32 threads of a warp read 4 different words 64 floats apart, all in the same "
       "bank: 4 wavefronts instead of 1. `B_shared` reads 8 words 8 floats apart: 2 "
       "wavefronts. Padding the shared arrays (`storage_align`) or another thread "
       "layout would remove them.\n"
       "* **The bound.** The line `memory-bound` or `compute-bound` says which of the "
       "three times (global memory, shared memory, arithmetic) dominates; occupancy "
       "says how many blocks an SM holds at once, limited here by the registers each "
       "thread's 64 accumulators need."),
]

MODELED = [
    MD("## The three matmuls side by side\n\n"
       "How much global traffic did each step save? Counting loads per multiply-add "
       "for the three mappings, and comparing with the modeled times:"),
    CODE('''def global_loads_per_madd(thread_tile, block_tile, shared):
    """Values loaded from global memory per multiply-add, for one step of k."""
    if shared:                      # the block loads its A and B pieces once
        return (block_tile + block_tile) / (block_tile * block_tile)
    return (thread_tile + thread_tile) / (thread_tile * thread_tile)


tiles = {"naive": (1, 64, False), "local blocking": (8, 64, False),
         "shared blocking": (8, 64, True)}
for name, args in tiles.items():
    print(f"{name:>16}: {global_loads_per_madd(*args):.4f} global loads per multiply-add, "
          f"{num_flop / seconds[name] / 1e9:8.1f} GFLOPS modeled")'''),
    MD("From 2 loads to 1/32: a factor of 64 less global memory traffic, at the price "
       "of registers (64 accumulators per thread) and shared memory (4 KB per block). "
       "The modeled times order the three versions as measurements on real GPUs do: "
       "naive < local blocking < shared blocking.\n\n"
       "**How far to trust the modeled times.** The model is a roofline: a kernel "
       "takes the longest of its global-memory time (transactions x 32 bytes over the "
       "GPU's bandwidth), its shared-memory time (one wavefront per SM and cycle) and "
       "its arithmetic time (FLOPs over the peak rate), stretched when the blocks "
       "leave SMs idle or too few warps are resident to hide memory latency, plus a "
       "launch. It knows the counts exactly, but it has no L1/L2 cache (the naive "
       "version's repeated reads of `A` and `B` mostly hit the cache on a real GPU, "
       "so it looks worse here than it is), no limits on issuing instructions, no "
       "latency of dependent loads, and it estimates the registers. Use it to compare "
       "schedules of one program and to see *why* one is faster; do not read its "
       "GFLOPS as a promise for a real card, where the tile sizes that win are the "
       "ones that tuning (chapter 5) finds by measuring.\n\n"
       "Measured on an NVIDIA H100 (`benchmarks/cuda_matmul.py`, against cuBLAS in the "
       "same run): at 1024^3 the three versions run at 5.2, 9.1 and 13.6 TFLOPS, the "
       "same order; at 4096^3 the shared-memory version with larger tiles (8 x 32 "
       "threads of 8 x 8 elements, `k` in steps of 32) reaches 0.69 of cuBLAS, and "
       "`ms.tune_tir` timing 64 candidates on the device 0.72. Among such good "
       "tilings the model's ranking agrees little with the device's (rank correlation "
       "0.18), which is why tuning on a real GPU measures."),
]

cells = (INTRO + MODEL + VECTOR_ADD + WINDOW_SUM + MATMUL_LOCAL + MATMUL_SHARED + MODELED
         + CPU_ANALOGUE + CLOSING + EXERCISE_CELLS)

nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                        "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "notebooks/07_gpu.ipynb")
