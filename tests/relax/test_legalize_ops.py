"""Each op's legalization (registry entry -> TE/TOPI PrimFunc), run against numpy.

All ops are legalized into one module and built once, so the whole file compiles a
single LLVM module.
"""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.relax import op
from mlcbench.relax.op import legalize_call
from mlcbench.topi import testing as ref

rng = np.random.default_rng(0)


def rand(*shape, dtype="float32", low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(dtype)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


A, B = rand(2, 3), rand(3)
POS = rand(2, 3, low=0.5, high=2.0)
M, N = rand(2, 4), rand(4, 5)
X4 = rand(1, 3, 6, 6)
W4 = rand(4, 3, 3, 3)
GAMMA, BETA, MEAN, VAR = rand(3), rand(3), rand(3), rand(3, low=0.5, high=1.5)

# (name, relax builder over Vars, inputs, numpy reference)
CASES = [
    ("add", op.add, [A, B], lambda a, b: a + b),
    ("subtract", op.subtract, [A, B], lambda a, b: a - b),
    ("multiply", op.multiply, [A, B], lambda a, b: a * b),
    ("divide", op.divide, [A, POS[0]], lambda a, b: a / b),
    ("maximum", op.maximum, [A, B], np.maximum),
    ("minimum", op.minimum, [A, B], np.minimum),
    ("power", op.power, [POS, B], np.power),
    ("exp", op.exp, [A], np.exp),
    ("log", op.log, [POS], np.log),
    ("sqrt", op.sqrt, [POS], np.sqrt),
    ("tanh", op.tanh, [A], np.tanh),
    ("sigmoid", op.sigmoid, [A], lambda a: 1 / (1 + np.exp(-a))),
    ("erf", op.erf, [A], ref.erf_python),
    ("relu", op.nn.relu, [A], lambda a: np.maximum(a, 0)),
    ("gelu", op.nn.gelu, [A], ref.gelu_python),
    ("astype", lambda a: op.astype(a, "int32"), [A * 10], lambda a: a.astype("int32")),
    ("matmul", op.matmul, [M, N], np.matmul),
    ("matmul_vec", op.matmul, [M[0], N], np.matmul),
    ("permute_dims", lambda a: op.permute_dims(a, [1, 0]), [A], lambda a: a.T),
    ("reshape", lambda a: op.reshape(a, (3, -1)), [A], lambda a: a.reshape(3, 2)),
    ("flatten", op.flatten, [X4], lambda a: a.reshape(-1)),
    ("concat", lambda a, b: op.concat([a, b], axis=0), [A, A], lambda a, b: np.concatenate([a, b])),
    ("squeeze", op.squeeze, [rand(1, 3, 1)], np.squeeze),
    ("expand_dims", lambda a: op.expand_dims(a, [0]), [A], lambda a: a[None]),
    ("take", lambda a, i: op.take(a, i, axis=1), [A, np.array([2, 0], "int64")],
     lambda a, i: np.take(a, i, axis=1)),
    ("sum", lambda a: op.sum(a, axis=1), [A], lambda a: a.sum(axis=1)),
    ("mean", lambda a: op.mean(a, keepdims=True), [A], lambda a: a.mean(keepdims=True)),
    ("max", lambda a: op.max(a, axis=0), [A], lambda a: a.max(axis=0)),
    ("min", lambda a: op.min(a, axis=0), [A], lambda a: a.min(axis=0)),
    ("softmax", op.nn.softmax, [A], lambda a: _softmax(a, -1)),
    ("log_softmax", op.nn.log_softmax, [A], lambda a: np.log(_softmax(a, -1))),
    ("conv2d", lambda x, w: op.nn.conv2d(x, w, padding=1), [X4, W4],
     lambda x, w: ref.conv2d_nchw_python(x, w, 1, (1, 1, 1, 1))),
    ("max_pool2d", lambda x: op.nn.max_pool2d(x, 2, 2), [X4],
     lambda x: x.reshape(1, 3, 3, 2, 3, 2).max(axis=(3, 5))),
    ("avg_pool2d", lambda x: op.nn.avg_pool2d(x, 2, 2), [X4],
     lambda x: x.reshape(1, 3, 3, 2, 3, 2).mean(axis=(3, 5))),
    ("adaptive_avg_pool2d", op.nn.adaptive_avg_pool2d, [X4],
     lambda x: x.mean(axis=(2, 3), keepdims=True)),
    ("layer_norm", lambda x, g, b: op.nn.layer_norm(x, g, b, axes=[-1]), [A, B, B],
     lambda x, g, b: ref.layer_norm_python(x, g, b, axis=(-1,))),
    ("ewise_fma", op.ewise_fma, [A, A, A], lambda a, b, c: a * b + c),
]


@pytest.fixture(scope="module")
def compiled():
    bb = relax.BlockBuilder()
    calls = {}
    for name, build, inputs, _ in CASES:
        params = [relax.Var(f"p{k}", relax.TensorStructInfo(a.shape, str(a.dtype)))
                  for k, a in enumerate(inputs)]
        calls[name] = (legalize_call(bb, build(*params)), params)
    mod = bb.get()
    return calls, mod, tvm.build(mod, target="llvm")


@pytest.mark.parametrize("name, inputs, reference",
                         [(c[0], c[2], c[3]) for c in CASES], ids=[c[0] for c in CASES])
def test_legalized_op_matches_numpy(compiled, name, inputs, reference):
    calls, mod, lib = compiled
    call, params = calls[name]
    assert call.op.name == "relax.call_tir"
    position = {p: inputs[k] for k, p in enumerate(params)}
    args = [tvm.nd.array(position[a]) for a in call.args[1].fields]
    out_sinfo = call.sinfo_args[0]
    out = tvm.nd.empty(out_sinfo.static_shape(), out_sinfo.dtype)
    lib[call.args[0].name_hint](*args, out)
    np.testing.assert_allclose(out.numpy(), reference(*inputs), rtol=1e-5, atol=1e-5)


def test_batch_norm_and_dropout_legalize_to_tuples():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((2, 3, 4, 4), "float32"))
    c = [relax.Var(n, relax.TensorStructInfo((3,), "float32")) for n in "gbmv"]
    out = legalize_call(bb, op.nn.batch_norm(x, *c))
    assert isinstance(out, relax.Tuple) and out.fields[1] is c[2] and out.fields[2] is c[3]
    data = rand(2, 3, 4, 4)
    lib = tvm.build(bb.get(), target="llvm")
    result = tvm.nd.empty((2, 3, 4, 4), "float32")
    lib["batch_norm"](*(tvm.nd.array(a) for a in (data, GAMMA, BETA, MEAN, VAR)), result)
    expected = ref.batch_norm_python(data, GAMMA, BETA, MEAN, VAR)
    expected = expected[0] if isinstance(expected, tuple) else expected
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-5, atol=1e-5)
    dropped = legalize_call(bb, op.nn.dropout(x, 0.5))
    assert isinstance(dropped.struct_info, relax.TupleStructInfo)
