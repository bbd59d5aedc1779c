"""Write notebooks/02_tensor_programs.ipynb (run from the repository root)."""
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import mlcbench as tvm
import tensorir_figures as figures
from tensor_program_exercises import EXERCISE_CELLS

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
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                vk = T.axis.reduce(128, k)
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j)
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))'''

HEADER = "import numpy as np\nimport mlcbench as tvm\nfrom mlcbench.script import tir as T, ir as I\n"
MyModule = tvm.script.from_source("from mlcbench.script import tir as T, ir as I\n" + MM_RELU)

INTRO = [
    MD("# 2. Tensor programs\n\n"
       "Chapter 1 followed a whole model through the compiler and saw it end as a "
       "handful of *kernels*: small functions that each take a few tensors, loop over "
       "them and write a result. A matrix multiplication, a relu, a convolution, or a "
       "fusion of several such operations. The MLC course calls them **primitive "
       "tensor functions**, and most of the running time of a model is spent inside "
       "them. This chapter is about how we write one down so that a compiler can "
       "transform it, and what we do with it once it is written: print it, compile it "
       "to machine code, run it and time it.\n\n"
       "The representation we use is **TensorIR**, the loop-level language of Apache "
       "TVM, which mlcbench follows closely; its Python-embedded syntax is called "
       "**TVMScript**. Everything here is spelled as in the course: after "
       "`import mlcbench as tvm`, the course's code runs unchanged.\n\n"
       "The plan: we start from numpy, rewrite a small computation as explicit loops "
       "(\"low-level numpy\"), translate that into TVMScript element by element, learn "
       "what the one new element, the **block**, adds and why, then build, run and "
       "time the result. At the end we meet a second way to create the same program, "
       "**tensor expressions** (TE), and three exercises."),
    CODE(HEADER),
]

NUMPY = [
    MD("## From numpy to a loop nest\n\n"
       "Our running example is the body of a linear layer with a relu activation, for "
       "two 128 x 128 matrices `A` and `B`:\n\n"
       "* `Y[i, j] = sum over k of A[i, k] * B[k, j]`, a matrix multiplication, then\n"
       "* `C[i, j] = max(Y[i, j], 0)`, the relu.\n\n"
       "In numpy it is one line. numpy hands the multiplication to a BLAS library "
       "written in C and assembly, and the relu to one of its own C loops:"),
    CODE('''rng = np.random.default_rng(0)
a_np = rng.random((128, 128), dtype="float32")
b_np = rng.random((128, 128), dtype="float32")
c_mm_relu = np.maximum(a_np @ b_np, 0)'''),
    MD("A compiler has to look *under* such array operations: what loops run, in "
       "which order, over which memory. To see that, the course writes the same "
       "computation in a restricted style of numpy, **low-level numpy**: explicit "
       "loops instead of array operations, and every array allocated up front with "
       "`np.empty` and passed in, the output included. That is not how anyone writes "
       "numpy, but it is how the libraries underneath are built, and how deployed "
       "programs work: memory is planned separately from computation, and a kernel "
       "writes into buffers it is given (*destination passing*)."),
    CODE('''def lnumpy_mm_relu(A: np.ndarray, B: np.ndarray, C: np.ndarray):
    n = A.shape[0]
    Y = np.empty((n, n), dtype="float32")
    for i in range(n):
        for j in range(n):
            for k in range(n):
                if k == 0:
                    Y[i, j] = 0
                Y[i, j] = Y[i, j] + A[i, k] * B[k, j]
    for i in range(n):
        for j in range(n):
            C[i, j] = max(Y[i, j], 0)


# Python runs these loops about a million times slower than machine code, so we
# check the loop nest on the 32 x 32 corner only.
c_np = np.empty((32, 32), dtype="float32")
lnumpy_mm_relu(a_np[:32, :32], b_np[:32, :32], c_np)
np.testing.assert_allclose(c_np, np.maximum(a_np[:32, :32] @ b_np[:32, :32], 0), rtol=1e-5)'''),
    MD("This program has two stages: it fills an intermediate buffer `Y` with the "
       "matrix product, then applies the relu in a second loop nest. It is one way to "
       "compute `mm_relu` among many: the loops could be reordered, cut into tiles, "
       "the relu could be applied right after each element of `Y` is finished, and "
       "all of those variants compute the same numbers at very different speeds. "
       "Finding the fast ones is what the rest of the course is about. For now, note "
       "the three ingredients every such program has: multi-dimensional **buffers**, "
       "**loops** over their dimensions, and **statements** executed inside the loops."),
]

TVMSCRIPT = [
    MD("## The same program in TensorIR\n\n"
       "Here is `mm_relu` in TVMScript. The code is valid Python syntax, but it is not "
       "executed by Python: the decorators read its source and build a TensorIR "
       "program from it."),
    CODE(MM_RELU),
    MD("Most of it maps one to one onto the low-level numpy version:\n\n"
       "| low-level numpy | TensorIR |\n|---|---|\n"
       "| `def lnumpy_mm_relu(A: np.ndarray, ...)` | `def mm_relu(A: T.Buffer((128, 128), \"float32\"), ...)` |\n"
       "| `Y = np.empty((n, n), dtype=\"float32\")` | `Y = T.alloc_buffer((128, 128), \"float32\")` |\n"
       "| `for i in range(n): for j ...: for k ...:` | `for i, j, k in T.grid(128, 128, 128):` |\n"
       "| `if k == 0: Y[i, j] = 0` | `with T.init(): Y[vi, vj] = T.float32(0)` |\n"
       "| `Y[i, j] = Y[i, j] + A[i, k] * B[k, j]` | `Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]` |\n"
       "| `C[i, j] = max(Y[i, j], 0)` | `C[vi, vj] = T.max(Y[vi, vj], T.float32(0))` |\n\n"
       "**Buffers** carry their shape and element type in the signature. That is "
       "information a compiler can use: it can generate code specialized for 128 x 128 "
       "float32 matrices, and check at run time that it is given exactly those. "
       "`T.grid` is shorthand for nested loops. The one construct numpy has no "
       "counterpart for is `T.block`, and it is the heart of TensorIR."),
]

BLOCKS = [
    MD("## Blocks and block axes\n\n"
       "A **block** is TensorIR's unit of computation. Compare the block `Y` with the "
       "numpy statement it replaces:\n\n"
       "```python\n"
       "with T.block(\"Y\"):                      # numpy:\n"
       "    vi = T.axis.spatial(128, i)          # vi, vj, vk = i, j, k\n"
       "    vj = T.axis.spatial(128, j)\n"
       "    vk = T.axis.reduce(128, k)\n"
       "    with T.init():                       # if vk == 0:\n"
       "        Y[vi, vj] = T.float32(0)         #     Y[vi, vj] = 0\n"
       "    Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]\n"
       "```\n\n"
       "The block has its own iteration variables, the **block axes** `vi, vj, vk`, "
       "and each declaration `v = T.axis.<kind>(<range>, <value>)` says three things:\n\n"
       "1. **where the axis is bound**: `vi` takes the value of the loop variable `i` "
       "(later, after transformations, it can be an expression such as `j_0 * 4 + j_1`);\n"
       "2. **its range**: `vi` goes over `range(128)`, whatever loops surround the "
       "block;\n"
       "3. **its kind**: `spatial` or `reduce`.\n\n"
       "A **spatial** axis indexes the output: fix `vi = 0, vj = 1` and the block, run "
       "for all 128 values of `vk`, computes `Y[0, 1]` and touches no other element of "
       "`Y`. Different values of the spatial axes give independent results. A "
       "**reduce** axis is summed over: all 128 values of `vk` accumulate into the "
       "same `Y[vi, vj]`, so they depend on each other through that element."),
    figures.figure_cell(
        "The picture traces the program: the first 128 executions of block `Y` in the "
        "original loop order (`vi = vj = 0`, `vk = 0 .. 127`), with every element of "
        "`A`, `B` and `Y` coloured by the execution that first touched it (yellow first, "
        "purple last, white not yet). The reduce axis walks along row 0 of `A` and down "
        "column 0 of `B`; the spatial axes pick the one element `Y[0, 0]` they all "
        "accumulate into. (These pictures are computed from the programs themselves, by "
        "running their loops in Python on indices only: `notebooks/tools/tensorir_figures.py`.)",
        "block_axes.png",
        figures.access_figure(MyModule["mm_relu"], 128, ["A", "B", "Y"], window=128,
                              blocks=["Y"], title="block Y: vi = vj = 0, vk = 0 .. 127")),
    MD("### Why the extra information?\n\n"
       "The block axes make a block **self-contained**: it states what iteration space "
       "it needs and how each point of it relates to its buffers, independently of the "
       "loops that happen to run it today. Chapter 3 changes those loops, splits them, "
       "reorders them, moves blocks under other loops, and every such change is checked "
       "against what the blocks declare. The kinds matter most: spreading the iterations "
       "of a spatial axis over several cores is safe, since they write different "
       "elements, while doing the same to a reduce axis would let two cores update one "
       "`Y[vi, vj]` at once. So the schedule refuses it, and says why:"),
    CODE('''sch = tvm.tir.Schedule(MyModule)
i, j, k = sch.get_loops(sch.get_block("Y", func_name="mm_relu"))
try:
    sch.parallel(k)
except tvm.tir.ScheduleError as err:
    print(str(err).splitlines()[0])
sch.parallel(i)     # a spatial loop: accepted
print("parallel(i) accepted")'''),
    MD("When every block axis is simply one surrounding loop, `T.axis.remap` declares "
       "them in one line: `\"SSR\"` reads spatial, spatial, reduce. It is only "
       "shorthand, and mlcbench can prove it: the two modules are **structurally "
       "equal** (the same program, up to the names of variables)."),
    CODE('''@I.ir_module
class MyModuleWithAxisRemapSugar:
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
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


tvm.ir.assert_structural_equal(MyModuleWithAxisRemapSugar, MyModule)
print("the same program")'''),
]

MODULES = [
    MD("## Functions, modules and attributes\n\n"
       "`@T.prim_func` makes a **PrimFunc** (a primitive tensor function) and "
       "`@I.ir_module` gathers functions into an **IRModule**, the unit that every "
       "transformation takes and returns and that `build` compiles. A module can hold "
       "several functions: the matmul and the relu can just as well be two kernels, "
       "which is how a model's graph calls them before fusion (chapter 4).\n\n"
       "`T.func_attr` attaches attributes: `global_symbol` is the name the compiled "
       "function is exported under, and `tir.noalias` promises that the buffers do "
       "not overlap in memory, which lets the code generator keep values in registers "
       "instead of reloading them after every store."),
    CODE('''@I.ir_module
class MyModuleWithTwoFunctions:
    @T.prim_func
    def mm(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
           Y: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]

    @T.prim_func
    def relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "relu", "tir.noalias": True})
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.max(A[vi, vj], T.float32(0))


print(type(MyModule).__name__, type(MyModule["mm_relu"]).__name__)
print([gv.name_hint for gv in MyModuleWithTwoFunctions.get_global_vars()])'''),
    MD("`show()` prints a module back as TVMScript. mlcbench filled in what we left "
       "implicit: the `T.reads` / `T.writes` regions of every block, found by analysing "
       "its body. Printing is how we will inspect every step of a transformation."),
    CODE("MyModule.show()"),
]

BUILD = [
    MD("## From blocks to loops\n\n"
       "Before LLVM sees the program, a pipeline of passes turns blocks into plain loops "
       "(`LowerInitBlock` makes `T.init()` an `if vk == 0`, exactly our low-level numpy), "
       "flattens 2-D buffers to 1-D and simplifies index arithmetic. Blocks are for "
       "analysis and transformation; once those are done, they are lowered away. An "
       "*instrument* watches every pass; here it times them."),
    CODE('''from mlcbench.ir.instrument import PassTimingInstrument

pass_timing = PassTimingInstrument()
with tvm.transform.PassContext(instruments=[pass_timing]):
    lowered = tvm.lower(MyModule)
print(pass_timing.render())
lowered.show()'''),
    MD("## Build, run, check\n\n"
       "`tvm.build` lowers the module and generates machine code through LLVM for the "
       "target `\"llvm\"`, the CPU we run on. The result behaves like a dictionary of "
       "compiled functions that take `tvm.nd` arrays, and, in keeping with destination "
       "passing, the output array is allocated by the caller."),
    CODE('''lib = tvm.build(MyModule, target="llvm")
a, b = tvm.nd.array(a_np), tvm.nd.array(b_np)
c = tvm.nd.empty((128, 128), "float32")
lib["mm_relu"](a, b, c)
np.testing.assert_allclose(c.numpy(), c_mm_relu, rtol=1e-5)
c'''),
    MD("Compiled functions check their arguments against the declared buffers before "
       "any machine code runs, so a mistake is an error message, not a crash:"),
    CODE('''try:
    lib["mm_relu"](a, b, tvm.nd.empty((128, 64), "float32"))
except ValueError as err:
    print(err)'''),
    MD("## Timing\n\n"
       "`time_evaluator` runs the function `number` times per measurement and reports "
       "the mean. One measurement on a shared machine can be far off (another program "
       "holds a core, numpy's threads still spin), so "
       "`mlcbench.runtime.timing.compare` lets our kernel and numpy take turns for "
       "several rounds after a short pause and keeps each one's best round; a program "
       "whose two best rounds differ by more than 20% is flagged *unsteady*. Ratios "
       "always read \"x faster than numpy\" or \"x slower than numpy\"."),
    CODE('''from mlcbench.runtime import timing

times = timing.compare({"mm_relu": timing.kernel(lib, "mm_relu", a, b, c),
                        "numpy": timing.call(lambda: np.maximum(a_np @ b_np, 0))},
                       rounds=5, min_repeat_ms=20, settle_ms=50)
print(times.describe("mm_relu", "numpy"))'''),
    MD("Our loop nest is machine code now, a thousand times faster than the same loops "
       "in Python. On a quiet machine it is still several times slower than numpy's "
       "BLAS (the line above says how it went this time; when a figure is flagged "
       "unsteady, other work disturbed it, and rerunning the cell gives a truer "
       "picture). Nothing about the arithmetic differs: both do 128^3 multiply-adds. What differs is *how*: the order in which "
       "memory is visited, how many of those multiply-adds one instruction performs, "
       "and how many cores take part. Here is the same matmul (without the relu, at "
       "512 x 512) written by hand with the rows spread over the cores (`T.parallel`) "
       "and 16 columns handled at a time in one vector register (`T.vectorized`), and "
       "with `k` moved outside the column loop so that the inner loop walks along rows "
       "of `B` and `C`, which are contiguous in memory:"),
    CODE('''@T.prim_func
def matmul(A: T.Buffer((512, 512), "float32"), B: T.Buffer((512, 512), "float32"),
           C: T.Buffer((512, 512), "float32")):
    T.func_attr({"global_symbol": "matmul", "tir.noalias": True})
    for i in T.parallel(512):
        for j0 in range(32):
            for j1 in T.vectorized(16):
                C[i, j0 * 16 + j1] = T.float32(0)
        for k in range(512):
            for j0 in range(32):
                for j1 in T.vectorized(16):
                    C[i, j0 * 16 + j1] = C[i, j0 * 16 + j1] + A[i, k] * B[k, j0 * 16 + j1]

fast = tvm.build(matmul, target="llvm")
x_np = rng.random((512, 512), dtype="float32")
y_np = rng.random((512, 512), dtype="float32")
x, y, z = tvm.nd.array(x_np), tvm.nd.array(y_np), tvm.nd.empty((512, 512), "float32")
fast["matmul"](x, y, z)
np.testing.assert_allclose(z.numpy(), x_np @ y_np, rtol=1e-3)
times = timing.compare({"parallel + vectorized": timing.kernel(fast, "matmul", x, y, z),
                        "numpy": timing.call(lambda: x_np @ y_np)},
                       rounds=5, min_repeat_ms=50, settle_ms=100)
print(times.describe("parallel + vectorized", "numpy"))'''),
    MD("On a quiet machine this closes most of the gap to numpy, from several times "
       "slower to within a small factor. This version has no blocks at all: TVMScript also accepts plain loops and "
       "stores, as low-level numpy does. It is fast, and it is also hard to write, hard "
       "to check, and specific to one shape and one machine. Writing every variant by "
       "hand does not scale. Chapter 3 obtains such programs from the simple `mm_relu` "
       "instead, by **transforming** it one checked step at a time; that is what the "
       "block axes are for."),
]

TE = [
    MD("## Tensor expressions: generating the program\n\n"
       "Writing loop nests by hand is the exception. Most kernels in a model are "
       "*generated* from a higher-level description, and the most common one is the "
       "**tensor expression** (TE) language. `te.placeholder` declares an input "
       "tensor; `te.compute(shape, fcompute)` declares an output whose element at "
       "index `(i, j)` is `fcompute(i, j)`; `te.reduce_axis` and `te.sum` express a "
       "reduction. A vector add first:"),
    CODE('''from mlcbench import te

A = te.placeholder((128,), "float32", name="A")
B = te.placeholder((128,), "float32", name="B")
C = te.compute((128,), lambda i: A[i] + B[i], name="C")
te.create_prim_func([A, B, C]).show()'''),
    MD("`te.create_prim_func` takes the tensors that become the function's parameters, "
       "inputs first and outputs last (every other tensor, here none, becomes an "
       "intermediate `T.alloc_buffer`), and generates a TensorIR function with one block "
       "per `te.compute`. It knows which axes are spatial (the output's indices) and which "
       "reduce (those given to `te.sum`), so the axes come out declared correctly. "
       "Now `mm_relu`: the lambda `lambda i, j: te.sum(A[i, k] * B[k, j], axis=k)` "
       "is the formula `Y[i, j] = sum over k of A[i, k] * B[k, j]`, almost "
       "word for word."),
    CODE('''A = te.placeholder((128, 128), "float32", name="A")
B = te.placeholder((128, 128), "float32", name="B")
k = te.reduce_axis((0, 128), "k")
Y = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
C = te.compute((128, 128), lambda i, j: te.max(Y[i, j], 0), name="C")

te_func = te.create_prim_func([A, B, C]).with_attr({"global_symbol": "mm_relu"})
MyModuleFromTE = tvm.IRModule({"mm_relu": te_func})
MyModuleFromTE.show()
tvm.ir.assert_structural_equal(MyModuleFromTE, MyModule)
print("TE generated exactly the program we wrote by hand")'''),
    MD("Three ways to obtain a TensorIR function have now appeared: writing TVMScript "
       "(best for reading, debugging and trying an idea by hand), generating it with TE "
       "(how the operator library `topi` and the model frontends of chapter 6 create "
       "kernels), and, from chapter 3 on, **transforming** an existing one. They all "
       "meet in the same `IRModule`, so they mix freely: print a generated program, "
       "edit it, feed it back in."),
]

SUMMARY = [
    MD("## Summary\n\n"
       "* A primitive tensor function is a loop nest over buffers; low-level numpy "
       "shows it in plain Python, TensorIR shows it in a form a compiler can analyse.\n"
       "* TensorIR has buffers with shapes and types, loops, and **blocks**; a block's "
       "axes say where they are bound, their range, and whether they are spatial "
       "(independent outputs) or reduce (accumulated into one output).\n"
       "* The axes make a block self-contained, which is what lets a schedule "
       "transform loops and check each step (no `parallel` on a reduce loop).\n"
       "* `tvm.build` lowers blocks to loops and compiles with LLVM; compiled functions "
       "take `tvm.nd` arrays, outputs included; `timing.compare` times them against "
       "numpy fairly.\n"
       "* TE and `te.create_prim_func` generate the same programs from formulas.\n\n"
       "The exercises below practise writing tensor programs. Chapter 3 transforms them."),
]

cells = INTRO + NUMPY + TVMSCRIPT + BLOCKS + MODULES + BUILD + TE + SUMMARY + EXERCISE_CELLS
nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                        "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "notebooks/02_tensor_programs.ipynb")
