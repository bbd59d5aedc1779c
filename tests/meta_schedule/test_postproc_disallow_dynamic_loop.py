"""DisallowDynamicLoop: loops with a symbolic extent are rejected."""
from mlcbench import meta_schedule as ms
from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers import space_testing as sp


@T.prim_func
def scale(a: T.handle, b: T.handle):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(2)


def test_symbolic_extent_is_rejected_and_constant_accepted():
    assert not ms.postproc.DisallowDynamicLoop().apply(Schedule(scale))
    assert ms.postproc.DisallowDynamicLoop().apply(Schedule(sp.matmul(8)[0]))


def test_postproc_create_lists_the_cpu_defaults():
    names = [type(p).__name__ for p in ms.Postproc.create("llvm")]
    assert names == ["DisallowDynamicLoop", "RewriteParallelVectorizeUnroll",
                     "PackVectorOperand", "RewriteReductionBlock"]
