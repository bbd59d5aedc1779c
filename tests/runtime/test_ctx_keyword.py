"""The older TVM API's ``ctx``: tvm.context, nd.array/nd.empty(ctx=), time_evaluator(ctx=)."""
import numpy as np
import pytest

import mlcbench
from mlcbench.runtime.errors import ArgumentValueError


def test_context_is_a_device():
    ctx = mlcbench.context("llvm", 0)
    assert ctx == mlcbench.cpu(0)
    a = mlcbench.nd.array(np.arange(3, dtype="float32"), ctx=ctx)
    assert a.ctx == a.device == ctx
    e = mlcbench.nd.empty((2, 3), "int32", ctx=ctx)
    assert e.shape == (2, 3) and e.ctx == ctx


def test_ctx_and_device_must_agree():
    with pytest.raises(ArgumentValueError, match="device=cpu\\(0\\) and ctx=cpu\\(1\\) disagree"):
        mlcbench.nd.array([1.0], mlcbench.cpu(0), ctx=mlcbench.cpu(1))
    with pytest.raises(ArgumentValueError, match="disagree"):
        mlcbench.nd.empty((1,), "float32", mlcbench.cpu(0), ctx=mlcbench.cpu(1))
    same = mlcbench.nd.array([1.0], mlcbench.cpu(0), ctx=mlcbench.cpu(0))
    np.testing.assert_array_equal(same.numpy(), [1.0])


def test_time_evaluator_takes_ctx():
    from mlcbench import te
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] * 3.0, name="B")
    func = mlcbench.build(te.create_schedule(B.op), [A, B], "llvm", name="triple")
    a = mlcbench.nd.array(np.arange(16, dtype="float32"))
    b = mlcbench.nd.empty((16,), "float32")
    ctx = mlcbench.context("llvm", 0)
    result = func.time_evaluator(func.entry_name, ctx=ctx, number=3, repeat=2)(a, b)
    assert len(result.results) == 2 and min(result.results) > 0
    np.testing.assert_allclose(b.numpy(), a.numpy() * 3)
    with pytest.raises(ArgumentValueError, match="time_evaluator: .* disagree"):
        func.time_evaluator("triple", mlcbench.cpu(0), ctx=mlcbench.cpu(2))
