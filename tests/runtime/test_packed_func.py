import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcbench.ir.errors import MLCBenchError, RuntimeError_
from mlcbench.runtime import KernelSpec, PackedFunc, ParamSpec
from mlcbench.runtime import ndarray as nd


def test_add_one_runs_on_ndarrays(kernels):
    a = nd.array(np.arange(16, dtype="float32"))
    b = nd.empty((16,), "float32")
    kernels["add_one"](a, b)
    np.testing.assert_allclose(b.numpy(), np.arange(16) + 1)


def test_numpy_arrays_are_accepted_without_copy(kernels):
    a, b = np.arange(16, dtype="float32"), np.zeros(16, "float32")
    kernels["add_one"](a, b)
    np.testing.assert_allclose(b, a + 1)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 300), s=st.floats(-4, 4, width=32), k=st.integers(-1000, 1000))
def test_symbolic_length_and_scalars_match_numpy(kernels, n, s, k):
    a = nd.array(np.linspace(-1, 1, n, dtype="float32"))
    b = nd.empty((n,), "float32")
    kernels["axpb"](a, b, s, k)
    expected = a.numpy() * np.float32(s) + np.float32(k)
    np.testing.assert_allclose(b.numpy(), expected, rtol=1e-6, atol=1e-6)


def test_numpy_scalars_and_bools_are_accepted(kernels):
    a, b = nd.array(np.ones(4, "float32")), nd.empty((4,), "float32")
    kernels["axpb"](a, b, np.float32(2), np.int64(3))
    assert b.numpy().tolist() == [5.0] * 4
    kernels["axpb"](a, b, True, True)
    assert b.numpy().tolist() == [2.0] * 4


def test_nonzero_status_raises_naming_function(kernels):
    with pytest.raises(RuntimeError_, match="always_fail: compiled function failed with status 7"):
        kernels["always_fail"](nd.empty((1,)))


def _args(n=16):
    return nd.array(np.zeros(n, "float32")), nd.empty((n,), "float32")


@pytest.mark.parametrize("call, error, message", [
    (lambda f, a, b: f(a), ValueError, r"add_one: expected 2 arguments \(A, B\), found 1"),
    (lambda f, a, b: f(a, b, b), ValueError, "expected 2 arguments"),
    (lambda f, a, b: f(a, "B"), TypeError, "add_one: parameter B: expected an NDArray .* found str"),
    (lambda f, a, b: f([0.0] * 16, b), TypeError, "parameter A: .* found list"),
    (lambda f, a, b: f(nd.array(np.zeros(16)), b), ValueError,
     "parameter A: expected dtype float32, found float64"),
    (lambda f, a, b: f(a, nd.empty((8,))), ValueError,
     r"parameter B: expected shape \(16,\), found \(8,\)"),
    (lambda f, a, b: f(a, nd.empty((4, 4))), ValueError, r"found \(4, 4\)"),
    (lambda f, a, b: f(a, np.zeros(32, "float32")[::2]), ValueError, "parameter B: .*not C-contiguous"),
])
def test_add_one_argument_errors(kernels, call, error, message):
    a, b = _args()
    with pytest.raises(error, match=message) as info:
        call(kernels["add_one"], a, b)
    assert isinstance(info.value, MLCBenchError)


def test_read_only_numpy_rejected(kernels):
    a = np.zeros(16, "float32")
    a.flags.writeable = False
    with pytest.raises(ValueError, match="parameter A: .*read-only"):
        kernels["add_one"](a, np.zeros(16, "float32"))


def test_symbolic_dim_mismatch_names_both_parameters(kernels):
    a, b = nd.empty((64,)), nd.empty((32,))
    with pytest.raises(ValueError, match="axpb: parameter B: dim 0 is n=64 from parameter A, found 32"):
        kernels["axpb"](a, b, 1.0, 1)


@pytest.mark.parametrize("s, k, error, message", [
    (1.0, 1.5, TypeError, "parameter k: expected an int32 scalar"),
    (1.0, 2**31, ValueError, "parameter k: 2147483648 does not fit in int32"),
    ("1", 1, TypeError, "parameter s: expected a float32 scalar, found str"),
    (nd.empty((1,)), 1, TypeError, "parameter s: .*found NDArray"),
])
def test_scalar_errors(kernels, s, k, error, message):
    a, b = nd.empty((4,)), nd.empty((4,))
    with pytest.raises(error, match=message):
        kernels["axpb"](a, b, s, k)


def test_scalar_named_like_dim_must_agree(kernels):
    _, address = kernels._kernels["axpb"]
    spec = KernelSpec("axpb_n", "axpb", (ParamSpec("A", "buffer", "float32", ("n",)),
                                         ParamSpec("B", "buffer", "float32", ("n",)),
                                         ParamSpec("s", "scalar", "float32"),
                                         ParamSpec("n", "scalar", "int32")), ("n",))
    func = PackedFunc(spec, address, keepalive=kernels)
    a, b = nd.array(np.ones(4, "float32")), nd.empty((4,))
    func(a, b, 2.0, 4)
    with pytest.raises(ValueError, match="parameter n: its value is n=4 from parameter A, found 5"):
        func(a, b, 2.0, 5)


def test_spec_with_unbindable_shape_var_rejected(kernels):
    _, address = kernels._kernels["add_one"]
    spec = KernelSpec("f", "add_one", (ParamSpec("A", "buffer", "float32", (16,)),), ("m",))
    with pytest.raises(RuntimeError_, match=r"symbolic dims \['m'\]"):
        PackedFunc(spec, address)


def test_unsupported_scalar_dtype_rejected(kernels):
    _, address = kernels._kernels["add_one"]
    spec = KernelSpec("f", "add_one", (ParamSpec("h", "scalar", "float16"),))
    with pytest.raises(RuntimeError_, match="float16 cannot be passed"):
        PackedFunc(spec, address)


def test_repr_shows_signature(kernels):
    assert repr(kernels["add_one"]) == "PackedFunc(add_one(A: float32[16], B: float32[16]))"


def test_process_survives_every_argument_error():
    """Each bad call in a fresh interpreter must raise, never crash the process."""
    script = textwrap.dedent("""
        import sys, numpy as np
        sys.path.insert(0, %r)
        from conftest import jit_module, ALL_IR, ALL_SPECS
        from mlcbench.runtime import ndarray as nd
        mod = jit_module(ALL_IR, ALL_SPECS)
        f, g = mod["add_one"], mod["axpb"]
        good = nd.empty((16,))
        bad_calls = [
            lambda: f(), lambda: f(good), lambda: f(good, None), lambda: f(good, 3),
            lambda: f(good, nd.empty((1,))), lambda: f(good, nd.empty((0,))),
            lambda: f(good, nd.empty((16,), "int8")), lambda: f(good, np.zeros((16, 16), "float32")[:, 0]),
            lambda: g(nd.empty((1 << 20,)), nd.empty((1,)), 1.0, 1),
            lambda: g(good, good, 1.0, 1 << 40), lambda: mod["missing"],
        ]
        for call in bad_calls:
            try:
                call()
            except Exception:
                continue
            raise SystemExit("a bad call did not raise")
        print("survived", len(bad_calls))
    """) % str(__import__("pathlib").Path(__file__).parent)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "survived 11"
