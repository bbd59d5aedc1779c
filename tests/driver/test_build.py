"""``build``: TVMScript -> lowering -> LLVM -> runtime Module, end to end."""
import numpy as np
import pytest

from mlcbench.driver.build import build, kernel_spec, lower
from mlcbench.driver.kernels import MM_RELU, parallel_vectorized_matmul
from mlcbench.ir.errors import CodegenError
from mlcbench.runtime.metadata import ParamSpec
from mlcbench.script import from_source
from mlcbench.target import Target

SYMBOLIC_ADD = '''
@T.prim_func
def add_scalar(a: T.handle, b: T.handle, alpha: T.float32):
    n = T.int64()
    A = T.match_buffer(a, (n, 4), "float32")
    B = T.match_buffer(b, (n, 4), "float32")
    for i, j in T.grid(n, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * alpha + T.float32(1)
'''


@pytest.fixture(scope="module")
def mm_relu_lib():
    return build(from_source(MM_RELU), target="llvm")


def test_mm_relu_end_to_end(mm_relu_lib):
    rng = np.random.default_rng(0)
    a, b = rng.random((128, 128), dtype="float32"), rng.random((128, 128), dtype="float32")
    c = np.zeros((128, 128), "float32")
    mm_relu_lib["mm_relu"](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5)


def test_kernel_spec_names_params_and_shapes(mm_relu_lib):
    spec = mm_relu_lib.kernel_specs["mm_relu"]
    assert [p.name for p in spec.params] == ["A", "B", "C"]
    assert spec.params[0] == ParamSpec("A", "buffer", "float32", (128, 128))
    assert spec.shape_vars == ()


def test_symbolic_shape_and_scalar_param():
    func = from_source(SYMBOLIC_ADD)
    (lowered,) = lower(func).functions.values()
    spec = kernel_spec("add_scalar", "mlc_add_scalar", lowered)
    assert spec.params[0].shape == ("n", 4) and spec.params[2].kind == "scalar"
    assert spec.shape_vars == ("n",)
    lib = build(func, name="add_scalar")
    a = np.arange(20, dtype="float32").reshape(5, 4)
    b = np.zeros_like(a)
    lib["add_scalar"](a, b, 2.0)
    np.testing.assert_allclose(b, a * 2 + 1)


def test_parallel_vectorized_matmul_is_vector_code():
    with Target("llvm --num-cores=2"):
        lib = build(from_source(parallel_vectorized_matmul(n=64, lanes=16)))
    rng = np.random.default_rng(1)
    a, b = rng.random((64, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
    c = np.zeros((64, 64), "float32")
    lib["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    ir_text = lib.get_source("ll")
    assert "<16 x float>" in ir_text and "@GOMP_parallel" in ir_text


def test_primfunc_without_global_symbol_is_main():
    text = MM_RELU.split("@T.prim_func")[1].replace(
        'T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})', "")
    func = from_source("@T.prim_func" + text.replace("\n    ", "\n"))
    lib = build(func)
    assert lib.function_names == ["main"]


def test_gpu_target_needs_thread_bound_loops():
    with pytest.raises(CodegenError, match="`for i, j, k in T.grid.*runs outside every "
                                           "thread-bound loop"):
        build(from_source(MM_RELU), target="cuda")


def test_lower_simple_mode_gives_the_compact_loop_nest_either_way():
    from mlcbench.ir import assert_structural_equal
    from mlcbench.tir import Schedule
    sch = Schedule(from_source(MM_RELU))
    _, j, _ = sch.get_loops(sch.get_block("Y", func_name="mm_relu"))
    sch.split(j, factors=[None, 5])          # 128 = 25 * 5 + 3: a guarded tail
    simple, full = lower(sch.mod, simple_mode=True), lower(sch.mod, simple_mode=False)
    assert_structural_equal(simple, full)
    text = simple.script()
    # one loop over j_0 with its guard, not a main part and a tail (no partitioning)
    assert "for i, j_0, j_1, k in T.grid(128, 26, 5, 128):" in text
    assert "if j_0 * 5 + j_1 < 128:" in text


def test_lower_refuses_a_simple_mode_that_is_not_a_bool():
    from mlcbench.ir.errors import InvalidTypeError
    with pytest.raises(InvalidTypeError, match="lower: simple_mode must be True or False, "
                       "found str 'yes'"):
        lower(from_source(MM_RELU), simple_mode="yes")
