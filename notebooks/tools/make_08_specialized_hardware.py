"""Write notebooks/08_specialized_hardware.ipynb (run from the repository root)."""
import base64
import io

import matplotlib
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 -- after choosing the backend
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

MD, CODE = new_markdown_cell, new_code_cell


def exercise_cell(source):
    """A code cell that tests/notebooks/ runs with the reference solutions."""
    return new_code_cell(source, metadata={"tags": ["exercise-setup"]})


def figure_cell(text, name, fig):
    """A markdown cell showing ``fig`` as an attachment (no drawing code in the notebook)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    cell = new_markdown_cell(text + f"\n\n![{name}](attachment:{name})")
    cell["attachments"] = {name: {"image/png": base64.b64encode(buf.getvalue()).decode()}}
    return cell


def accelerator_figure():
    """DRAM tiles copied into the accelerator's scopes, one tmm16 per (i, j, k) tile."""
    fig, ax = plt.subplots(figsize=(9, 3.4))
    ax.set_xlim(0, 18)
    ax.set_ylim(0, 7)
    ax.axis("off")

    def box(x, y, w, h, label, color):
        ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor="black"))
        ax.text(x + w / 2, y + h / 2, label, ha="center", va="center", fontsize=10)

    def arrow(x0, y0, x1, y1, label=""):
        ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="->", mutation_scale=14))
        if label:
            ax.text((x0 + x1) / 2, (y0 + y1) / 2 + 0.25, label, ha="center", fontsize=8)

    box(0.3, 4.2, 3.2, 2.2, "A (DRAM)\n256 x 256", "#dde7f5")
    box(0.3, 0.6, 3.2, 2.2, "B (DRAM)\n256 x 256", "#dde7f5")
    box(6.0, 4.6, 2.4, 1.4, "A_reg\n16 x 16", "#fbe3c4")
    box(6.0, 1.0, 2.4, 1.4, "B_reg\n16 x 16", "#fbe3c4")
    box(10.2, 2.6, 2.6, 1.8, "tmm16\nC += A B^T", "#f6c8c8")
    box(14.3, 2.8, 2.6, 1.4, "accumulator\n16 x 16", "#fbe3c4")
    arrow(3.5, 5.3, 6.0, 5.3, "copy (dma)")
    arrow(3.5, 1.7, 6.0, 1.7, "copy (dma)")
    arrow(8.4, 5.3, 10.2, 3.9)
    arrow(8.4, 1.7, 10.2, 3.1)
    arrow(12.8, 3.5, 14.3, 3.5)
    arrow(15.6, 2.8, 15.6, 0.6, "write back\nonce per (i, j)")
    ax.text(9.0, 6.6, "global memory scopes of the accelerator: global.A_reg, global.B_reg, "
            "global.accumulator", ha="center", fontsize=9)
    return fig


cells = [
    MD("# 8. Specialized hardware: tensorization\n\n"
       "Chapter 7 mapped a program onto the thread hierarchy of a GPU. This chapter goes "
       "one step further down: to hardware whose **unit of work is a small tensor "
       "operation**, not a scalar. We will describe an imaginary accelerator with one "
       "instruction, a 16x16x16 matrix multiply-accumulate, and teach the compiler to "
       "use it: group scalar loops into *tensorized blocks* (`blockize`), stage data in "
       "the accelerator's memories (`cache_read` / `cache_write` into custom storage "
       "scopes), and replace a block by the instruction (`tensorize` with a registered "
       "`TensorIntrin`).\n\n"
       "There is no such chip in this machine, so the instruction is played by an "
       "external function, `tmm16`, whose body we write in LLVM IR and link into the "
       "compiled module. Everything in this chapter runs on the CPU; the compiler does "
       "not know, and does not need to know, that the \"accelerator\" is software."),
    CODE("import numpy as np\nimport mlcbench as tvm\n"
         "from mlcbench.script import tir as T, ir as I\n"
         "from mlcbench.runtime import timing"),
    MD("## The trend: from scalars to tensors\n\n"
       "A plain CPU core performs one floating-point operation per instruction. Vector "
       "extensions (SSE, AVX2, AVX-512 on x86; NEON and SVE on Arm) perform 4, 8 or 16 "
       "at once on a register of adjacent values: chapter 3's `vectorize` was our first "
       "contact with them. The hardware built for machine learning in the last decade "
       "goes further. NVIDIA's Tensor Cores multiply small matrix tiles (for example "
       "16x16x16 in half precision) per instruction; Intel's AMX adds two-dimensional "
       "*tile registers* and a tile matrix multiply; Google's TPU is built around a "
       "systolic array that consumes whole matrix blocks; the neural engines of phones "
       "do the same at lower precision.\n\n"
       "What these designs share is the shape of their programming model:\n\n"
       "* the unit of computation is a **tensor operation on a fixed-size tile**, not a "
       "scalar multiply-add;\n"
       "* operands live in **special memories** (tile registers, an accumulator, an "
       "on-chip buffer) with their own size and layout rules;\n"
       "* data moves between main memory and those special memories with **explicit "
       "copy instructions** (often DMA engines that run beside the compute units).\n\n"
       "A compiler for such hardware must cut the program into pieces of exactly the "
       "instruction's shape, arrange the copies, and emit the instruction. The rest of "
       "this chapter does those three things with TensorIR."),
    MD("## The accelerator in low-level numpy\n\n"
       "As in chapter 2, we first write the program we want in *low-level numpy*: "
       "plain Python loops whose innermost operations are the only things our "
       "accelerator can do. `accel_fill_zero` clears the accumulator, `accel_dma_copy` "
       "moves a 16x16 tile between main memory and a register, and `accel_tmm_add` is "
       "the instruction: it accumulates the product of a 16x16 tile of `A` and the "
       "transpose of a 16x16 tile of `B`. The workload is `C = A @ B.T` at 256x256, so "
       "there are 16 x 16 output tiles and 16 steps along the reduction."),
    CODE('''def accel_fill_zero(C):
    C[:] = 0

def accel_tmm_add(C, A, B):
    C[:] += A @ B.T

def accel_dma_copy(reg, dram):
    reg[:] = dram[:]

def lnumpy_tmm(A: np.ndarray, B: np.ndarray, C: np.ndarray):
    # the accelerator's special memories
    C_accumulator = np.empty((16, 16), dtype="float32")
    A_reg = np.empty((16, 16), dtype="float32")
    B_reg = np.empty((16, 16), dtype="float32")
    n = A.shape[0] // 16
    for i in range(n):
        for j in range(n):
            accel_fill_zero(C_accumulator[:, :])
            for k in range(n):
                accel_dma_copy(A_reg[:], A[i * 16 : i * 16 + 16, k * 16 : k * 16 + 16])
                accel_dma_copy(B_reg[:], B[j * 16 : j * 16 + 16, k * 16 : k * 16 + 16])
                accel_tmm_add(C_accumulator[:, :], A_reg, B_reg)
            accel_dma_copy(C[i * 16 : i * 16 + 16, j * 16 : j * 16 + 16], C_accumulator[:, :])'''),
    CODE('''dtype = "float32"
rng = np.random.default_rng(0)
a_np = rng.random((256, 256), dtype=dtype)
b_np = rng.random((256, 256), dtype=dtype)
c_tmm = a_np @ b_np.T

c_np = np.empty((256, 256), dtype="float32")
lnumpy_tmm(a_np, b_np, c_np)
np.testing.assert_allclose(c_np, c_tmm, rtol=1e-5)
print("the low-level numpy program computes A @ B.T")'''),
    figure_cell(
        "The picture below is the data flow of one output tile `(i, j)`: for each `k`, "
        "two tiles are copied from main memory into the registers `A_reg` and `B_reg`, "
        "`tmm16` accumulates their product into the accumulator, and once the "
        "reduction is over the accumulator is written back to `C`. In real hardware the "
        "three small memories are separate pieces of silicon; their names are how the "
        "compiler refers to them.", "accelerator.png", accelerator_figure()),
    MD("## A block that computes a tile\n\n"
       "Every TensorIR block we have written so far computed one element. Nothing forces "
       "that: a block is a unit of computation with declared inputs and outputs, and it "
       "can cover a region. Here is the same matmul written with an outer block "
       "`tmm-16x16` that computes one 16x16 tile step, and scalar blocks inside it that "
       "say *how* (for now, as scalar loops)."),
    CODE('''@I.ir_module
class MatmulBlockModule:
    @T.prim_func
    def main(A: T.Buffer((256, 256), "float32"), B: T.Buffer((256, 256), "float32"),
             C: T.Buffer((256, 256), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i0, j0, k0 in T.grid(16, 16, 16):
            with T.block("tmm-16x16"):
                vi0, vj0, vk0 = T.axis.remap("SSR", [i0, j0, k0])
                with T.init():
                    for i1, j1 in T.grid(16, 16):
                        with T.block("tmm_init"):
                            vi1, vj1 = T.axis.remap("SS", [i1, j1])
                            C[vi0 * 16 + vi1, vj0 * 16 + vj1] = T.float32(0)
                for i1, j1, k1 in T.grid(16, 16, 16):
                    with T.block("tmm"):
                        vi1, vj1, vk1 = T.axis.remap("SSR", [i1, j1, k1])
                        C[vi0 * 16 + vi1, vj0 * 16 + vj1] += \\
                            A[vi0 * 16 + vi1, vk0 * 16 + vk1] * B[vj0 * 16 + vj1, vk0 * 16 + vk1]

MatmulBlockModule.show()'''),
    MD("Read the signature the parser inferred for the outer block:\n\n"
       "```python\nwith T.block(\"tmm-16x16\"):\n"
       "    T.reads(A[vi0 * 16:vi0 * 16 + 16, vk0 * 16:vk0 * 16 + 16], "
       "B[vj0 * 16:vj0 * 16 + 16, vk0 * 16:vk0 * 16 + 16])\n"
       "    T.writes(C[vi0 * 16:vi0 * 16 + 16, vj0 * 16:vj0 * 16 + 16])\n```\n\n"
       "It reads a 16x16 region of `A` and of `B` and writes a 16x16 region of `C`. "
       "We call such a block a **tensorized block**: its iterators `vi0, vj0, vk0` "
       "count tiles, and its body is one possible implementation of the tile "
       "computation. That separation, *what region* outside and *how* inside, is what "
       "will let us swap the body for a hardware instruction. The program is still an "
       "ordinary program: it builds and runs."),
    CODE('''a_nd, b_nd = tvm.nd.array(a_np), tvm.nd.array(b_np)
c_nd = tvm.nd.empty((256, 256), dtype="float32")
lib = tvm.build(MatmulBlockModule, target="llvm")
lib["main"](a_nd, b_nd, c_nd)
np.testing.assert_allclose(c_nd.numpy(), c_tmm, rtol=1e-5)
print("MatmulBlockModule matches numpy")'''),
    MD("### Loops around a tensorized block\n\n"
       "The loops *outside* a tensorized block are ordinary loops, and every schedule "
       "primitive of chapter 3 applies to them. Here we split the tile loop `i0` and "
       "move `j0` between its halves: four tiles of `A` are now reused across each tile "
       "of `B`. The block itself is untouched; only the order in which tiles are visited "
       "changes, which is exactly the freedom a compiler has around a fixed instruction."),
    CODE('''sch = tvm.tir.Schedule(MatmulBlockModule)
block_mm = sch.get_block("tmm-16x16")
i, j, k = sch.get_loops(block_mm)
i0, i1 = sch.split(i, [None, 4])
sch.reorder(i0, j, i1, k)
sch.mod.show()'''),
    MD("## Blockization: making tensorized blocks\n\n"
       "Programs rarely arrive with tile-shaped blocks; they arrive as scalar loop nests "
       "(from TVMScript, from `te.compute`, from a model importer). **`blockize`** turns "
       "a loop and everything under it into one block: it takes the subtree rooted at "
       "the loop, works out the region the subtree reads and writes, and wraps it in a "
       "new outer block with those regions as its signature. We start from the scalar "
       "matmul, tile all three loops by 16, and put the three inner loops together."),
    CODE('''@I.ir_module
class MatmulModule:
    @T.prim_func
    def main(A: T.Buffer((256, 256), "float32"), B: T.Buffer((256, 256), "float32"),
             C: T.Buffer((256, 256), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(256, 256, 256):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] += A[vi, vk] * B[vj, vk]'''),
    CODE('''sch = tvm.tir.Schedule(MatmulModule)
i, j, k = sch.get_loops("matmul")
i, ii = sch.split(i, factors=[None, 16])
j, ji = sch.split(j, factors=[None, 16])
k, ki = sch.split(k, factors=[None, 16])
sch.reorder(i, j, k, ii, ji, ki)
sch.mod.show()'''),
    MD("Now `blockize(ii)` wraps the 16x16x16 subtree. Note what happens to the "
       "initialization: the scalar block's `T.init()` (set `C[vi, vj]` to zero before "
       "the first `k`) becomes the outer block's init, a 16x16 loop of `matmul_init` "
       "blocks that runs before the first *tile* of the reduction. The outer block "
       "`matmul_o` has the same shape as `tmm-16x16` above."),
    CODE("block_mm = sch.blockize(ii)\nsch.mod.show()"),
    MD("## Special memory scopes\n\n"
       "The low-level numpy program copied tiles into `A_reg`, `B_reg` and "
       "`C_accumulator` before and after the instruction. In TensorIR those are "
       "**cache stages**: `cache_read` inserts a block that copies the region a consumer "
       "reads into a new buffer, and `cache_write` makes the producer write into a new "
       "buffer and copies the result back afterwards. Chapter 3 used them with the "
       "scope `\"global\"`; any scope name is accepted, and the name is how we tell the "
       "rest of the compiler where the buffer lives.\n\n"
       "Then `compute_at` moves each copy right under the loop where its data is "
       "needed: the `A` and `B` tiles are copied once per `k` step, and the accumulator "
       "is written back once per output tile, after the `k` loop (`reverse_compute_at` "
       "under `j`). This is the loop nest of the numpy program, now derived by the "
       "compiler."),
    CODE('''A_reg = sch.cache_read(block_mm, 0, storage_scope="global.A_reg")
B_reg = sch.cache_read(block_mm, 1, storage_scope="global.B_reg")
sch.compute_at(A_reg, k)
sch.compute_at(B_reg, k)

write_back_block = sch.cache_write(block_mm, 0, storage_scope="global.accumulator")
sch.reverse_compute_at(write_back_block, j)
sch.mod.show()'''),
    MD("A scope such as `global.A_reg` has two parts. `global` is the *rank*: the "
       "memory is addressable by the whole program, like main memory (as opposed to "
       "`shared` or `local` on a GPU, chapter 7). `A_reg` is a **tag**: it means nothing "
       "to the generic passes, which treat the buffer as an ordinary allocation, but a "
       "backend for real hardware would map it to the tile registers, check its size "
       "against their capacity, and turn the copy blocks into DMA instructions. On our "
       "CPU the tagged buffers are plain arrays, which is why the program still runs "
       "unchanged at every step."),
    MD("## Tensorization\n\n"
       "We now have a block, `matmul_o`, whose computation is exactly one instruction of "
       "the accelerator. **Tensorization** replaces such a block by a call to that "
       "instruction. The compiler needs two things, registered together as a "
       "**tensor intrinsic** (`TensorIntrin`):\n\n"
       "* a **description**: a small TensorIR function that computes what the "
       "instruction computes, in scalar loops. `tensorize` compares it with the block "
       "(same iteration structure, same arithmetic, same buffer access pattern, "
       "including the scopes) to decide whether the replacement is correct;\n"
       "* an **implementation**: a TensorIR function with the same buffers whose body "
       "is what should be emitted instead, here a `T.call_extern` of `tmm16` with "
       "pointers to the three tiles and their row strides.\n\n"
       "`T.match_buffer(..., offset_factor=16, strides=[sa, 1])` declares that the "
       "tile can sit anywhere inside a larger buffer (its rows are `sa` elements apart "
       "and its start is a multiple of 16 elements); when the intrinsic is applied, "
       "`sa` becomes the real row stride of the surrounding buffer. "
       "`C.access_ptr(\"w\")` is the address of the tile for writing."),
    CODE('''@T.prim_func
def tmm16_desc(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (16, 16), "float32", offset_factor=16, scope="global.A_reg")
    B = T.match_buffer(b, (16, 16), "float32", offset_factor=16, scope="global.B_reg")
    C = T.match_buffer(c, (16, 16), "float32", offset_factor=16, scope="global.accumulator")
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, j, k in T.grid(16, 16, 16):
            with T.block(""):
                vii, vjj, vkk = T.axis.remap("SSR", [i, j, k])
                C[vii, vjj] = C[vii, vjj] + A[vii, vkk] * B[vjj, vkk]


@T.prim_func
def tmm16_impl(a: T.handle, b: T.handle, c: T.handle) -> None:
    sa = T.var("int32")
    sb = T.var("int32")
    sc = T.var("int32")
    A = T.match_buffer(a, (16, 16), "float32", offset_factor=16, strides=[sa, 1], scope="global.A_reg")
    B = T.match_buffer(b, (16, 16), "float32", offset_factor=16, strides=[sb, 1], scope="global.B_reg")
    C = T.match_buffer(c, (16, 16), "float32", offset_factor=16, strides=[sc, 1], scope="global.accumulator")
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        T.evaluate(T.call_extern("tmm16", C.access_ptr("w"), A.access_ptr("r"),
                                 B.access_ptr("r"), sa, sb, sc, dtype="int32"))


tvm.tir.TensorIntrin.register("tmm16", tmm16_desc, tmm16_impl, override=True)
print("registered the tensor intrinsic tmm16")'''),
    MD("The description has no `T.init()`: the instruction *accumulates*. So before "
       "tensorizing we split the reduction into an initialization and an update with "
       "`decompose_reduction` (chapter 3); the update block, `matmul_o_update`, is the "
       "one that matches `tmm16`."),
    CODE("sch.decompose_reduction(block_mm, k)\nsch.mod.show()"),
    CODE('sch.tensorize(block_mm, "tmm16")\nsch.mod.show()'),
    MD("The 16x16x16 scalar loops are gone. In their place, the block binds three "
       "16x16 views of the staged buffers (`T.match_buffer` over a region) and calls "
       "`tmm16` with their addresses (`T.tvm_access_ptr`) and strides. Everything "
       "around it, the copies into `global.A_reg` and `global.B_reg`, the zeroing of "
       "the accumulator, the write-back, is still ordinary TensorIR that we could "
       "tensorize in turn with a DMA intrinsic.\n\n"
       "Tensorization checks before it replaces. If the block does not compute what the "
       "description computes, for example a block of 8x8 tiles, the schedule refuses "
       "and says why; the schedule is left as it was."),
    CODE('''small = tvm.tir.Schedule(MatmulModule)
i8, j8, k8 = small.get_loops("matmul")
i8, ii8 = small.split(i8, factors=[None, 8])
j8, ji8 = small.split(j8, factors=[None, 8])
k8, ki8 = small.split(k8, factors=[None, 8])
small.reorder(i8, j8, k8, ii8, ji8, ki8)
block8 = small.blockize(ii8)
small.decompose_reduction(block8, k8)
try:
    small.tensorize(block8, "tmm16")
except tvm.tir.ScheduleError as err:
    print(str(err).splitlines()[0])'''),
    MD("## Giving the instruction a body\n\n"
       "`tmm16` is an *external* symbol: the compiled module calls a function of that "
       "name, and something must provide it. On real hardware the backend would "
       "translate the call into the instruction itself. The course provides it as C "
       "code compiled to LLVM IR with clang and attached to the program with the loop "
       "annotation `pragma_import_llvm`; the code generator links every such LLVM IR "
       "text into the module it builds.\n\n"
       "We do the same, but write the LLVM IR directly, so that no C compiler is "
       "needed. It is a loop over the 256 output elements of the tile; each step loads "
       "a row of the `A` tile and a row of the `B` tile as `<16 x float>` vectors, "
       "multiplies them and adds the sum of the products to the accumulator element. A "
       "16-wide vector dot product is, in miniature, what a tensor unit does in "
       "hardware."),
    CODE('''TMM16_LL = """
declare float @llvm.vector.reduce.fadd.v16f32(float, <16 x float>)

define i32 @tmm16(ptr %c, ptr %a, ptr %b, i32 %sa, i32 %sb, i32 %sc) {
entry:
  br label %loop
loop:                                   ; n = i * 16 + j, one output element per step
  %n = phi i32 [ 0, %entry ], [ %n1, %loop ]
  %i = udiv i32 %n, 16
  %j = urem i32 %n, 16
  %ai = mul i32 %i, %sa
  %bj = mul i32 %j, %sb
  %ci0 = mul i32 %i, %sc
  %ci = add i32 %ci0, %j
  %ap = getelementptr float, ptr %a, i32 %ai
  %bp = getelementptr float, ptr %b, i32 %bj
  %cp = getelementptr float, ptr %c, i32 %ci
  %av = load <16 x float>, ptr %ap, align 4          ; row i of the A tile
  %bv = load <16 x float>, ptr %bp, align 4          ; row j of the B tile
  %prod = fmul <16 x float> %av, %bv
  %cv = load float, ptr %cp, align 4
  %s = call reassoc float @llvm.vector.reduce.fadd.v16f32(float %cv, <16 x float> %prod)
  store float %s, ptr %cp, align 4
  %n1 = add i32 %n, 1
  %done = icmp eq i32 %n1, 256
  br i1 %done, label %exit, label %loop
exit:
  ret i32 0
}
"""
sch.annotate(i, "pragma_import_llvm", TMM16_LL)'''),
    MD("Now the module builds, calls our \"instruction\" 16 x 16 x 16 = 4096 times, and "
       "computes `A @ B.T`."),
    CODE('''lib_tmm = tvm.build(sch.mod, target="llvm")
c_nd = tvm.nd.empty((256, 256), dtype="float32")
lib_tmm["main"](a_nd, b_nd, c_nd)
np.testing.assert_allclose(c_nd.numpy(), c_tmm, rtol=1e-5)
print("the tensorized program matches numpy")'''),
    MD("### How fast is the pretend accelerator?\n\n"
       "The timing below compares three programs on the same inputs: the scalar "
       "`MatmulModule` as written, the tensorized one, and numpy (which calls an "
       "optimized BLAS library). " + "The programs are timed with `mlcbench.runtime.timing`: they take turns for "
       "several rounds, each after a short pause, and each keeps its best round; a "
       "figure whose two best rounds differ by more than 20% is marked unsteady, and "
       "every ratio reads \"x faster than numpy\" or \"x slower than numpy\"."),
    CODE('''lib_scalar = tvm.build(MatmulModule, target="llvm")
result = timing.compare({
    "scalar TensorIR": timing.kernel(lib_scalar, "main", a_nd, b_nd, c_nd),
    "tensorized tmm16": timing.kernel(lib_tmm, "main", a_nd, b_nd, c_nd),
    "numpy": timing.call(lambda: a_np @ b_np.T),
})
print(result.describe("scalar TensorIR", "numpy"))
print(result.describe("tensorized tmm16", "numpy"))
print(result.describe("tensorized tmm16", "scalar TensorIR"))'''),
    MD("The tensorized program is several times faster than the scalar one, even though "
       "our `tmm16` is only a software loop over vector instructions and the program "
       "still copies every tile through the staging buffers. On a quiet machine numpy "
       "is faster still (about 0.6 ms against 3.6 ms on the 2-core machine these "
       "notebooks were written on; a figure marked unsteady above was disturbed by "
       "other work, and numpy's threads suffer most from a busy machine): "
       "its BLAS kernel keeps the accumulator in registers, packs data for the cache, "
       "and uses every core. A real accelerator changes that balance, because its "
       "instruction does 4096 multiply-adds in the time a CPU core does a handful. The "
       "compiler's job is the same either way: cut the program into instruction-shaped "
       "pieces, stage the data, and call the instruction."),
    MD("## Discussion\n\n"
       "The key construct of this chapter is the **tensorized block**: a block whose "
       "iterators range over tiles and whose signature names the regions of the "
       "tensors it reads and writes. Once a computation has that shape, the compiler "
       "can reason about it as a unit: move loops around it, stage its inputs in "
       "special memories, and finally swap its body for an intrinsic whose description "
       "it has proven equivalent.\n\n"
       "Real hardware adds constraints that this chapter left out:\n\n"
       "* **layout constraints** in the special memories (a tile register may need its "
       "rows in a particular order or padding; `transform_layout` and `storage_align` "
       "express that);\n"
       "* **interaction with the thread hierarchy**: GPU Tensor Cores are driven by a "
       "whole warp of threads at once, so tensorization meets the thread binding of "
       "chapter 7;\n"
       "* **copy intrinsics**: the staging copies would themselves be tensorized with "
       "DMA or `ldmatrix`-style instructions;\n"
       "* **choosing the schedule automatically**: the tile loops, the stage placement "
       "and the loop order around the intrinsic are a design space like the ones "
       "chapter 5 searched.\n\n"
       "## Summary\n\n"
       "* Machine-learning hardware specializes towards instructions on tensor tiles, "
       "with special memories and explicit copies.\n"
       "* A tensorized block computes a region; `blockize` creates one from scalar loops.\n"
       "* `cache_read` / `cache_write` with scopes such as `global.A_reg` create the "
       "staging buffers, placed with `compute_at` / `reverse_compute_at`.\n"
       "* `tensorize` replaces a block by a registered `TensorIntrin` after checking it "
       "against the intrinsic's description; the implementation can call an external "
       "function, whose body can be linked in as LLVM IR with `pragma_import_llvm`."),
    MD("## Exercises\n\n"
       "Each exercise has a cell to fill in and a cell that checks your answer. Until "
       "you fill it in, the check says \"not attempted yet\"; a wrong answer raises an "
       "error that says what differs. Reference solutions are in "
       "`tests/notebooks/test_ch08_exercises.py`."),
    exercise_cell('''import numpy as np
import mlcbench as tvm
from mlcbench.script import tir as T, ir as I


@I.ir_module
class Matmul64:
    @T.prim_func
    def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
             C: T.Buffer((64, 64), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(64, 64, 64):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


@I.ir_module
class Exercise1Target:
    @T.prim_func
    def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
             C: T.Buffer((64, 64), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        A_global_A_reg = T.alloc_buffer((64, 64), scope="global.A_reg")
        for i_0, j_0, k_0 in T.grid(8, 8, 8):
            for ax0, ax1 in T.grid(8, 8):
                with T.block("A_global_A_reg"):
                    v0 = T.axis.spatial(64, i_0 * 8 + ax0)
                    v1 = T.axis.spatial(64, k_0 * 8 + ax1)
                    A_global_A_reg[v0, v1] = A[v0, v1]
            with T.block("matmul_o"):
                vi_o, vj_o, vk_o = T.axis.remap("SSR", [i_0, j_0, k_0])
                T.reads(A_global_A_reg[vi_o * 8:vi_o * 8 + 8, vk_o * 8:vk_o * 8 + 8],
                        B[vj_o * 8:vj_o * 8 + 8, vk_o * 8:vk_o * 8 + 8])
                T.writes(C[vi_o * 8:vi_o * 8 + 8, vj_o * 8:vj_o * 8 + 8])
                with T.init():
                    for i_1, j_1 in T.grid(8, 8):
                        with T.block("matmul_init"):
                            vi_i_init, vj_i_init = T.axis.remap("SS", [i_1, j_1])
                            C[vi_o * 8 + vi_i_init, vj_o * 8 + vj_i_init] = T.float32(0)
                for i_1, j_1, k_1 in T.grid(8, 8, 8):
                    with T.block("matmul"):
                        vi_i, vj_i, vk_i = T.axis.remap("SSR", [i_1, j_1, k_1])
                        C[vi_o * 8 + vi_i, vj_o * 8 + vj_i] = (
                            C[vi_o * 8 + vi_i, vj_o * 8 + vj_i]
                            + A_global_A_reg[vi_o * 8 + vi_i, vk_o * 8 + vk_i]
                            * B[vj_o * 8 + vj_i, vk_o * 8 + vk_i])


def check_exercise_1(schedule_fn):
    """True when schedule_fn turns Matmul64 into Exercise1Target; False when not tried."""
    try:
        sch = schedule_fn(tvm.tir.Schedule(Matmul64))
    except NotImplementedError:
        print("Exercise 1: not attempted yet")
        return False
    tvm.ir.assert_structural_equal(sch.mod, Exercise1Target)
    print("Exercise 1: correct, the schedule gives Exercise1Target")
    return True'''),
    MD("### Exercise 1: an 8x8x8 accelerator\n\n"
       "A smaller accelerator computes 8x8x8 tiles and has only one special memory, for "
       "`A`. Write the schedule that turns `Matmul64` (a 64x64x64 `A @ B.T`) into "
       "`Exercise1Target` above: tile the three loops by 8, blockize the tile, and stage "
       "the `A` tile in `global.A_reg` under the reduction loop. Print "
       "`Exercise1Target` and compare with `sch.mod.show()` as you go."),
    CODE('''def schedule_exercise_1(sch: tvm.tir.Schedule) -> tvm.tir.Schedule:
    # your schedule here; return sch
    raise NotImplementedError


exercise_1_done = check_exercise_1(schedule_exercise_1)'''),
    exercise_cell('''@I.ir_module
class MatmulNN:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


# tmm16_nn(c, a, b, sa, sb, sc): C[i, j] += A[i, k] * B[k, j] over one 16x16x16 tile,
# rows of each tile `s*` elements apart. Each step adds A[i, k] times row k of B to row i
# of C, 16 columns at once.
TMM16_NN_LL = """
define i32 @tmm16_nn(ptr %c, ptr %a, ptr %b, i32 %sa, i32 %sb, i32 %sc) {
entry:
  br label %loop
loop:                                   ; n = i * 16 + k
  %n = phi i32 [ 0, %entry ], [ %n1, %loop ]
  %i = udiv i32 %n, 16
  %k = urem i32 %n, 16
  %ia = mul i32 %i, %sa
  %ai = add i32 %ia, %k
  %kb = mul i32 %k, %sb
  %ic = mul i32 %i, %sc
  %ap = getelementptr float, ptr %a, i32 %ai
  %bp = getelementptr float, ptr %b, i32 %kb
  %cp = getelementptr float, ptr %c, i32 %ic
  %av = load float, ptr %ap, align 4
  %a1 = insertelement <16 x float> poison, float %av, i32 0
  %as = shufflevector <16 x float> %a1, <16 x float> poison, <16 x i32> zeroinitializer
  %bv = load <16 x float>, ptr %bp, align 4
  %cv = load <16 x float>, ptr %cp, align 4
  %m = fmul <16 x float> %as, %bv
  %s = fadd <16 x float> %cv, %m
  store <16 x float> %s, ptr %cp, align 4
  %n1 = add i32 %n, 1
  %done = icmp eq i32 %n1, 256
  br i1 %done, label %exit, label %loop
exit:
  ret i32 0
}
"""


def check_exercise_2(schedule_fn):
    """True when schedule_fn tensorizes MatmulNN with tmm16_nn and the result is A @ B."""
    try:
        sch = schedule_fn(tvm.tir.Schedule(MatmulNN))
    except NotImplementedError:
        print("Exercise 2: not attempted yet")
        return False
    text = sch.mod.script()
    assert '"tmm16_nn"' in text, "the program never calls tmm16_nn: tensorize the tile block"
    assert "A[vi, vk] * B[vk, vj]" not in text, "the scalar update is still in the program"
    rng = np.random.default_rng(1)
    a, b = rng.random((128, 128), dtype="float32"), rng.random((128, 128), dtype="float32")
    c = tvm.nd.empty((128, 128), "float32")
    tvm.build(sch.mod, target="llvm")["main"](tvm.nd.array(a), tvm.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)
    print("Exercise 2: correct, tensorized with tmm16_nn and equal to A @ B")
    return True'''),
    MD("### Exercise 2: an accelerator for the usual layout\n\n"
       "`MatmulNN` computes `C = A @ B` with `B` in the usual (not transposed) layout, "
       "and the accelerator has an instruction for it, `tmm16_nn`, whose body "
       "`TMM16_NN_LL` is given above. Write its description and implementation "
       "(modelled on `tmm16_desc` / `tmm16_impl`; mind which index of `B` is the "
       "reduction), register them as `\"tmm16_nn\"`, and write a schedule that "
       "tensorizes `MatmulNN` with it. Your schedule must also attach `TMM16_NN_LL` to "
       "the outermost loop with `pragma_import_llvm`, or the build will not find "
       "`tmm16_nn`. Staging buffers are up to you: if your description names scopes, "
       "the blocks must read and write buffers of those scopes."),
    CODE('''# your TensorIntrin for tmm16_nn here


def schedule_exercise_2(sch: tvm.tir.Schedule) -> tvm.tir.Schedule:
    # your schedule here; return sch
    raise NotImplementedError


exercise_2_done = check_exercise_2(schedule_exercise_2)'''),
]

nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                        "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "notebooks/08_specialized_hardware.ipynb")
