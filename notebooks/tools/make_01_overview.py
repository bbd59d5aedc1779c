"""Write notebooks/01_overview.ipynb (run from the repository root)."""
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

MD, CODE = new_markdown_cell, new_code_cell


def SETUP(source):
    """A cell the exercise tests run too (tests/notebooks/test_ch01_exercises.py)."""
    return new_code_cell(source, metadata={"tags": ["exercise-setup"]})


cells = [
    MD("# 1. Overview: what an ML compiler does\n\n"
       "A trained model is a program. It was written in a framework (PyTorch, ONNX, "
       "JAX ...) as a graph of operators: *multiply these two matrices, add a bias, clip "
       "the negatives, multiply again*. To run it, somebody has to turn that description "
       "into instructions a processor executes. Machine-learning compilation (MLC) is the "
       "process of transforming and optimizing a model from its development form into its "
       "deployment form.\n\n"
       "Three goals pull MLC in different directions:\n\n"
       "* **Integration and minimal dependencies.** The deployed model should carry only "
       "the code it needs, not a whole training framework.\n"
       "* **Leveraging hardware.** Every processor has its own tricks: vector "
       "instructions, several cores, caches of a given size, matrix units. Generic code "
       "uses few of them; specialized code uses many.\n"
       "* **Optimization in general.** Work that can be removed, merged or reordered "
       "without changing the answer should be, so that the same result arrives sooner "
       "and with less memory.\n\n"
       "This chapter follows one small model through the whole pipeline of mlcbench, "
       "end to end, before the rest of the course takes each stage apart. Nothing here "
       "needs to be understood in detail yet: the aim is a map, so that later chapters "
       "have a place to hang on."),
    MD("## The pipeline at a glance\n\n"
       "```\n"
       " model (nn.Module / ONNX / torch.fx)\n"
       "    |  import\n"
       "    v\n"
       " graph IR (Relax): one line per operator, R.matmul, R.add, R.nn.relu ...\n"
       "    |  LegalizeOps: every operator becomes a tensor program\n"
       "    |  FuseOps + FuseTIR: neighbouring operators become one kernel\n"
       "    v\n"
       " tensor programs (TensorIR): loops, blocks, buffers, one PrimFunc per kernel\n"
       "    |  schedules: split, reorder, vectorize, parallel ... (chapters 2, 3, 5)\n"
       "    |  lowering passes: flatten buffers, simplify, vectorize loops\n"
       "    v\n"
       " machine code (LLVM): x86 instructions in a loaded library\n"
       "    |\n"
       "    v\n"
       " run: the Relax virtual machine calls the kernels in order\n"
       "```\n\n"
       "Each arrow is a *pass*: a function from one program to another, equivalent, "
       "program. The compiler is a list of such passes, and mlcbench lets you stop after "
       "any of them and look. That is the whole idea of this course: an ML compiler is "
       "not a black box but a sequence of small, inspectable program transformations. "
       "Two levels of abstraction carry most of the weight. The **graph IR** knows "
       "operators and the tensors flowing between them; it decides *which* computations "
       "happen and how they are grouped. The **tensor IR** knows loops and memory; it "
       "decides *how* one group of computations runs on the machine."),
    CODE("import numpy as np\nimport mlcbench as tvm\n"
         "from mlcbench import relax, datasets\n"
         "from mlcbench.relax.frontend import nn\n"
         "from IPython.display import HTML, display"),
    MD("## The model\n\n"
         "Our model is the handwritten-digit classifier that ships in `datasets/`: a "
         "two-layer perceptron trained with numpy on 8x8 images. Each image is a vector of "
         "64 pixel intensities; the first layer maps it to 128 hidden features, a ReLU "
         "clips the negative ones to zero, and the second layer maps the 128 features to "
         "10 scores, one per digit. The highest score is the prediction. In numpy the "
         "whole model is three lines, and `datasets.mlp_forward` is exactly that. It is "
         "our reference: whatever the compiler does, its answer must match this one."),
    CODE("_, _, x_test, y_test = datasets.load_digits(flat=True)\n"
         "params = datasets.load_mlp_params()\n"
         "expected = datasets.mlp_forward(x_test, params)\n"
         "print('images:', x_test.shape, ' weights:', {k: v.shape for k, v in params.items()})\n"
         "print('numpy accuracy:', (expected.argmax(1) == y_test).mean())"),
    MD("We describe the same model the way a framework would, with `relax.frontend.nn`, "
       "whose `Module`, `Linear` and `ReLU` mirror PyTorch's. Describing is not running: "
       "`export_tvm` does not compute anything, it *traces* `forward` with a symbolic "
       "input of the shape we promise (360 images of 64 pixels) and records every "
       "operator it meets. The result is an `IRModule`, the container that holds all the "
       "functions of a program at every stage of compilation."),
    CODE('''class MLP(nn.Module):
    def __init__(self):
        self.fc1 = nn.Linear(64, 128)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))

model = MLP()
model.load_state_dict({"fc1.weight": params["w0"], "fc1.bias": params["b0"],
                       "fc2.weight": params["w1"], "fc2.bias": params["b1"]})
mod, named_params = model.export_tvm(spec={"forward": {"x": nn.spec.Tensor((360, 64), "float32")}})
weights = [p.data for _, p in named_params]
mod.show()'''),
    MD("## Stage 1: the graph IR\n\n"
       "What `show` printed is Relax, mlcbench's graph IR, in TVMScript syntax. Read it "
       "like Python: `forward` takes the input `x` and the four weights, and inside a "
       "`R.dataflow()` block each line binds one new tensor to one operator. The "
       "annotations `R.Tensor((360, 128), dtype=\"float32\")` are not decoration: the "
       "compiler has inferred the shape and data type of every intermediate tensor, and "
       "it will use them to size memory and to generate loops with known bounds.\n\n"
       "Notice what Relax does *not* say: nothing about loops, memory layout, or which "
       "processor runs what. `R.matmul` is a promise of a result, not a way to compute "
       "it. That is what makes the graph level the right place for decisions that span "
       "operators: which of them to merge, which intermediate tensors can share memory, "
       "which computations are constant and can be done once at compile time."),
    MD("## Stage 2: operators become tensor programs, and fuse\n\n"
       "`LegalizeOps` replaces each high-level operator by a call to a *tensor program*, "
       "a `PrimFunc` that spells out the loops. Then `FuseOps` looks at the graph and "
       "groups neighbouring operators that can run as one loop nest: a matrix multiply "
       "followed by elementwise work (add the bias, clip at zero) is the textbook case, "
       "because the elementwise steps can be done on each output element right after it "
       "is computed, while it is still in a register, instead of writing the whole "
       "matrix to memory and reading it back once per step. `FuseTIR` then merges each "
       "group into a single `PrimFunc`.\n\n"
       "The `GraphView` widget runs these passes and draws the graph before and after. "
       "Each box is a kernel; the clusters are the groups that fuse, and its edge table "
       "gives the rule that allowed or refused each fusion."),
    CODE('''from mlcbench_widgets import GraphView

view = GraphView(mod)
print(view.kernel_counts)
display(HTML(view.render("before")))'''),
    CODE('display(HTML(view.render("after")))\n'
         'for edge in view.edges():\n'
         '    print(f"{edge[\'producer\']:>8} -> {edge[\'consumer\']:<8} fused={edge[\'fused\']!s:<5} {edge[\'reason\']}")'),
    MD("Seven operators became four kernels. Each `Linear` swallowed its bias add, and "
       "the first one the ReLU as well: the edge table says why (a matmul takes the "
       "elementwise operators that consume it). Two kernels stay alone: `permute_dims` "
       "transposes each weight matrix, because `Linear` stores its weight as (out, in) "
       "and the matmul wants (in, out). The build goes one step further: "
       "`FuseTransposeMatmul` lets each matmul read its weight as (out, in) where it lies "
       "(a `matmul_nt` kernel), so no transposed copy is made on every call and two "
       "kernels remain. (When the weights are bound into the module as constants, "
       "constant folding transposes them once at compile time instead: "
       "`relax.transform.BindParams` binds weights to a module, `FoldConstant` does the "
       "computing.)\n\n"
       "Here is the first fused kernel. This is TensorIR, the tensor-program level: "
       "buffers with fixed shapes, loops with fixed extents, and *blocks* (`T.block`) "
       "that name one unit of computation and declare which elements it reads and "
       "writes. Chapters 2 and 3 teach how to read and transform these programs; for "
       "now, note that the matmul, the bias add and the ReLU are all here, as three "
       "blocks inside one function, and that the intermediate results between them are "
       "buffers local to the function rather than tensors of the model."),
    CODE('''fused = relax.get_pipeline("zero")(mod)    # FuseTransposeMatmul, LegalizeOps, FuseOps, FuseTIR, ...
kernels = sorted(gv.name_hint for gv, f in fused.functions.items() if isinstance(f, tvm.tir.PrimFunc))
print(kernels)
fused["fused_matmul_nt_add_relu"].show()'''),
    MD("## Stage 3: scheduling the tensor programs\n\n"
       "The loops above are correct but naive: one multiply-add at a time, in the order "
       "the math was written. A *schedule* rewrites the loop nest without changing what "
       "it computes: split a loop into tiles that fit in cache, reorder loops so memory "
       "is read contiguously, mark the innermost loop for SIMD vector instructions, run "
       "the outer loop on several cores. Choosing those transformations is the heart of "
       "ML compilation, and most of this course is about it: by hand (chapter 3), "
       "automatically by search (chapter 5), for GPUs (chapter 7) and for special "
       "matrix hardware (chapter 8).\n\n"
       "When no one tuned a kernel, `relax.build` applies default schedules from "
       "`mlcbench.dlight`: rules that recognize a matmul, a reduction or an elementwise "
       "kernel and give it a reasonable, if not the best, shape. We apply them ourselves "
       "to see what they do to the first kernel."),
    CODE('''from mlcbench import dlight as dl

scheduled = dl.ApplyDefaultSchedule(*dl.cpu.default_rules())(fused)
scheduled["fused_matmul_nt_add_relu"].show()'''),
    MD("## Stage 4: lowering, watched with the PassViewer\n\n"
       "A scheduled PrimFunc still has blocks, multi-dimensional buffers and high-level "
       "loop annotations. Before a code generator can emit instructions, *lowering passes* "
       "turn it into plain loops over flat memory: initialization of reductions becomes "
       "an ordinary statement, blocks disappear, `A[i, k]` becomes `A[i * 64 + k]`, "
       "vectorized loops become vector operations, and the simplifier cleans up the "
       "index arithmetic. `mlcbench.build` runs this pipeline; the `PassViewer` runs it "
       "under an instrument that records the program before and after every pass, so we "
       "can step through it. In Jupyter, displaying `viewer` gives a slider; here we use "
       "the same object from code: the summary lists every pass, its time, and whether "
       "it changed anything."),
    CODE('''from mlcbench_widgets import PassViewer

kernel = scheduled["fused_matmul_nt_add_relu"]
viewer = PassViewer(kernel)
print(viewer.summary())'''),
    MD("Select a pass by name to see what it did. `FlattenBuffer` is the moment "
       "multi-dimensional buffers become one-dimensional memory: compare the indices "
       "before and after in the diff (lines starting with `-` are gone, `+` are new)."),
    CODE('''viewer.select("FlattenBuffer")
print("changed:", viewer.changed)
print("\\n".join(viewer.diff.splitlines()[:40]))'''),
    MD("## Stage 5: machine code\n\n"
       "The last step hands the lowered loops to LLVM, which selects instructions, "
       "allocates registers and writes x86 machine code into memory, ready to call. "
       "`get_source(\"asm\")` shows the result. Look for instructions whose names start "
       "with `v` and mention `ymm` or `zmm` registers: those are SIMD instructions that "
       "process 8 or 16 floats at once, which the vectorize step of the schedule asked "
       "for. (The exact listing depends on the processor this notebook runs on.)"),
    CODE('''lib = tvm.build(kernel, target="llvm")
asm = lib.get_source("asm")
vector_lines = [line.strip() for line in asm.splitlines() if "ymm" in line or "zmm" in line]
print(len(asm.splitlines()), "lines of assembly,", len(vector_lines), "use vector registers, e.g.")
print("\\n".join(vector_lines[:8]))'''),
    MD("## Stage 6: run the whole model\n\n"
       "`relax.build` does all of the above in one call, for every kernel, and also "
       "compiles the graph-level function into code for the Relax *virtual machine*: a "
       "tiny interpreter whose instructions are \"allocate this tensor\" and \"call this "
       "kernel\". The VM is what makes the compiled model callable from Python with "
       "NDArrays, and it is what gets shipped when the model is deployed (chapter 10)."),
    CODE('''ex = relax.build(mod, target="llvm")
vm = relax.VirtualMachine(ex, tvm.cpu())
logits = vm["forward"](x_test, *weights).numpy()
np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-4)
print("compiled accuracy:", (logits.argmax(1) == y_test).mean())'''),
    MD("The compiled model agrees with numpy to four decimal places (float sums come "
       "out in a different order, so they are not bit-identical). How fast is it? On a "
       "shared machine a single measurement can be off by a large factor, so "
       "`mlcbench.runtime.timing.compare` times both sides in several rounds, "
       "*interleaved* (compiled, numpy, compiled, numpy ...) with a short pause before "
       "each so that the previous contender's worker threads go to sleep, and keeps "
       "the best round of each: the best round is the one least disturbed by other "
       "work. When the two best rounds of a side differ by more than 20%, the figure is "
       "marked unsteady. The ratio always reads \"x faster than numpy\" or \"x slower "
       "than numpy\"."),
    CODE('''from mlcbench.runtime import timing

x_nd = tvm.nd.array(x_test)
w_nd = [tvm.nd.array(w) for w in weights]
result = timing.compare({
    "mlcbench": timing.kernel(vm, "forward", x_nd, *w_nd),
    "numpy": timing.call(lambda: datasets.mlp_forward(x_test, params)),
})
print(result.describe("mlcbench", "numpy"))'''),
    MD("Numpy is not a weak opponent here: its matrix multiply calls an optimized BLAS "
       "library, hand-tuned by experts for this class of processor. What the compiler "
       "brings is not a better matmul than BLAS but the ability to generate decent code "
       "for *any* loop nest, fuse the steps around it, and tune it for the exact shapes "
       "and processor at hand. On bigger models, with unusual operators or on hardware "
       "without a BLAS, that is where it wins; in chapter 5 tuning closes much of the "
       "remaining gap for single kernels.\n\n"
       "## What we saw\n\n"
       "* A model enters as a graph of operators (Relax). The graph level decides which "
       "computations happen and how they group: legalization gives each operator a "
       "tensor program, fusion merges neighbours into one kernel.\n"
       "* Each kernel is a tensor program (TensorIR). Schedules transform its loops "
       "for the hardware; lowering passes strip it down to flat loops; LLVM turns it "
       "into machine code.\n"
       "* Every step is a pass you can stop after and inspect: `show()`, `GraphView`, "
       "`PassViewer`, `get_source`.\n"
       "* `relax.build` plus `relax.VirtualMachine` is the whole pipeline in two calls; "
       "the answer must match the framework's, and timings must be measured with care.\n\n"
       "The next chapter starts at the bottom of the stack: one tensor program, written "
       "by hand, from a numpy loop nest to TensorIR."),
    MD("## Exercises\n\n"
       "Each exercise has a cell to fill in and a check. Until you fill it in, the check "
       "says \"not attempted yet\"; a wrong answer raises an error that says what "
       "differs. Reference solutions are in `tests/notebooks/test_ch01_exercises.py`."),
    SETUP('''import numpy as np
import mlcbench as tvm
from mlcbench import datasets, relax, te
from mlcbench.relax.frontend import nn


def deep_mlp_params(seed=0):
    """Weights of a three-layer perceptron 64 -> 128 -> 64 -> 10 (random, fixed seed)."""
    rng = np.random.default_rng(seed)
    shapes = {"w0": (128, 64), "b0": (128,), "w1": (64, 128), "b1": (64,),
              "w2": (10, 64), "b2": (10,)}
    return {k: (rng.standard_normal(s) * 0.1).astype("float32") for k, s in shapes.items()}


def deep_mlp_numpy(x, p):
    h = np.maximum(x @ p["w0"].T + p["b0"], 0)
    h = np.maximum(h @ p["w1"].T + p["b1"], 0)
    return h @ p["w2"].T + p["b2"]


def check_exercise_1(build_and_run):
    """True when build_and_run(x, params) returns the three-layer model's output."""
    _, _, x, _ = datasets.load_digits(flat=True)
    p = deep_mlp_params()
    try:
        got = np.asarray(build_and_run(x[:32], p))
    except NotImplementedError:
        print("Exercise 1: not attempted yet")
        return False
    want = deep_mlp_numpy(x[:32], p)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    print(f"Exercise 1: correct, output {got.shape} matches numpy")
    return True


class Residual(nn.Module):
    """forward(x) = fc(x) + x: a Linear whose input is used twice."""
    def __init__(self):
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return nn.op.add(self.fc(x), x)


def check_exercise_2(count_kernels):
    """True when count_kernels(mod) gives the number of PrimFuncs fusion leaves."""
    mod, _ = Residual().export_tvm(spec={"forward": {"x": nn.spec.Tensor((2, 8), "float32")}})
    try:
        got = count_kernels(mod)
    except NotImplementedError:
        print("Exercise 2: not attempted yet")
        return False
    fused = relax.get_pipeline("zero")(mod)
    want = sum(isinstance(f, tvm.tir.PrimFunc) for f in fused.functions.values())
    assert got == want, f"count_kernels gave {got}, the fused module has {want} kernel(s)"
    print(f"Exercise 2: correct, {got} kernel(s) after fusion")
    return True


def matmul_relu_kernel(n=16):
    """A small PrimFunc, relu(A @ B), to lower."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((n, n), lambda i, j: te.max(C[i, j], 0.0), name="D")
    return te.create_prim_func([A, B, D])


def check_exercise_3(first_pass_without_blocks):
    """True when first_pass_without_blocks(kernel) names the lowering pass after which
    the kernel has no T.block left."""
    from mlcbench_widgets import PassViewer
    kernel = matmul_relu_kernel()
    try:
        got = first_pass_without_blocks(kernel)
    except NotImplementedError:
        print("Exercise 3: not attempted yet")
        return False
    want = next(r.name for r in PassViewer(kernel).records if "T.block" not in r.after.script())
    assert got == want, f"first_pass_without_blocks gave {got!r}; the blocks go at {want!r}"
    print(f"Exercise 3: correct, {got} removes the blocks")
    return True'''),
    MD("### Exercise 1: a deeper model\n\n"
       "Write `build_and_run(x, p)`: describe a three-layer perceptron 64 -> 128 -> 64 "
       "-> 10 (a ReLU after each of the first two layers) with `relax.frontend.nn`, load "
       "the weights `p` (keys `w0, b0, w1, b1, w2, b2`, as `deep_mlp_params` makes "
       "them), export it for the shape of `x`, build it with `relax.build`, run it with "
       "the VM and return the output as a numpy array. Before you run it, guess how "
       "many kernels fusion will leave, then check with `relax.get_pipeline(\"zero\")`."),
    CODE('''def build_and_run(x, p):
    # your model, export, build and run here; return a numpy array
    raise NotImplementedError


exercise_1_done = check_exercise_1(build_and_run)'''),
    MD("### Exercise 2: count kernels\n\n"
       "Write `count_kernels(mod)`: run the fusion pipeline "
       "(`relax.get_pipeline(\"zero\")`) on `mod` and return how many `PrimFunc`s the "
       "result holds. The check runs it on `Residual`, whose `forward` is `fc(x) + x`. "
       "Will the residual add fuse into the matmul's kernel, although `x` is read twice?"),
    CODE('''def count_kernels(mod):
    # your code here; return an int
    raise NotImplementedError


exercise_2_done = check_exercise_2(count_kernels)'''),
    MD("### Exercise 3: where do the blocks go?\n\n"
       "Write `first_pass_without_blocks(kernel)`: use a `PassViewer` to find the first "
       "lowering pass after which the program has no `T.block` left, and return its name "
       "(hint: `viewer.records[i].after.script()`). Then select that pass in the viewer "
       "and read its diff: what replaced the blocks?"),
    CODE('''def first_pass_without_blocks(kernel):
    # your code here; return the pass name, e.g. "tir.SomePass"
    raise NotImplementedError


exercise_3_done = check_exercise_3(first_pass_without_blocks)'''),
]
nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                        "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "notebooks/01_overview.ipynb")
