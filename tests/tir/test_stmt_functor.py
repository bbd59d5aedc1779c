"""tir.stmt_functor: TVM's module of IR walkers, as tutorials reach it."""
import mlcbench as tvm
from mlcbench.script import tir as T


@T.prim_func
def scale(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)


def test_post_and_pre_order_visit_see_every_node_in_their_order():
    post, pre = [], []
    tvm.tir.stmt_functor.post_order_visit(scale.body, lambda n: post.append(type(n).__name__))
    tvm.tir.stmt_functor.pre_order_visit(scale.body, lambda n: pre.append(type(n).__name__))
    assert "For" in post and "BufferStore" in post and "Block" in post
    assert post.index("BufferStore") < post.index("For")
    assert pre.index("For") < pre.index("BufferStore")
    assert sorted(pre) == sorted(post)


def test_substitute_replaces_a_variable():
    x, y = tvm.tir.Var("x", "int32"), tvm.tir.Var("y", "int32")
    expr = tvm.tir.stmt_functor.substitute(x + 1, {x: y})
    assert tvm.ir.structural_equal(expr, y + 1)
