"""Write notebooks/03_tensorir_in_action.ipynb (run from the repository root)."""
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

MD, CODE = new_markdown_cell, new_code_cell
cells = [
    MD("# 3. TensorIR in action: transforming tensor programs with a Schedule\n\n"
       "A TensorIR program says *what* to compute; a **Schedule** rewrites *how*: it "
       "splits, reorders and moves loops and blocks while keeping the result the same. "
       "Every step is checked, recorded in a **trace**, and can be replayed.\n\n"
       "We start again from `mm_relu` of chapter 2."),
    CODE("import time\nimport numpy as np\nimport mlcbench as tvm\n"
         "from mlcbench.script import tir as T, ir as I"),
    CODE('''@I.ir_module
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
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))'''),
    MD("## Handles: blocks and loops\n\n`get_block` and `get_loops` return *handles* "
       "(random variables in TVM's words) that later primitives take as arguments."),
    CODE('sch = tvm.tir.Schedule(MyModule)\nblock_Y = sch.get_block("Y", func_name="mm_relu")\n'
         "i, j, k = sch.get_loops(block_Y)\n[sch.get(loop).loop_var.name for loop in (i, j, k)]"),
    MD("## split and reorder\n\n`split` turns `j` into `j_0 * 4 + j_1`; `None` asks the "
       "schedule to infer the outer extent."),
    CODE("j0, j1 = sch.split(j, factors=[None, 4])\nsch.mod.show()"),
    MD("`reorder` puts `k` between the two halves of `j`, so the inner loop walks four "
       "consecutive columns of `B` and `Y`."),
    CODE("sch.reorder(j0, k, j1)\nsch.mod.show()"),
    MD("## Moving a block: reverse_compute_at\n\nThe relu block `C` can run right after "
       "each 4-column strip of `Y` is ready, under loop `j_0`."),
    CODE('block_C = sch.get_block("C", "mm_relu")\nsch.reverse_compute_at(block_C, j0)\n'
         "sch.mod.show()"),
    MD("## decompose_reduction\n\nThe `T.init()` becomes its own block `Y_init`, placed "
       "before loop `k`."),
    CODE("sch.decompose_reduction(block_Y, k)\nsch.mod.show()"),
    MD("## The trace\n\nEvery step was recorded. The trace prints as a Python function "
       "that replays the schedule on the original module."),
    CODE("print(sch.trace)"),
    MD("## A refused primitive teaches\n\nA primitive that would change the result is "
       "refused with `ScheduleError`; the message names the rule and marks the IR. "
       "The schedule stays as it was."),
    CODE('before = sch.mod\ntry:\n    sch.vectorize(sch.get_loops("Y_update")[2])   # k: a reduction\n'
         "except tvm.tir.ScheduleError as err:\n    print(str(err)[:900])\n"
         "assert sch.mod is before"),
    MD("## A stochastic schedule\n\n`sample_perfect_tile` draws factors whose product is the "
       "loop extent; the trace records the **decision**, so a tuner can change it and "
       "replay."),
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
    MD("## Build and time every variant\n\nEach schedule compiles with LLVM; all give "
       "numpy's answer. A single measurement on a shared machine can be far off, so "
       "`mlcbench.runtime.timing.compare` lets the programs take turns for several rounds "
       "after a short pause, keeps each one's best round, and flags a program whose two "
       "best rounds differ by more than 20% as *unsteady*. Ratios always read "
       "\"x faster than numpy\" or \"x slower than numpy\"."),
    CODE('''rng = np.random.default_rng(0)
a = rng.random((128, 128), dtype="float32")
b = rng.random((128, 128), dtype="float32")
expected = np.maximum(a @ b, 0)

from mlcbench.runtime import timing

def checked_timer(mod):
    lib = tvm.build(mod, target="llvm")
    args = [tvm.nd.array(a), tvm.nd.array(b), tvm.nd.array(np.zeros((128, 128), "float32"))]
    lib["mm_relu"](*args)
    np.testing.assert_allclose(args[2].numpy(), expected, rtol=1e-4)
    return timing.kernel(lib, "mm_relu", *args)

variants = {"original": MyModule, "split/reorder/...": sch.mod,
            "sampled tile": sch_random.mod}
contenders = {name: checked_timer(mod) for name, mod in variants.items()}
contenders["numpy"] = timing.call(lambda: np.maximum(a @ b, 0))
times = timing.compare(contenders, rounds=5, min_repeat_ms=20, settle_ms=50)
for name in variants:
    print(times.describe(name, "numpy"))'''),
    MD("## A tiled matmul at 512^3\n\nThe same primitives build a fast CPU kernel: an "
       "8 x 32 register tile (`split`/`reorder`), the accumulator cached in `local` "
       "storage (`cache_write` + `reverse_compute_at`), `decompose_reduction`, "
       "`unroll`, `vectorize` and `parallel` on the fused outer loops. "
       "`benchmarks/matmul_schedule.py` runs it at 1024^3 against the FMA peak."),
    CODE('''from mlcbench import te

def tiled_matmul(n):
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
]
nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                        "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "notebooks/03_tensorir_in_action.ipynb")
