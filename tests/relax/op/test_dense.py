"""relax.op.nn.dense (the 2022 course's dense: data @ weight.T), against numpy."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import ir, relax
from mlcbench.ir.errors import IRError
from mlcbench.relax import op


def _tensor(name, shape, dtype="float32"):
    return relax.Var(name, relax.TensorStructInfo(shape, dtype))


def test_is_the_registered_op_the_course_looks_up():
    call = op.nn.dense(_tensor("x", (1, 784)), _tensor("w", (128, 784)))
    assert call.op == ir.Op.get("relax.nn.dense")
    assert op.dense is op.nn.dense and op.relu is op.nn.relu
    assert op.get_op_info("relax.nn.dense").pattern == op.OpPatternKind.OUT_EWISE_FUSABLE
    assert call.struct_info.static_shape() == (1, 128)
    batched = op.nn.dense(_tensor("x", (2, 3, 5)), _tensor("w", (4, 5)))
    assert batched.struct_info.static_shape() == (2, 3, 4)


@settings(max_examples=6, deadline=None)
@given(rows=st.integers(1, 5), k=st.integers(1, 9), units=st.integers(1, 7))
def test_matches_numpy(run_relax, rows, k, units):
    rng = np.random.default_rng(rows * 100 + k * 10 + units)
    x = rng.standard_normal((rows, k)).astype("float32")
    w = rng.standard_normal((units, k)).astype("float32")
    np.testing.assert_allclose(run_relax(op.nn.dense, x, w), x @ w.T, rtol=1e-5, atol=1e-5)


def test_batched_data_matches_numpy(run_relax, rng):
    x = rng.standard_normal((2, 3, 5)).astype("float32")
    w = rng.standard_normal((4, 5)).astype("float32")
    np.testing.assert_allclose(run_relax(op.nn.dense, x, w), x @ w.T, rtol=1e-5, atol=1e-5)


def test_legalizes_to_one_transposed_matmul_kernel():
    x, w = _tensor("x", (2, 6)), _tensor("w", (3, 6))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(op.nn.dense(x, w)))
        bb.emit_func_output(out)
    mod = relax.transform.LegalizeOps()(bb.get())
    kernels = [name for name, f in mod.functions.items() if not isinstance(f, relax.Function)]
    assert len(kernels) == 1
    assert "T_matmul_NT" in mod[kernels[0]].script()


@pytest.mark.parametrize("data, weight, message", [
    ((2, 6), (3, 5), "6 input features, weight"),
    ((2, 6), (3, 6, 1), "2-D weight"),
    ((6,), (3, 6), "2-D weight"),
])
def test_refuses_mismatched_shapes(data, weight, message):
    with pytest.raises(IRError, match=message):
        op.nn.dense(_tensor("x", data), _tensor("w", weight))


def test_refuses_mixed_dtypes():
    with pytest.raises(IRError, match="different dtypes, float32 and float16"):
        op.nn.dense(_tensor("x", (2, 6)), _tensor("w", (3, 6), "float16"))
