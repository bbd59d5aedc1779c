"""Write notebooks/03_tensorir_in_action.ipynb (run from the repository root)."""
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import mlcbench as tvm
import tensorir_figures as figures
from tensorir_exercises import EXERCISE_CELLS

MD, CODE = new_markdown_cell, new_code_cell

MM_RELU = '''@I.ir_module
class MyModule:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128), "float32")
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))'''

MyModule = tvm.script.from_source("from mlcbench.script import tir as T, ir as I\n" + MM_RELU)


def figure_of(steps_fn, text, name, steps, buffers, window=16, blocks=None, title=""):
    """A figure cell for the program that ``steps_fn`` makes from MyModule's schedule."""
    sch = tvm.tir.Schedule(MyModule)
    steps_fn(sch)
    return figures.figure_cell(text, name, figures.access_figure(
        sch.mod["mm_relu"], steps, buffers, window=window, blocks=blocks, title=title))


def split_reorder(sch):
    block_y = sch.get_block("Y", "mm_relu")
    i, j, k = sch.get_loops(block_y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    return j0


def split_reorder_compute_at(sch):
    sch.reverse_compute_at(sch.get_block("C", "mm_relu"), split_reorder(sch))


def tiled(sch):
    block = sch.get_block("Y", "mm_relu")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 8])
    j0, j1 = sch.split(j, factors=[None, 32])
    sch.reorder(i0, j0, k, i1, j1)
    sch.reverse_compute_at(sch.cache_write(block, 0, "local"), j0)

INTRO = [
    MD("# 3. TensorIR in action: transforming tensor programs\n\n"
       "Chapter 2 wrote `mm_relu` as a TensorIR program and observed that it is one of "
       "many programs computing the same thing, some much faster than others. This "
       "chapter produces those other programs, not by rewriting them by hand, but by "
       "**transforming** the one we have. The tool is a **Schedule**: it wraps a "
       "module, and each of its methods (a *schedule primitive*) rewrites the loops "
       "and blocks in one precise way that keeps the result the same. Every step is "
       "checked against what the blocks declare, recorded in a **trace**, and can be "
       "replayed.\n\n"
       "The MLC process in one sentence: *develop* a simple program (by hand or "
       "generated), *transform* it into variants, *build* and measure them. We walk "
       "through the primitives one at a time on `mm_relu`, look at what each does to "
       "the order in which memory is touched, and time the variants against numpy. "
       "At the end, the ScheduleExplorer lets you play with the same primitives "
       "interactively, and three exercises put them to use."),
    CODE("import numpy as np\nimport mlcbench as tvm\n"
         "from mlcbench.script import tir as T, ir as I\n"
         "from mlcbench.runtime import timing"),
    CODE(MM_RELU),
]

VARIANT = [
    MD("## A variant, written by hand\n\n"
       "Here is a variant of the low-level numpy `mm_relu`, with the loop `j` cut in two "
       "(`j = j0 * 4 + j1`) and the loops reordered so that `k` runs between the two "
       "halves. It computes exactly the same `C`:"),
    CODE('''def lnumpy_mm_relu_v2(A: np.ndarray, B: np.ndarray, C: np.ndarray):
    n = A.shape[0]
    Y = np.empty((n, n), dtype="float32")
    for i in range(n):
        for j0 in range(n // 4):
            for k in range(n):
                for j1 in range(4):
                    j = j0 * 4 + j1
                    if k == 0:
                        Y[i, j] = 0
                    Y[i, j] = Y[i, j] + A[i, k] * B[k, j]
    for i in range(n):
        for j in range(n):
            C[i, j] = max(Y[i, j], 0)


rng = np.random.default_rng(0)
a_np = rng.random((128, 128), dtype="float32")
b_np = rng.random((128, 128), dtype="float32")
c_mm_relu = np.maximum(a_np @ b_np, 0)
c_np = np.empty((32, 32), dtype="float32")          # Python loops: the 32 x 32 corner
lnumpy_mm_relu_v2(a_np[:32, :32], b_np[:32, :32], c_np)
np.testing.assert_allclose(c_np, np.maximum(a_np[:32, :32] @ b_np[:32, :32], 0), rtol=1e-5)'''),
    MD("Writing every variant by hand means copying the program, editing it, and "
       "hoping the edit kept it correct. With a schedule we ask for the edit instead."),
]

SPLIT_REORDER = [
    MD("## Handles: blocks and loops\n\n"
       "`tvm.tir.Schedule(MyModule)` starts a schedule. `get_block` and `get_loops` "
       "return *handles* (random variables, in TVM's words) to a block and to the loops "
       "around it, which later primitives take as arguments. A schedule is procedural: "
       "each call changes `sch.mod`, and a handle to a loop that a primitive replaced "
       "is no longer valid. If you run a cell twice and get an error about a loop that "
       "no longer exists, rerun from the cell that creates `sch`."),
    CODE('sch = tvm.tir.Schedule(MyModule)\nblock_Y = sch.get_block("Y", func_name="mm_relu")\n'
         "i, j, k = sch.get_loops(block_Y)\n[sch.get(loop).loop_var.name for loop in (i, j, k)]"),
    MD("## split\n\n"
       "`split` replaces a loop by nested loops whose extents multiply to the "
       "original: here `j` becomes `j_0` (32 iterations) and `j_1` (4), with the block "
       "axis bound to `j_0 * 4 + j_1`. `None` asks the schedule to infer one factor. "
       "Nothing else changes: the block is the same, only its binding is rewritten."),
    CODE("j0, j1 = sch.split(j, factors=[None, 4])\nsch.mod.show()"),
    MD("## reorder\n\n"
       "`reorder` permutes nested loops. We put `k` between the two halves of `j`; "
       "the program is now `lnumpy_mm_relu_v2`. The schedule allowed it because the "
       "block says its `vk` is a reduction: for each `(vi, vj)`, the `k` iterations "
       "still run in order, they are only interleaved with other columns' iterations."),
    CODE("sch.reorder(j0, k, j1)\nsch.mod.show()"),
    MD("### What changed in memory\n\n"
       "Why should the order of loops matter, when the arithmetic is the same? "
       "Because memory is not uniformly fast. A CPU reads memory through caches, and "
       "it reads a whole **cache line** (64 bytes: 16 floats in a row) at a time. "
       "Once a line is in the first-level cache, the next elements of it cost almost "
       "nothing; a read that misses the caches costs tens to hundreds of cycles. A "
       "program that walks memory contiguously uses every float of every line it "
       "fetches; one that jumps by a whole row each step uses one float per line. "
       "Matrices here are stored row by row, so `B[k, j]` and `B[k, j + 1]` are "
       "neighbours while `B[k, j]` and `B[k + 1, j]` are 512 bytes apart.\n\n"
       "The next two pictures trace the first 16 executions of block `Y` before and "
       "after the reorder (colour: when each element was first touched, yellow first). "
       "In the original order the reduction walks *down a column* of `B`: 16 "
       "executions, 16 different cache lines of `B`. After the reorder, the inner loop "
       "`j_1` walks *along a row* of `B` and of `Y`: four neighbours per line, and the "
       "same four elements of `Y` are updated again and again, so they stay in "
       "registers or the nearest cache."),
    figures.figure_cell("Before: the loop order `i, j, k`.", "order_ijk.png",
                        figures.access_figure(MyModule["mm_relu"], 16, ["A", "B", "Y"],
                                              blocks=["Y"])),
]

SPLIT_REORDER += [
    figure_of(split_reorder, "After `split` and `reorder`: the loop order `i, j_0, k, j_1`.",
              "order_ij0kj1.png", 16, ["A", "B", "Y"], blocks=["Y"]),
]

MOVE_BLOCKS = [
    MD("## Moving a block: reverse_compute_at\n\n"
       "So far the relu runs after the whole of `Y` is computed: 64 KB of `Y` are "
       "written, then read back much later, by which time the early rows have left the "
       "fastest caches. `reverse_compute_at(block, loop)` moves a *consumer* block under "
       "a loop of its producer, computing just the part that loop has finished. Under "
       "`j_0`, each strip of 4 elements of `Y` gets its relu right after its last "
       "update, while it is still hot. The schedule works out the region the block "
       "must cover (4 columns of one row) and creates a loop `ax0` for it."),
    CODE('block_C = sch.get_block("C", "mm_relu")\nsch.reverse_compute_at(block_C, j0)\n'
         "sch.mod.show()"),
    figure_of(split_reorder_compute_at,
              "The first 516 block executions, `Y` and `C` together: 512 updates of the "
              "strip `Y[0, 0:4]` (128 values of `k`, 4 columns each, reading rows of `B`), "
              "then the 4 relu blocks that read the strip and write `C[0, 0:4]`, the "
              "darkest elements.",
              "reverse_compute_at.png", 516, ["B", "Y", "C"]),
    MD("The mirror image is `compute_at(block, loop)`: it moves a *producer* under a "
       "loop of its consumer, computing just what that iteration will read. Starting "
       "again from `MyModule`, we cut the relu's columns into strips of 4 and compute "
       "each strip of `Y` right before it is needed. The result is the same loop "
       "structure reached from the other side; which one to use depends on which block "
       "owns the loops you want to keep."),
    CODE('''sch_at = tvm.tir.Schedule(MyModule)
ci, cj = sch_at.get_loops(sch_at.get_block("C", "mm_relu"))
cj0, cj1 = sch_at.split(cj, factors=[None, 4])
sch_at.compute_at(sch_at.get_block("Y", "mm_relu"), cj0)
sch_at.mod.show()'''),
    MD("## decompose_reduction\n\n"
       "A reduction block keeps its initialization (`T.init()`) and its update "
       "together, which is convenient while loops move: the two must stay in step. "
       "Once the loops are settled, `decompose_reduction(block, loop)` separates them: "
       "the init becomes its own block `Y_init`, placed before `loop` with its own "
       "copy of the spatial loops inside it, and the update becomes `Y_update`. "
       "(The lowering would do the equivalent with an `if vk == 0`; making it explicit "
       "removes the test from the inner loop and lets us schedule the init, e.g. "
       "vectorize it.)"),
    CODE("sch.decompose_reduction(block_Y, k)\nsch.mod.show()"),
    MD("The program now reads like this low-level numpy, which we would never have "
       "wanted to write and check by hand:\n\n"
       "```python\n"
       "for i in range(128):\n"
       "    for j0 in range(32):\n"
       "        for j1 in range(4):          # Y_init\n"
       "            Y[i, j0 * 4 + j1] = 0\n"
       "        for k in range(128):         # Y_update\n"
       "            for j1 in range(4):\n"
       "                Y[i, j0 * 4 + j1] += A[i, k] * B[k, j0 * 4 + j1]\n"
       "        for ax0 in range(4):         # C\n"
       "            C[i, j0 * 4 + ax0] = max(Y[i, j0 * 4 + ax0], 0)\n"
       "```"),
    MD("## The trace\n\nEvery step was recorded. The trace prints as a Python function "
       "that replays the schedule on the original module. Tuners (chapter 5) search "
       "over traces, not programs."),
    CODE("print(sch.trace)"),
]

TIME_VARIANTS = [
    MD("## Build and time the variants\n\n"
       "Each variant compiles with LLVM and must give numpy's answer. A single "
       "measurement on a shared machine can be far off, so `timing.compare` lets the "
       "programs take turns for several rounds after a short pause, keeps each one's "
       "best round, and flags a program whose two best rounds differ by more than 20% "
       "as *unsteady*. Ratios read \"x faster than numpy\" or \"x slower than numpy\"."),
    CODE('''def checked_timer(mod):
    lib = tvm.build(mod, target="llvm")
    args = [tvm.nd.array(a_np), tvm.nd.array(b_np), tvm.nd.empty((128, 128), "float32")]
    lib["mm_relu"](*args)
    np.testing.assert_allclose(args[2].numpy(), c_mm_relu, rtol=1e-4)
    return timing.kernel(lib, "mm_relu", *args)


variants = {"original": MyModule, "split/reorder/compute_at": sch.mod}
contenders = {name: checked_timer(mod) for name, mod in variants.items()}
contenders["numpy"] = timing.call(lambda: np.maximum(a_np @ b_np, 0))
times = timing.compare(contenders, rounds=5, min_repeat_ms=20, settle_ms=50)
for name in variants:
    print(times.describe(name, "numpy"))
print(times.describe("split/reorder/compute_at", "original"))'''),
    MD("On a quiet machine the transformed variant is several times faster than the "
       "original: the inner loop now reads `B` and updates `Y` contiguously, and LLVM "
       "can turn 4 consecutive columns into one vector operation. It is still behind "
       "numpy, which uses every core and a matmul tuned over decades. (If a line above "
       "is flagged unsteady, the machine was busy; rerun the cell before drawing "
       "conclusions.) The rest of the chapter adds the primitives that close the gap."),
]

PARALLEL = [
    MD("## fuse, parallel, vectorize, unroll\n\n"
       "Four primitives map loops onto the machine:\n\n"
       "* `fuse(l1, l2)` merges nested loops into one whose extent is the product, the "
       "inverse of `split`. It is mostly used to make one big loop to hand to "
       "`parallel`, so that the work divides evenly among the cores.\n"
       "* `parallel(loop)` runs the iterations of a loop on different cores. It is "
       "only allowed on loops bound to spatial axes, as chapter 2 showed.\n"
       "* `vectorize(loop)` executes the iterations of an inner loop as lanes of vector "
       "instructions (8 floats per instruction with AVX2, 16 with AVX-512).\n"
       "* `unroll(loop)` copies the body once per iteration, removing the loop's "
       "counter and branch and letting the compiler interleave the copies.\n\n"
       "Applied to our variant: the rows and strips run in parallel, the 4-wide "
       "loops of the init and of the relu become vector operations, and the update's "
       "4-wide loop is unrolled."),
    CODE('''sch_par = tvm.tir.Schedule(sch.mod)
i, j0, k, j1 = sch_par.get_loops(sch_par.get_block("Y_update", "mm_relu"))
sch_par.parallel(sch_par.fuse(i, j0))
sch_par.unroll(j1)
sch_par.vectorize(sch_par.get_loops(sch_par.get_block("Y_init", "mm_relu"))[-1])
sch_par.vectorize(sch_par.get_loops(sch_par.get_block("C", "mm_relu"))[-1])
sch_par.mod.show()'''),
    MD("A new `Schedule` made from `sch.mod` starts a fresh trace from the transformed "
       "program; the original `sch` is untouched."),
]

INLINE = [
    MD("## compute_inline\n\n"
       "Intermediate buffers cost memory and traffic. When a block computes each "
       "element independently (no reduction) and writes a buffer no one else needs, "
       "`compute_inline` removes the block and substitutes its expression wherever the "
       "buffer was read. A linear layer with a bias, made with TE, has such a block: "
       "`Z = Y + bias` between the matmul and the relu."),
    CODE('''from mlcbench import te

A = te.placeholder((128, 128), "float32", name="A")
B = te.placeholder((128, 128), "float32", name="B")
bias = te.placeholder((128,), "float32", name="bias")
k = te.reduce_axis((0, 128), "k")
Y = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
Z = te.compute((128, 128), lambda i, j: Y[i, j] + bias[j], name="Z")
C = te.compute((128, 128), lambda i, j: te.max(Z[i, j], 0), name="C")
linear = te.create_prim_func([A, B, bias, C])

sch_inline = tvm.tir.Schedule(linear)
sch_inline.compute_inline(sch_inline.get_block("Z"))
sch_inline.mod.show()'''),
    MD("`Z` is gone and the relu reads `Y[v_i, v_j] + bias[v_j]`. The matmul `Y` could "
       "not be inlined the same way: it is a reduction, and substituting it would "
       "repeat the whole sum at every use. `reverse_compute_inline` is the mirror "
       "primitive: it folds a consumer into its producer."),
]

CACHE = [
    MD("## cache_read and cache_write\n\n"
       "`cache_write(block, i, scope)` makes the block write its `i`-th output into a "
       "new buffer in storage `scope` and adds a block that copies it back; "
       "`cache_read(block, i, scope)` makes it read its `i`-th input from a copy. "
       "Combined with `compute_at` / `reverse_compute_at`, the copy covers only a "
       "tile. The most common use on a CPU is a **register tile**: split both `i` and "
       "`j`, put `k` outside the tile's loops, and accumulate the tile in `local` "
       "storage (registers, once LLVM is done with it). Each value of `A` loaded is "
       "then used for 32 columns and each value of `B` for 8 rows, instead of once."),
    CODE('''sch_tile = tvm.tir.Schedule(MyModule)
block_Y = sch_tile.get_block("Y", "mm_relu")
i, j, k = sch_tile.get_loops(block_Y)
i0, i1 = sch_tile.split(i, factors=[None, 8])
j0, j1 = sch_tile.split(j, factors=[None, 32])
sch_tile.reorder(i0, j0, k, i1, j1)
Y_local = sch_tile.cache_write(block_Y, 0, "local")
sch_tile.reverse_compute_at(Y_local, j0)
B_tile = sch_tile.cache_read(block_Y, 1, "global")
sch_tile.compute_at(B_tile, j0)
sch_tile.mod.show()'''),
    figure_of(tiled, "The register tile: the first 512 executions of block `Y` (two values "
              "of `k`) read a column of 8 values of `A`, a row of 32 values of `B`, and "
              "update the whole 8 x 32 tile of `Y_local` twice.",
              "register_tile.png", 512, ["A", "B", "Y_local"], window=40, blocks=["Y"]),
    MD("Here `cache_read` copies the 128 x 32 panel of `B` that a tile needs into "
       "`B_global` before the tile starts: the copy is contiguous, and it can be given "
       "a layout of our choosing with `transform_layout` (packing, as BLAS libraries "
       "do). The printed buffers keep the full 128 x 128 shape; the lowering shrinks "
       "each to the region it is actually used for.\n\n"
       "## A tiled matmul at 512^3\n\n"
       "Together these primitives build a fast CPU kernel: an 8 x 32 register tile "
       "(`split`/`reorder`), the accumulator cached in `local` storage (`cache_write` + "
       "`reverse_compute_at`), `decompose_reduction`, `unroll`, `vectorize` and "
       "`parallel` on the fused outer loops. `benchmarks/matmul_schedule.py` runs it at "
       "1024^3 against the FMA peak."),
    CODE('''def tiled_matmul(n):
    A, B = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    r = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    sch = tvm.tir.Schedule(te.create_prim_func([A, B, C]))
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 8])
    j0, j1 = sch.split(j, factors=[None, 32])
    sch.reorder(i0, j0, k, i1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    init = sch.decompose_reduction(block, k)
    sch.parallel(sch.fuse(i0, j0))
    sch.unroll(i1)
    sch.vectorize(j1)
    rows, cols = sch.get_loops(init)[-2:]
    sch.unroll(rows)
    sch.vectorize(cols)
    sch.vectorize(sch.get_loops(write_back)[-1])
    return sch

n = 512
sch_tiled = tiled_matmul(n)
lib = tvm.build(sch_tiled.mod, target="llvm")
x = rng.random((n, n), dtype="float32")
y = rng.random((n, n), dtype="float32")
z = np.zeros((n, n), "float32")
lib["main"](x, y, z)
np.testing.assert_allclose(z, x @ y, rtol=1e-3)
xs, ys, zs = tvm.nd.array(x), tvm.nd.array(y), tvm.nd.array(z)
times = timing.compare({"tiled": timing.kernel(lib, "main", xs, ys, zs),
                        "numpy": timing.call(lambda: x @ y)},
                       rounds=5, min_repeat_ms=50, settle_ms=100)
print(times.describe("tiled", "numpy"))
print(f"tiled {2 * n**3 / times['tiled'].best / 1e9:.0f} GFLOPS, "
      f"numpy {2 * n**3 / times['numpy'].best / 1e9:.0f} GFLOPS")'''),
    MD("On a quiet machine this schedule comes within a small factor of numpy's BLAS, "
       "from a starting point tens of times slower, and every step on the way was "
       "checked. What remains (packing `B` for the cache, choosing tiles per machine) "
       "is a search problem, the subject of chapter 5."),
]

SAFETY = [
    MD("## A refused primitive teaches\n\nA primitive that would change the result is "
       "refused with `ScheduleError`; the message names the rule and marks the IR. "
       "The schedule stays as it was, so you can try something else."),
    CODE('before = sch.mod\ntry:\n    sch.vectorize(sch.get_loops("Y_update")[2])   # k: a reduction\n'
         "except tvm.tir.ScheduleError as err:\n    print(str(err)[:900])\n"
         "assert sch.mod is before"),
    MD("## A stochastic schedule\n\n`sample_perfect_tile` draws factors whose product is the "
       "loop extent; the trace records the **decision**, so a tuner can change it and "
       "replay. The schedule is now a *space* of programs, one per decision."),
    CODE('''def stochastic_schedule(mod, seed):
    sch = tvm.tir.Schedule(mod, seed=seed)
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j0, j1 = sch.split(j, factors=j_factors)
    sch.reorder(j0, k, j1)
    sch.reverse_compute_at(sch.get_block("C", "mm_relu"), j0)
    sch.decompose_reduction(block_Y, k)
    return sch

sch_random = stochastic_schedule(MyModule, seed=7)
print(sch_random.trace)'''),
]

EXPLORER = [
    MD("## Play: the ScheduleExplorer\n\n"
       "Chapter 3b, [`03_schedule_explorer.ipynb`](03_schedule_explorer.ipynb), is a "
       "playground for everything above: a widget where each primitive is a button, "
       "every step shows the new TVMScript and what changed, steps form a tree you can "
       "undo and fork, and *Run* checks a step against the unscheduled module and "
       "times it. Every button is also a Python call:"),
    CODE('''from mlcbench_widgets import ScheduleExplorer

explorer = ScheduleExplorer(MyModule)
explorer.apply("split", loop="j@Y", factors=[None, 4])
explorer.apply("reorder", loops=["j_0", "k", "j_1"])
print(explorer.tree.render())'''),
]

CLOSING = [
    MD("## Discussion\n\n"
       "Compare the two ways of obtaining a fast program. The traditional one is "
       "develop, build, run, and develop again: each variant is a new program, written "
       "and checked by hand. The MLC way adds transformations between programs: the "
       "simple version is written once, and variants are *derived* from it by steps "
       "that are checked automatically, recorded, and replayable on a new shape. This "
       "does not replace expertise: the choice of tiles and which loops to parallelize "
       "came from knowing the hardware, and a hand-written kernel can always join a "
       "module. What changes is the cost of trying an idea, and once trying is cheap, "
       "it can be automated.\n\n"
       "## Summary\n\n"
       "* A `Schedule` transforms a module one checked primitive at a time; `sch.mod` "
       "is the current program and `sch.trace` the steps.\n"
       "* Loops: `split`, `reorder`, `fuse`; mapping to hardware: `parallel` (spatial "
       "loops only), `vectorize`, `unroll`.\n"
       "* Blocks: `compute_at` / `reverse_compute_at` move a producer or consumer under "
       "another block's loop; `compute_inline` removes an element-wise block; "
       "`decompose_reduction` separates the init of a reduction.\n"
       "* Memory: `cache_read` / `cache_write` stage a tile in another buffer or scope, "
       "e.g. a register tile in `local`.\n"
       "* Loop order decides which memory the inner loops touch; contiguous, reused "
       "accesses make the difference between the naive program and one close to BLAS."),
]

cells = (INTRO + VARIANT + SPLIT_REORDER + MOVE_BLOCKS + TIME_VARIANTS + PARALLEL + INLINE
         + CACHE + SAFETY + EXPLORER + CLOSING + EXERCISE_CELLS)
nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                        "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "notebooks/03_tensorir_in_action.ipynb")
