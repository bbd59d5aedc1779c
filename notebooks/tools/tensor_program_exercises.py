"""The exercises of notebooks/02_tensor_programs.ipynb: three tensor programs to write
(broadcast add, a 2-D convolution, a batched matmul with relu), each checked against
numpy, the last also by the kinds of its block axes. Reference solutions:
tests/notebooks/test_ch02_exercises.py."""
from nbformat.v4 import new_code_cell, new_markdown_cell

MD, CODE = new_markdown_cell, new_code_cell


def exercise_cell(source):
    """A code cell that tests/notebooks/ runs with the reference solutions."""
    return new_code_cell(source, metadata={"tags": ["exercise-setup"]})


SETUP = '''import numpy as np
import mlcbench as tvm
from mlcbench.script import tir as T, ir as I
from mlcbench.tir.functor import post_order_visit


def _attempt(number, write_module):
    """The learner's module, or None when the exercise is not attempted yet."""
    try:
        return write_module()
    except NotImplementedError:
        print(f"Exercise {number}: not attempted yet")
        return None


def _run(mod, inputs, out_shape):
    """Build ``mod`` and run its only function on ``inputs``; return the output."""
    lib = tvm.build(mod, target="llvm")
    (gv,) = mod.get_global_vars()
    # the exported name: the global_symbol attribute (te.create_prim_func sets "main")
    name = (mod[gv].attrs or {}).get("global_symbol", gv.name_hint)
    out = tvm.nd.empty(out_shape, "float32")
    lib[name](*[tvm.nd.array(x) for x in inputs], out)
    return out.numpy()


def check_exercise_1(write_module):
    """True when the module adds B (4,) to every row of A (4, 4); False when not tried."""
    mod = _attempt(1, write_module)
    if mod is None:
        return False
    rng = np.random.default_rng(1)
    a, b = rng.random((4, 4), dtype="float32"), rng.random(4, dtype="float32")
    np.testing.assert_allclose(_run(mod, [a, b], (4, 4)), a + b, rtol=1e-6)
    print("Exercise 1: correct, equal to numpy's broadcast a + b")
    return True


def conv2d_reference(data, weight):
    """numpy's answer for exercise 2: stride 1, no padding, NCHW data, OIHW weight."""
    windows = np.lib.stride_tricks.sliding_window_view(data, weight.shape[2:], axis=(2, 3))
    return np.einsum("nchwyx,ocyx->nohw", windows, weight)


def check_exercise_2(write_module):
    """True when the module convolves a (1, 1, 8, 8) image with (2, 1, 3, 3) weights."""
    mod = _attempt(2, write_module)
    if mod is None:
        return False
    rng = np.random.default_rng(2)
    data = rng.random((1, 1, 8, 8), dtype="float32")
    weight = rng.random((2, 1, 3, 3), dtype="float32")
    np.testing.assert_allclose(_run(mod, [data, weight], (1, 2, 6, 6)),
                               conv2d_reference(data, weight), rtol=1e-5)
    print("Exercise 2: correct, equal to the numpy convolution")
    return True


def block_axis_kinds(mod):
    """Each block's axis kinds, e.g. {'Y': 'SSSR', 'C': 'SSS'}."""
    kinds = {}

    def visit(node):
        if isinstance(node, tvm.tir.Block) and node.iter_vars:
            kinds[node.name_hint] = "".join(
                "R" if iv.iter_type.name == "COMM_REDUCE" else "S" for iv in node.iter_vars)
    for func in mod.functions.values():
        post_order_visit(func.body, visit)
    return kinds


def check_exercise_3(write_module):
    """True when the module computes relu(A @ B) per batch for (4, 64, 64) inputs and
    its blocks declare their axes right: one block SSSR (the matmul), one SSS (relu)."""
    mod = _attempt(3, write_module)
    if mod is None:
        return False
    kinds = sorted(block_axis_kinds(mod).values())
    assert kinds == ["SSS", "SSSR"], (
        f"expected two blocks, one with axes SSSR (batch, row, column spatial; k reduce) "
        f"and one SSS (relu), found {block_axis_kinds(mod)}")
    rng = np.random.default_rng(3)
    a = rng.random((4, 64, 64), dtype="float32")
    b = rng.random((4, 64, 64), dtype="float32")
    np.testing.assert_allclose(_run(mod, [a, b], (4, 64, 64)), np.maximum(a @ b, 0),
                               rtol=1e-5)
    print("Exercise 3: correct, equal to numpy's relu(a @ b) and the axes are right")
    return True'''

EXERCISE_CELLS = [
    MD("## Exercises\n\n"
       "Each exercise asks for an `IRModule` written in TVMScript (or made with TE). Put "
       "your module inside the function of the exercise cell and return it; the next "
       "call checks it. Until you do, the check says \"not attempted yet\"; a wrong "
       "answer raises an error that says what differs. A good habit, the one the "
       "course recommends: write the computation in low-level numpy first, check it, "
       "then translate it line by line. Reference solutions are in "
       "`tests/notebooks/test_ch02_exercises.py`."),
    exercise_cell(SETUP),
    MD("### Exercise 1: broadcast add\n\n"
       "Write a function that adds a vector `B` of shape `(4,)` to every row of a "
       "matrix `A` of shape `(4, 4)`, writing `C` of shape `(4, 4)`: what numpy "
       "computes for `a + b` by *broadcasting*. In a loop nest, broadcasting is "
       "nothing special: `B` is simply indexed by the column only."),
    CODE('''def write_broadcast_add():
    # @I.ir_module
    # class BroadcastAdd:
    #     @T.prim_func
    #     def add(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32"),
    #             C: T.Buffer((4, 4), "float32")):
    #         ...
    # return BroadcastAdd
    raise NotImplementedError


exercise_1_done = check_exercise_1(write_broadcast_add)'''),
    MD("### Exercise 2: a 2-D convolution\n\n"
       "A convolution slides a small window of weights over an image. With data `A` of "
       "shape `(1, 1, 8, 8)` (batch, channels, height, width), weights `W` of shape "
       "`(2, 1, 3, 3)` (output channels, input channels, window height, width), stride "
       "1 and no padding, the output has shape `(1, 2, 6, 6)` and\n\n"
       "`Out[n, o, h, w] = sum over c, y, x of A[n, c, h + y, w + x] * W[o, c, y, x]`.\n\n"
       "Which of the seven axes are spatial and which are reduce? (The check runs the "
       "program; `conv2d_reference` shows numpy's answer.)"),
    CODE('''def write_conv2d():
    # @I.ir_module
    # class Conv2d:
    #     @T.prim_func
    #     def conv(A: T.Buffer((1, 1, 8, 8), "float32"), W: T.Buffer((2, 1, 3, 3), "float32"),
    #              Out: T.Buffer((1, 2, 6, 6), "float32")):
    #         ...
    # return Conv2d
    raise NotImplementedError


exercise_2_done = check_exercise_2(write_conv2d)'''),
    MD("### Exercise 3: batched matmul with relu\n\n"
       "`bmm_relu` takes `A` and `B` of shape `(4, 64, 64)` and computes, for each of "
       "the 4 batches `n`, `C[n] = relu(A[n] @ B[n])`, through an intermediate `Y` as "
       "`mm_relu` did. Write it in TVMScript, or with TE and `te.create_prim_func`. "
       "Besides the numbers, the check reads your blocks' axis kinds: a matmul "
       "block whose `k` is declared spatial computes the right numbers when run in "
       "order, but it tells the schedule a lie that the next chapter would act on."),
    CODE('''def write_bmm_relu():
    # TVMScript, as mm_relu, or:
    # from mlcbench import te
    # A = te.placeholder((4, 64, 64), "float32", name="A")
    # ...
    # return tvm.IRModule({"bmm_relu": te.create_prim_func([A, B, C])})
    raise NotImplementedError


exercise_3_done = check_exercise_3(write_bmm_relu)'''),
]
