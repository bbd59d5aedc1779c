"""The exercises of notebooks/04_end_to_end.ipynb: a module mixing TensorIR and a
library call, a kernel scheduled and put back into its module, an ONNX model compiled
and run. Each is checked by numbers against numpy or onnxruntime and by the structure
of the module. Reference solutions: tests/notebooks/test_ch04_exercises.py."""
from nbformat.v4 import new_code_cell, new_markdown_cell

MD, CODE = new_markdown_cell, new_code_cell


def exercise_cell(source):
    """A code cell that tests/notebooks/ runs with the reference solutions."""
    return new_code_cell(source, metadata={"tags": ["exercise-setup"]})


SETUP_1 = '''import numpy as np
import mlcbench as tvm
from mlcbench import relax, datasets, tir
from mlcbench.script import ir as I, relax as R, tir as T

_, _, x_exercise, _ = datasets.load_digits(flat=True)
x_exercise = x_exercise[:8]
mlp_params = datasets.load_mlp_params()
mlp_weights = [mlp_params[k] for k in ("w0", "b0", "w1", "b1")]
expected_logits = datasets.mlp_forward(x_exercise, mlp_params)


@tvm.register_func("env.linear", override=True)
def env_linear(x, w, b, out):
    np.from_dlpack(out)[...] = np.from_dlpack(x) @ np.from_dlpack(w).T + np.from_dlpack(b)


def calls_in_main(mod):
    """How many R.call_tir and R.call_dps_packed main makes (read from its script)."""
    text = mod["main"].script()
    return text.count("R.call_tir("), text.count("R.call_dps_packed(")


def run_mlp(mod):
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
    return vm["main"](x_exercise, *mlp_weights).numpy()


def check_exercise_1(make_module):
    """True when make_module() runs the MLP with one fused TensorIR kernel and one
    library call; False when not tried."""
    try:
        mod = make_module()
    except NotImplementedError:
        print("Exercise 1: not attempted yet")
        return False
    kernels = [gv.name_hint for gv, f in mod.functions.items() if isinstance(f, tir.PrimFunc)]
    assert len(kernels) == 1, f"expected one PrimFunc (linear + relu), found {kernels}"
    assert calls_in_main(mod) == (1, 1), (
        f"main should make one R.call_tir and one R.call_dps_packed, found "
        f"{calls_in_main(mod)[0]} and {calls_in_main(mod)[1]}")
    np.testing.assert_allclose(run_mlp(mod), expected_logits, rtol=1e-4, atol=1e-4)
    print(f"Exercise 1: correct, {kernels[0]} and env.linear compute the MLP")
    return True'''

SETUP_2 = '''@I.ir_module
class ExerciseMLP:
    @T.prim_func
    def linear0(X: T.Buffer((8, 64), "float32"), W: T.Buffer((128, 64), "float32"),
                B: T.Buffer((128,), "float32"), Z: T.Buffer((8, 128), "float32")):
        T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
        for i, j, k in T.grid(8, 128, 64):
            with T.block("Z"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Z[vi, vj] = B[vj]
                Z[vi, vj] = Z[vi, vj] + X[vi, vk] * W[vj, vk]

    @T.prim_func
    def relu0(X: T.Buffer((8, 128), "float32"), Y: T.Buffer((8, 128), "float32")):
        T.func_attr({"global_symbol": "relu0", "tir.noalias": True})
        for i, j in T.grid(8, 128):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @R.function
    def main(x: R.Tensor((8, 64), "float32"), w0: R.Tensor((128, 64), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        cls = ExerciseMLP
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), R.Tensor((8, 128), dtype="float32"))
            lv1 = R.call_tir(cls.relu0, (lv0,), R.Tensor((8, 128), dtype="float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((8, 10), "float32"))
            R.output(out)
        return out


def loop_count(func):
    """The number of loops in a PrimFunc."""
    from mlcbench.tir.functor import post_order_visit
    loops = []
    post_order_visit(func.body, lambda node: loops.append(node)
                     if isinstance(node, tir.For) else None)
    return len(loops)


def check_exercise_2(reschedule):
    """True when reschedule(ExerciseMLP) has linear0 tiled (more loops), everything
    else unchanged, and the same logits; False when not tried."""
    try:
        mod = reschedule(ExerciseMLP)
    except NotImplementedError:
        print("Exercise 2: not attempted yet")
        return False
    for name in ("relu0", "main"):
        tvm.ir.assert_structural_equal(mod[name], ExerciseMLP[name])
    before, after = loop_count(ExerciseMLP["linear0"]), loop_count(mod["linear0"])
    assert after > before, f"linear0 has {after} loops, expected more than the {before} it had"
    np.testing.assert_allclose(run_mlp(mod), expected_logits, rtol=1e-4, atol=1e-4)
    print(f"Exercise 2: correct, linear0 now has {after} loops and the logits are unchanged")
    return True'''

SETUP_3 = '''import onnxruntime
from mlcbench.relay.testing import tiny_cnn


def check_exercise_3(compile_onnx):
    """True when compile_onnx(model) returns a function of one image batch that matches
    onnxruntime on tiny_cnn; False when not tried."""
    model = tiny_cnn(batch=2, size=8, filters=6, classes=5, seed=3)
    try:
        predict = compile_onnx(model)
    except NotImplementedError:
        print("Exercise 3: not attempted yet")
        return False
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for _ in range(3):
        data = rng.standard_normal((2, 3, 8, 8)).astype("float32")
        expected = session.run(None, {"data": data})[0]
        got = np.asarray(predict(data))
        assert got.shape == expected.shape, f"output shape {got.shape}, expected {expected.shape}"
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    print("Exercise 3: correct, the compiled tiny_cnn matches onnxruntime")
    return True'''


EXERCISE_CELLS = [
    MD("## Exercises\n\n"
       "Each exercise has a cell to fill in and a cell that checks your answer. Until you "
       "fill it in, the check says \"not attempted yet\"; a wrong answer raises an error "
       "that says what differs. Reference solutions are in "
       "`tests/notebooks/test_ch04_exercises.py`."),
    exercise_cell(SETUP_1),
    MD("### Exercise 1: one fused kernel, one library call\n\n"
       "Write an IRModule whose `main(x, w0, b0, w1, b1)` takes 8 images (`x` of shape "
       "`(8, 64)`) and computes the MLP with exactly two calls: an `R.call_tir` of **one** "
       "TensorIR function that computes `relu(x @ w0.T + b0)` in a single PrimFunc (name "
       "it as you like; two blocks inside it are fine), then an `R.call_dps_packed` of "
       "`\"env.linear\"` for the second layer (the set-up cell registered it). Return the "
       "module from `exercise_1_module`."),
    CODE('''def exercise_1_module():
    # define an @I.ir_module class here and return it
    raise NotImplementedError


exercise_1_done = check_exercise_1(exercise_1_module)'''),
    exercise_cell(SETUP_2),
    MD("### Exercise 2: schedule a kernel inside its module\n\n"
       "`ExerciseMLP` mixes two TensorIR kernels and a library call. Transform its "
       "`linear0` with `tir.Schedule` as in chapter 3 (for instance, split `j` by 8 and "
       "move the 8-wide loop innermost, then `decompose_reduction`), and put the result "
       "back into the module with `mod.update_func(mod.get_global_var(\"linear0\"), "
       "...)` on a copy. Everything else (`relu0`, `main`) must stay as it was; the "
       "logits must not change. Hint: `tir.Schedule(ExerciseMLP)` schedules the whole "
       "module, and `sch.get_block(\"Z\", func_name=\"linear0\")` finds the block."),
    CODE('''def reschedule_exercise_2(mod):
    # your schedule here; return the module with the new linear0
    raise NotImplementedError


exercise_2_done = check_exercise_2(reschedule_exercise_2)'''),
    exercise_cell(SETUP_3),
    MD("### Exercise 3: an ONNX model, end to end\n\n"
       "`relay.testing.tiny_cnn` builds a small ONNX model: a 3x3 convolution, relu, "
       "global average pooling and a dense layer with softmax. Write `compile_onnx(model)` "
       "that imports it with `from_onnx`, builds it, and returns a function of a numpy "
       "batch `data` (shape `(2, 3, 8, 8)`) that returns the probabilities as a numpy "
       "array. The check compares it with onnxruntime on three random batches."),
    CODE('''def compile_onnx(model):
    # import, build, and return a function data -> numpy output
    raise NotImplementedError


exercise_3_done = check_exercise_3(compile_onnx)'''),
]
