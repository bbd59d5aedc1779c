"""Write notebooks/09_graph_optimization.ipynb (run from the repository root)."""
import base64
import io

import matplotlib
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 -- after choosing the backend
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

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


def ast_figure():
    """Function -> SeqExpr -> DataflowBlock -> VarBindings -> Calls."""
    fig, ax = plt.subplots(figsize=(9, 3.6))
    ax.set_xlim(0, 20)
    ax.set_ylim(0, 8)
    ax.axis("off")
    boxes = {"Function\nparams (x, y)": (1, 6.2), "SeqExpr\nbody": (5.5, 6.2),
             "DataflowBlock\nblocks[0]": (10, 6.2), "VarBinding\nlv0 = ...": (14.5, 7.0),
             "VarBinding\ngv0 = ...": (14.5, 4.6), "Call\nop=relax.multiply\nargs (x, y)": (14.5, 2.2),
             "Call\nop=relax.add\nargs (lv0, y)": (14.5, -0.2)}
    for label, (x, y) in boxes.items():
        ax.add_patch(FancyBboxPatch((x, y), 4, 1.3, boxstyle="round,pad=0.1",
                                    facecolor="#dde7f5", edgecolor="black"))
        ax.text(x + 2, y + 0.65, label, ha="center", va="center", fontsize=8.5)

    def arrow(a, b, label=""):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="->", mutation_scale=12))
        if label:
            ax.text((a[0] + b[0]) / 2, (a[1] + b[1]) / 2 + 0.2, label, fontsize=7.5)
    arrow((5, 6.85), (5.5, 6.85), "")
    arrow((9.5, 6.85), (10, 6.85), "")
    arrow((14, 7.1), (14.5, 7.5), "")
    arrow((14, 6.6), (14.5, 5.3), "")
    ax.annotate("", xy=(14.4, 2.9), xytext=(14.4, 7.2),
                arrowprops=dict(arrowstyle="->", connectionstyle="arc3,rad=0.5"))
    ax.annotate("", xy=(14.3, 0.5), xytext=(14.3, 4.9),
                arrowprops=dict(arrowstyle="->", connectionstyle="arc3,rad=0.5"))
    ax.text(11.2, 3.3, ".value", fontsize=8)
    ax.text(11.2, 1.0, ".value", fontsize=8)
    ax.set_ylim(-0.5, 8.5)
    return fig


cells = [
    MD("# 9. Graph optimization\n\n"
       "Most of what a machine-learning compiler does can be seen as **transformations "
       "of programs**. Chapters 3 to 8 transformed single tensor functions: loops, "
       "memory, threads, tensor instructions. This chapter moves one level up, to the "
       "**computational graph**: the Relax function that calls those tensor functions. "
       "At that level the questions are different. Which operators should become one "
       "kernel (*fusion*)? Which subgraph should go to a vendor library? Which "
       "operators can be replaced by cheaper equivalents?\n\n"
       "We will read a Relax program as a data structure, rewrite it by hand with a "
       "visitor (`PyExprMutator`), rewrite it again with the **pattern language** "
       "(`relax.dpl`), fuse the dense layers of the digits MLP into sub-functions, lower "
       "them to TensorIR and merge them with `FuseTIR`, and finally let the built-in "
       "passes `FuseOps` / `FuseTIR` do the same, watched with the `GraphView` widget "
       "and timed against the unfused model."),
    CODE("import numpy as np\nimport mlcbench as tvm\n"
         "from mlcbench import relax, topi\nfrom mlcbench.ir.module import IRModule\n"
         "from mlcbench.runtime import timing\n"
         "from mlcbench.script import ir as I, relax as R, tir as T\n"
         "from mlcbench.datasets import load_digits, load_mlp_params, mlp_forward"),
    MD("## Reading a Relax program\n\n"
       "Our first program multiplies two tensors and adds the second one to the product. "
       "The goal of the first rewrite is to replace the two operators by one, "
       "`relax.ewise_fma` (fused multiply-add, `x * y + z` elementwise), which reads "
       "each input once and writes one output instead of two. (The 2022 course wrote "
       "this with `relax.multiply` inside `with relax.dataflow():`; mlcbench accepts "
       "that spelling too, and prints today's.)"),
    CODE('''@I.ir_module
class MyModule:
    @R.function
    def main(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
        with R.dataflow():
            lv0 = R.multiply(x, y)
            gv0 = R.add(lv0, y)
            R.output(gv0)
        return gv0'''),
    MD("Before rewriting it, let us look at what it is made of. An `IRModule` maps names "
       "to functions; a Relax function is a tree of expression nodes, an *abstract "
       "syntax tree*. We walk down from the function."),
    CODE('relax_func = MyModule["main"]\ntype(relax_func)'),
    MD("The function has a tuple of parameters, which are `relax.Var` nodes, and a body."),
    CODE("relax_func.params"),
    CODE("func_body = relax_func.body\ntype(func_body)"),
    MD("The body is a `SeqExpr`: a sequence of *binding blocks* followed by the value it "
       "returns. Our function has one block, a dataflow block (the `with R.dataflow()` "
       "region: side-effect free, so the compiler may reorder and fuse inside it)."),
    CODE("func_body.blocks"),
    CODE("dataflow_block = func_body.blocks[0]\ndataflow_block.bindings"),
    MD("Each binding is one line of the program: `var = value`. The left-hand side is a "
       "variable, the right-hand side a `relax.Call` whose `op` is the operator and whose "
       "`args` are its operands."),
    CODE("binding = dataflow_block.bindings[0]\nbinding.var"),
    CODE("binding.value"),
    CODE("binding.value.op, binding.value.args"),
    figure_cell("The whole structure, in one picture: the function holds the body, the "
                "body holds the blocks, a block holds bindings, and each binding's value "
                "is a call whose arguments refer back to variables bound earlier (here "
                "`lv0`) or to parameters.", "relax_ast.png", ast_figure()),
    MD("## Rewriting with a visitor: PyExprMutator\n\n"
       "We could rebuild the tree by hand, but every rewrite would then re-implement the "
       "walk over functions, blocks, bindings and calls. The **visitor pattern** "
       "separates the two: `relax.PyExprMutator` walks the tree and rebuilds it, and we "
       "override only the method for the node kind we care about, `visit_call_`. "
       "Three details matter:\n\n"
       "* `self.visit_expr_post_order(call)` first rewrites the call's arguments, so "
       "that rewrites compose bottom-up;\n"
       "* arguments are *variables*, not the calls that computed them: "
       "`self.lookup_binding(var)` returns the value a variable was bound to in the "
       "function being rewritten, which is how we see that `lv0` is a multiply;\n"
       "* the decorator `@relax.expr_functor.mutator` registers the class as a mutator, "
       "as TVM requires; returning a new `relax.Call` replaces the old one."),
    CODE('''@relax.expr_functor.mutator
class EwiseFMARewriter(relax.PyExprMutator):
    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        add_op = tvm.ir.Op.get("relax.add")
        multiply_op = tvm.ir.Op.get("relax.multiply")
        ewise_fma_op = tvm.ir.Op.get("relax.ewise_fma")

        if call.op != add_op:
            return call

        value = self.lookup_binding(call.args[0])
        if not isinstance(value, relax.Call) or value.op != multiply_op:
            return call

        fma_call = relax.Call(
            ewise_fma_op, [value.args[0], value.args[1], call.args[1]], None, None
        )
        return fma_call


updated_fn = EwiseFMARewriter().visit_expr(MyModule["main"])
updated_fn.show()'''),
    MD("`gv0` is now computed by `R.ewise_fma`, but `lv0`, the multiply, is still there: "
       "the mutator rewrote the call that used it, not the binding that defined it. "
       "Nothing reads `lv0` any more, and `remove_all_unused` deletes such dead "
       "bindings."),
    CODE("fma_fn = relax.analysis.remove_all_unused(updated_fn)\nfma_fn.show()"),
    MD("A rewrite must not change what the program computes. Both versions build and "
       "run; we compare them on random inputs."),
    CODE('''def run_main(func_or_mod, *arrays):
    mod = func_or_mod if isinstance(func_or_mod, IRModule) else IRModule({"main": func_or_mod})
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
    return vm["main"](*[tvm.nd.array(a) for a in arrays]).numpy()


rng = np.random.default_rng(0)
x_np, y_np = rng.random((3, 4), dtype="float32"), rng.random((3, 4), dtype="float32")
np.testing.assert_allclose(run_main(fma_fn, x_np, y_np), run_main(MyModule, x_np, y_np), rtol=1e-6)
print("ewise_fma computes x * y + y, as the original did")'''),
    MD("## Rewriting with patterns\n\n"
       "The mutator mixed two concerns: *finding* an add whose first operand is a "
       "multiply, and *building* the replacement. For local rewrites the first part is "
       "better said declaratively. The **dataflow pattern language** `relax.dpl` "
       "describes a shape of graph: `wildcard()` matches anything, `is_const()` a "
       "constant, `is_op(\"relax.add\")(p, q)` a call of `add` whose operands match `p` "
       "and `q`. Patterns look through variable bindings, exactly as `lookup_binding` "
       "did by hand. `rewrite_call(pattern, rewriter, func)` calls `rewriter(call, "
       "matches)` for every match, where `matches` maps each sub-pattern to the "
       "expression it matched, and removes the bindings that became unused."),
    CODE('''from mlcbench.relax.dpl import is_const, is_op, rewrite_call, wildcard

a, b, c = wildcard(), wildcard(), wildcard()
multiply_add = is_op("relax.add")(is_op("relax.multiply")(a, b), c)


def to_fma(call, matches):
    return relax.op.ewise_fma(matches[a], matches[b], matches[c])


fma_by_pattern = rewrite_call(multiply_add, to_fma, MyModule["main"])
fma_by_pattern.show()
tvm.ir.assert_structural_equal(fma_by_pattern, fma_fn)
print("the same program as the mutator's")'''),
    MD("The pattern version is a dozen lines shorter and says what it matches at a "
       "glance. The mutator remains the tool for rewrites that need context beyond one "
       "subgraph (counters, new functions in the module, decisions that depend on what "
       "was seen before), as the next section shows.\n\n"
       "## The digits MLP as a graph\n\n"
       "Now an end-to-end model: the MLP of chapter 4, trained on 8x8 digits "
       "(`datasets/mlp_digits.npz`). We build it with the `BlockBuilder`, emitting "
       "high-level operators. A dense layer computes `x @ W.T + b`; we store each weight "
       "already transposed, so a layer is a `matmul` followed by an `add`."),
    CODE('''mlp_params = load_mlp_params()


def create_model(batch=1):
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((batch, 64), "float32"))
    w0 = relax.const(mlp_params["w0"].T.copy(), "float32")
    b0 = relax.const(mlp_params["b0"], "float32")
    w1 = relax.const(mlp_params["w1"].T.copy(), "float32")
    b1 = relax.const(mlp_params["b1"], "float32")
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit(relax.op.matmul(x, w0))
            lv1 = bb.emit(relax.op.add(lv0, b0))
            lv2 = bb.emit(relax.op.nn.relu(lv1))
            lv3 = bb.emit(relax.op.matmul(lv2, w1))
            lv4 = bb.emit(relax.op.add(lv3, b1))
            gv = bb.emit_output(lv4)
        bb.emit_func_output(gv)
    return bb.get()


MLPModel = create_model()
MLPModel["main"].show()'''),
    MD("## Fusing dense and add, by hand\n\n"
       "We want each `matmul` followed by an `add` to become **one** unit of work. The "
       "mutator below finds that pattern, creates a new *sub-function* "
       "`fused_dense_add0` containing the two operators, adds it to the module with the "
       "attribute `Primitive` (\"treat me as one operator\"), and replaces the pair by a "
       "call to it. This needs module-level context, which is why it is a mutator: "
       "`self.builder_` is the `BlockBuilder` of the module being rewritten, "
       "`add_func` puts the sub-function in it, and a counter names the sub-functions."),
    CODE('''@relax.expr_functor.mutator
class DenseAddFusor(relax.PyExprMutator):
    def __init__(self, mod: IRModule) -> None:
        super().__init__()
        self.mod_ = mod
        self.add_op = tvm.ir.Op.get("relax.add")
        self.dense_op = tvm.ir.Op.get("relax.matmul")
        self.counter = 0

    def transform(self) -> IRModule:
        for global_var, func in self.mod_.functions.items():
            if not isinstance(func, relax.Function):
                continue
            # leave already fused primitive functions alone
            if "Primitive" in func.attrs.keys() and func.attrs["Primitive"] != 0:
                continue
            updated_func = self.visit_expr(func)
            updated_func = relax.analysis.remove_all_unused(updated_func)
            self.builder_.update_func(global_var, updated_func)
        return self.builder_.get()

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)

        def match_call(node, op):
            return isinstance(node, relax.Call) and node.op == op

        # pattern match dense => add
        if not match_call(call, self.add_op):
            return call
        value = self.lookup_binding(call.args[0])
        if value is None or not match_call(value, self.dense_op):
            return call

        x, w, b = value.args[0], value.args[1], call.args[1]
        # a new primitive function computing the pair
        param_x = relax.Var("x", x.struct_info)
        param_w = relax.Var("w", w.struct_info)
        param_b = relax.Var("b", b.struct_info)
        bb = relax.BlockBuilder()
        fn_name = "fused_dense_add%d" % self.counter
        self.counter += 1
        with bb.function(fn_name, [param_x, param_w, param_b]):
            with bb.dataflow():
                lv0 = bb.emit(relax.op.matmul(param_x, param_w))
                gv = bb.emit_output(relax.op.add(lv0, param_b))
            bb.emit_func_output(gv)
        fused_fn = bb.get()[fn_name].with_attr("Primitive", 1)
        global_var = self.builder_.add_func(fused_fn, fn_name)
        # and a call into it
        return relax.Call(global_var, [x, w, b], None, None)


@tvm.ir.transform.module_pass(opt_level=2, name="DenseAddFuse")
class FuseDenseAddPass:
    """Every matmul + add pair becomes a call to a fused primitive function."""
    def transform_module(self, mod, ctx):
        return DenseAddFusor(mod).transform()


MLPFused = FuseDenseAddPass()(MLPModel)
MLPFused.show()'''),
    MD("### Why a sub-function?\n\n"
       "We could instead have invented a new operator, `dense_add`, as we used "
       "`ewise_fma` above. That does not scale: every combination worth fusing (dense + "
       "add, dense + add + relu, conv + batch-norm + relu, ...) would need its own "
       "operator, with its own shape rule and implementation. A sub-function that "
       "*contains* the fused operators carries the same information, for any "
       "combination, and the later stages can read what is inside it. Marking it "
       "`Primitive` tells the rest of the pipeline to treat its body as one kernel."),
    MD("## Lowering to TensorIR\n\n"
       "The fused module still speaks in high-level operators. To generate code we map "
       "each operator to a TensorIR function. `bb.call_te(topi_function, *args)` does "
       "one such mapping: it runs the TE description from the operator library "
       "(`topi`), makes a PrimFunc of it, adds it to the module and returns the "
       "`R.call_tir` that calls it. The mutator below applies a table of such mappings "
       "to every function of the module, the fused sub-functions included."),
    CODE('''@relax.expr_functor.mutator
class LowerToTensorIR(relax.PyExprMutator):
    def __init__(self, mod: IRModule, op_map) -> None:
        super().__init__()
        self.mod_ = mod
        self.op_map = {tvm.ir.Op.get(k): v for k, v in op_map.items()}

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        if call.op in self.op_map:
            return self.op_map[call.op](self.builder_, call)
        return call

    def transform(self) -> IRModule:
        for global_var, func in self.mod_.functions.items():
            if not isinstance(func, relax.Function):
                continue
            updated_func = self.visit_expr(func)
            self.builder_.update_func(global_var, updated_func)
        return self.builder_.get()


def map_dense(bb, call):
    x, w = call.args
    return bb.call_te(topi.nn.matmul, x, w)

def map_add(bb, call):
    a, b = call.args
    return bb.call_te(topi.add, a, b)

def map_relu(bb, call):
    return bb.call_te(topi.nn.relu, call.args[0])


op_map = {"relax.matmul": map_dense, "relax.add": map_add, "relax.nn.relu": map_relu}


@tvm.ir.transform.module_pass(opt_level=0, name="LowerToTensorIR")
class LowerToTensorIRPass:
    def transform_module(self, mod, ctx):
        return LowerToTensorIR(mod, op_map).transform()


MLPModelTIR = LowerToTensorIRPass()(MLPFused)
print(sorted(gv.name_hint for gv in MLPModelTIR.functions))'''),
    MD("`fused_dense_add0` is still a Relax function that calls two TensorIR functions, "
       "`matmul` then `add`, through a temporary tensor. **`FuseTIR`** merges such a "
       "primitive function into a *single* TensorIR function: the two loop nests end up "
       "in one PrimFunc, the temporary becomes a local allocation, and the main "
       "function calls one kernel per dense layer."),
    CODE('MLPModelFinal = relax.transform.FuseTIR()(MLPModelTIR)\nMLPModelFinal["main"].show()'),
    CODE('MLPModelFinal["fused_dense_add0"].show()'),
    MD("## Build and run\n\n"
       "The final module builds like any other. We classify the 360 test digits one at a "
       "time (the model has batch size 1, as in the course) and compare with the numpy "
       "reference of the same MLP."),
    CODE('''ex = relax.build(MLPModelFinal, target="llvm")
vm = relax.VirtualMachine(ex, tvm.cpu())
_, _, x_test, y_test = load_digits(flat=True)
logits = np.concatenate([vm["main"](tvm.nd.array(x_test[i:i + 1])).numpy()
                         for i in range(len(x_test))])
np.testing.assert_allclose(logits, mlp_forward(x_test, mlp_params), rtol=1e-4, atol=1e-5)
print(f"accuracy on the test digits: {(logits.argmax(1) == y_test).mean():.2%}")'''),
    MD("## Patterns for offloading to a library\n\n"
       "Pattern rewriting is also how a compiler hands a subgraph to a vendor library "
       "(cuBLAS, oneDNN, or an accelerator's runtime). Here the \"library\" is a Python "
       "function registered under the name `mylib.dense_add`; the pattern finds each "
       "dense layer (`matmul` by a constant, then `add` of a constant) and replaces it "
       "with `call_dps_packed`, the Relax call into a registered function that writes "
       "into an output it is given (destination-passing style, chapter 4)."),
    CODE('''@tvm.register_func("mylib.dense_add", override=True)
def dense_add(x, w, b, out):
    out.copyfrom(x.numpy() @ w.numpy() + b.numpy())


data, weight, bias = wildcard(), is_const(), is_const()
dense_layer = is_op("relax.add")(is_op("relax.matmul")(data, weight), bias)


def to_library(call, matches):
    return relax.op.call_dps_packed("mylib.dense_add",
                                    [matches[data], matches[weight], matches[bias]],
                                    out_sinfo=call.struct_info)


offloaded = rewrite_call(dense_layer, to_library, MLPModel["main"])
offloaded.show()
np.testing.assert_allclose(run_main(offloaded, x_test[:1]), mlp_forward(x_test[:1], mlp_params),
                           rtol=1e-5)
print("the offloaded model computes the same logits")'''),
    MD("## The automatic way: FuseOps and FuseTIR\n\n"
       "Writing a pattern for every combination is what we wanted to avoid. mlcbench, "
       "like TVM, fuses automatically from what each TensorIR function *does*: "
       "`LegalizeOps` lowers every operator to TensorIR, `AnnotateTIROpPattern` "
       "classifies each kernel by its loops (elementwise, broadcast, injective, "
       "reduction, \"output-elementwise-fusable\" like a matmul whose output can take "
       "elementwise consumers), `FuseOps` groups producers with consumers according to "
       "those classes, and `FuseTIR` turns each group into one kernel. This is also what "
       "`relax.build` runs by default.\n\n"
       "The `GraphView` widget runs those passes on a model and shows the dataflow graph "
       "before and after, with fused groups boxed, and a table of every edge: fused or "
       "not, and the rule that decided. Note that it finds a larger group than our "
       "hand-written pass: `relu` joins the first dense layer, because an elementwise "
       "consumer of an elementwise op can always be fused."),
    CODE('''from mlcbench_widgets import GraphView

view = GraphView(MLPModel)
view'''),
    CODE("view.kernel_counts"),
    CODE("print(view.text())"),
    MD("## Fused against unfused\n\n"
       "Fusion saves two things: the memory traffic of intermediate tensors (written by "
       "one kernel, read back by the next) and the cost of launching each kernel. On a "
       "GPU both are large; on a CPU with a model this small, the second dominates. We "
       "time four versions of the MLP at batch size 1 on the same input: the unfused "
       "model (`LegalizeOps`, one kernel per operator, built with only the VM lowering "
       "so that `relax.build` does not fuse it behind our back), our hand-fused "
       "`MLPModelFinal`, the automatically fused model, and the numpy reference. "
       "The programs are timed with `mlcbench.runtime.timing`: they take turns for "
       "several rounds, each after a short pause, and each keeps its best round; a "
       "figure whose two best rounds differ by more than 20% is marked unsteady, and "
       "every ratio reads \"x faster than numpy\" or \"x slower than numpy\"."),
    CODE('''unfused = relax.transform.LegalizeOps()(MLPModel)
programs = {
    "unfused (5 kernels)": relax.build(unfused, target="llvm", pipeline="vm_lowering"),
    "hand-fused (3 kernels)": relax.build(MLPModelFinal, target="llvm"),
    "FuseOps (2 kernels)": relax.build(view.after, target="llvm", pipeline="vm_lowering"),
}
x1_np = x_test[:1]
x1 = tvm.nd.array(x1_np)
candidates = {name: timing.kernel(relax.VirtualMachine(executable, tvm.cpu()), "main", x1)
              for name, executable in programs.items()}
candidates["numpy"] = timing.call(lambda: mlp_forward(x1_np, mlp_params))
result = timing.compare(candidates)
for name in programs:
    print(result.describe(name, "numpy"))'''),
    MD("Read the figures before any explanation: they depend on the machine and on "
       "what else it is doing. Fusion removes kernel calls and intermediate tensors, "
       "but a fused kernel is also a *different loop nest*, and the default CPU "
       "schedules that `relax.build` applies to every kernel (chapter 5) may suit a "
       "fused matmul + add + relu less well than a lone matmul. At batch size 1 each "
       "kernel runs for about a microsecond, so these effects are of the same size as "
       "the Python call into the VM, and fused or unfused may come out ahead. Fusion "
       "pays clearly when the intermediates are large (they no longer travel through "
       "memory) or kernel launches are expensive, as on a GPU; and fused kernels are "
       "what tuning (chapter 5) then optimizes as a whole.\n\n"
       "## Discussion\n\n"
       "The theme of this course is **transformation**, and this chapter applied it to "
       "the graph: a rewrite of one operator pair (multiply + add), fusion into "
       "sub-functions, lowering to TensorIR, merging with `FuseTIR`, offloading to a "
       "library. Each is a function from `IRModule` to `IRModule`, so they compose: we "
       "can fuse a pattern of our own first and hand the result to the built-in fusion "
       "for the rest.\n\n"
       "Real fusion passes must be more careful than ours. `DenseAddFusor` would happily "
       "duplicate a matmul whose result feeds two adds (each fused function recomputes "
       "it); a robust pass checks that the intermediate has a single consumer. And "
       "instead of rules for each combination, `FuseOps` decides from the loop structure "
       "of the kernels, which is why it keeps working when new operators are added.\n\n"
       "## Summary\n\n"
       "* A Relax function is a tree: Function, SeqExpr, binding blocks, bindings, calls.\n"
       "* `PyExprMutator` with `visit_call_` and `lookup_binding` rewrites calls; "
       "`remove_all_unused` cleans up.\n"
       "* The pattern language (`is_op`, `wildcard`, `is_const`, `rewrite_call`) says "
       "the same thing declaratively, and is how subgraphs are offloaded to libraries.\n"
       "* Fusion groups operators into primitive sub-functions; lowering maps operators "
       "to TensorIR; `FuseTIR` makes one kernel of each group.\n"
       "* `FuseOps` / `FuseTIR` fuse automatically; `GraphView` shows what fused and why."),
    MD("## Exercises\n\n"
       "Each exercise has a cell to fill in and a cell that checks your answer. Until "
       "you fill it in, the check says \"not attempted yet\"; a wrong answer raises an "
       "error that says what differs. Reference solutions are in "
       "`tests/notebooks/test_ch09_exercises.py`."),
    exercise_cell('''import numpy as np
import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir.module import IRModule
from mlcbench.script import ir as I, relax as R
from mlcbench.datasets import load_digits, load_mlp_params, mlp_forward


@I.ir_module
class Distribute:
    @R.function
    def main(a: R.Tensor((4, 8), "float32"), b: R.Tensor((4, 8), "float32"),
             c: R.Tensor((4, 8), "float32")):
        with R.dataflow():
            lv0 = R.multiply(a, b)
            lv1 = R.multiply(a, c)
            gv = R.add(lv0, lv1)
            R.output(gv)
        return gv


@I.ir_module
class Factored:
    @R.function
    def main(a: R.Tensor((4, 8), "float32"), b: R.Tensor((4, 8), "float32"),
             c: R.Tensor((4, 8), "float32")):
        with R.dataflow():
            lv = R.add(b, c)
            gv = R.multiply(a, lv)
            R.output(gv)
        return gv


def check_exercise_1(rewrite):
    """True when rewrite(Distribute["main"]) is Factored["main"]; False when not tried."""
    try:
        func = rewrite(Distribute["main"])
    except NotImplementedError:
        print("Exercise 1: not attempted yet")
        return False
    tvm.ir.assert_structural_equal(func, Factored["main"])
    print("Exercise 1: correct, a * b + a * c became a * (b + c)")
    return True'''),
    MD("### Exercise 1: factor a common operand\n\n"
       "`Distribute` computes `a * b + a * c`: two multiplies. Write a rewrite (with the "
       "pattern language or a `PyExprMutator`) that turns it into `a * (b + c)`, one "
       "multiply, exactly as in `Factored`. It should apply only when both multiplies "
       "share their first operand, and leave no unused bindings behind."),
    CODE('''def rewrite_exercise_1(func: relax.Function) -> relax.Function:
    # your rewrite here; return the new function
    raise NotImplementedError


exercise_1_done = check_exercise_1(rewrite_exercise_1)'''),
    exercise_cell('''def mlp_model():
    """The digits MLP at batch size 1, dense layers as matmul + add (weights transposed)."""
    params = load_mlp_params()
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((1, 64), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit(relax.op.matmul(x, relax.const(params["w0"].T.copy())))
            lv1 = bb.emit(relax.op.add(lv0, relax.const(params["b0"])))
            lv2 = bb.emit(relax.op.nn.relu(lv1))
            lv3 = bb.emit(relax.op.matmul(lv2, relax.const(params["w1"].T.copy())))
            lv4 = bb.emit(relax.op.add(lv3, relax.const(params["b1"])))
            gv = bb.emit_output(lv4)
        bb.emit_func_output(gv)
    return bb.get()


def check_exercise_2(fuse):
    """True when fuse(mlp_model()) runs the MLP in two kernels with the right logits."""
    try:
        mod = fuse(mlp_model())
    except NotImplementedError:
        print("Exercise 2: not attempted yet")
        return False
    # LegalizeOps lowers any operator left over, one kernel each; no automatic fusion
    ex = relax.build(relax.transform.LegalizeOps()(mod), target="llvm", pipeline="vm_lowering")
    kernels = ex.as_text().count("  kernel ")
    assert kernels == 2, f"main calls {kernels} kernels, expected 2"
    vm = relax.VirtualMachine(ex, tvm.cpu())
    _, _, x_test, _ = load_digits(flat=True)
    for row in x_test[:8]:
        got = vm["main"](tvm.nd.array(row[None])).numpy()
        np.testing.assert_allclose(got, mlp_forward(row[None], load_mlp_params()),
                                   rtol=1e-4, atol=1e-5)
    print("Exercise 2: correct, two kernels and the logits of the MLP")
    return True'''),
    MD("### Exercise 2: dense, add and relu in one kernel\n\n"
       "Extend the hand-written fusion of this chapter so that the first layer's "
       "`matmul`, `add` and `relu` become one primitive sub-function (and the second "
       "layer's `matmul` and `add` another), then lower to TensorIR and apply "
       "`FuseTIR`, so that `main` calls exactly two kernels. Use the mutators of this "
       "chapter (define them again here, or reuse them from above); do not call "
       "`FuseOps`, which would do it for you."),
    CODE('''def fuse_exercise_2(mod: IRModule) -> IRModule:
    # your passes here; return the fused, lowered module
    raise NotImplementedError


exercise_2_done = check_exercise_2(fuse_exercise_2)'''),
]

nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3",
                                                        "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "notebooks/09_graph_optimization.ipynb")
