"""Struct-info inference of every op: shapes, dtypes, broadcasting, and the errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import relax, tir
from mlcbench.ir import IRError, Op
from mlcbench.relax import op


def tensor(shape, dtype="float32", name="x"):
    return relax.Var(name, relax.TensorStructInfo(shape, dtype))


def shape_of(expr):
    return tuple(int(d) for d in expr.struct_info.dims)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=0, max_size=4),
       st.lists(st.integers(1, 4), min_size=0, max_size=4), st.data())
def test_binary_ops_broadcast_like_numpy(lhs, rhs, data):
    # make the shapes broadcastable by replacing some clashing extents with 1
    for k in range(1, min(len(lhs), len(rhs)) + 1):
        if lhs[-k] != rhs[-k] and data.draw(st.booleans()):
            lhs[-k] = 1
        elif lhs[-k] != rhs[-k]:
            rhs[-k] = 1
    expected = np.broadcast_shapes(tuple(lhs), tuple(rhs))
    for fn in (op.add, op.subtract, op.multiply, op.divide, op.maximum, op.minimum, op.power):
        assert shape_of(fn(tensor(lhs), tensor(rhs))) == expected


def test_binary_shape_mismatch_names_the_op_and_shapes():
    with pytest.raises(IRError, match=r"relax.add: shapes \(2, 3\) and \(4,\) do not broadcast"):
        op.add(tensor((2, 3)), tensor((4,)))


def test_binary_dtype_mismatch_is_an_error():
    with pytest.raises(IRError, match="different dtypes, float32 and int32"):
        op.multiply(tensor((2,)), tensor((2,), "int32"))


def test_comparison_gives_bool():
    assert op.less(tensor((2, 3)), tensor((3,))).struct_info.dtype == "bool"


def test_symbolic_dims_flow_through_ops():
    n = tir.Var("n", "int64")
    x = tensor((n, 784))
    w = tensor((128, 784), name="w")
    y = op.nn.relu(op.add(op.matmul(x, op.permute_dims(w)), tensor((128,), name="b")))
    dims = y.struct_info.dims
    assert dims[0] is n and int(dims[1]) == 128


@pytest.mark.parametrize("a, b, expected", [
    ((2, 3), (3, 4), (2, 4)), ((5, 2, 3), (3, 4), (5, 2, 4)), ((3,), (3, 4), (4,)),
    ((2, 3), (3,), (2,)), ((1, 2, 3), (6, 3, 4), (6, 2, 4))])
def test_matmul_follows_numpy(a, b, expected):
    assert shape_of(op.matmul(tensor(a), tensor(b))) == expected
    assert np.matmul(np.zeros(a), np.zeros(b)).shape == expected


def test_matmul_inner_mismatch():
    with pytest.raises(IRError, match=r"relax.matmul: inner dimensions differ: \(2, 3\) @ \(4, 5\)"):
        op.matmul(tensor((2, 3)), tensor((4, 5)))


def test_unary_ops_keep_shape_and_dtype():
    x = tensor((2, 3))
    for fn in (op.exp, op.log, op.sqrt, op.tanh, op.sigmoid, op.erf, op.nn.relu, op.nn.gelu):
        assert shape_of(fn(x)) == (2, 3) and fn(x).struct_info.dtype == "float32"
    assert op.astype(x, "int32").struct_info.dtype == "int32"
    with pytest.raises(IRError, match="relax.exp: expects a floating-point tensor"):
        op.exp(tensor((2,), "int32"))


@pytest.mark.parametrize("fn, kwargs, expected", [
    (op.sum, {}, ()), (op.sum, {"axis": 1}, (2, 4)), (op.mean, {"axis": [0, 2]}, (3,)),
    (op.max, {"axis": -1, "keepdims": True}, (2, 3, 1)), (op.min, {"keepdims": True}, (1, 1, 1))])
def test_reductions(fn, kwargs, expected):
    assert shape_of(fn(tensor((2, 3, 4)), **kwargs)) == expected


def test_reduction_axis_out_of_range():
    with pytest.raises(IRError, match="axis 3 is out of range for a tensor of 3"):
        op.sum(tensor((2, 3, 4)), axis=3)


def test_manipulation_ops():
    x = tensor((2, 3, 4))
    assert shape_of(op.permute_dims(x)) == (4, 3, 2)
    assert shape_of(op.permute_dims(x, [0, 2, 1])) == (2, 4, 3)
    assert shape_of(op.reshape(x, (6, -1))) == (6, 4)
    assert shape_of(op.flatten(x)) == (24,)
    assert shape_of(op.concat([x, tensor((2, 5, 4))], axis=1)) == (2, 8, 4)
    assert shape_of(op.squeeze(tensor((1, 3, 1)))) == (3,)
    assert shape_of(op.squeeze(tensor((1, 3, 1)), axis=[0])) == (3, 1)
    assert shape_of(op.expand_dims(x, [0, -1])) == (1, 2, 3, 4, 1)
    assert shape_of(op.take(x, tensor((5,), "int64"), axis=1)) == (2, 5, 4)
    parts = op.split(x, 2, axis=2).struct_info.fields
    assert [p.static_shape() for p in parts] == [(2, 3, 2), (2, 3, 2)]
    parts = op.split(x, [1], axis=1).struct_info.fields
    assert [p.static_shape() for p in parts] == [(2, 1, 4), (2, 2, 4)]


def test_manipulation_errors():
    with pytest.raises(IRError, match=r"cannot reshape \(2, 3\) \(6 elements\) to \(4, 2\)"):
        op.reshape(tensor((2, 3)), (4, 2))
    with pytest.raises(IRError, match="not a permutation"):
        op.permute_dims(tensor((2, 3)), [0, 0])
    with pytest.raises(IRError, match="axis 1 has extent 3, not 1"):
        op.squeeze(tensor((1, 3)), axis=[1])
    with pytest.raises(IRError, match="differ outside axis 0"):
        op.concat([tensor((2, 3)), tensor((2, 4))], axis=0)
    with pytest.raises(IRError, match="does not split into 2 equal sections"):
        op.split(tensor((3,)), 2)


def test_conv2d_and_pooling():
    x = tensor((1, 3, 28, 28))
    w = tensor((8, 3, 3, 3), name="w")
    assert shape_of(op.nn.conv2d(x, w)) == (1, 8, 26, 26)
    assert shape_of(op.nn.conv2d(x, w, strides=2, padding=1)) == (1, 8, 14, 14)
    assert shape_of(op.nn.max_pool2d(x, pool_size=2, strides=2)) == (1, 3, 14, 14)
    assert shape_of(op.nn.avg_pool2d(x, pool_size=3, strides=1, padding=1)) == (1, 3, 28, 28)
    assert shape_of(op.nn.adaptive_avg_pool2d(x, output_size=1)) == (1, 3, 1, 1)
    with pytest.raises(IRError, match="data has 3 channels but weight"):
        op.nn.conv2d(x, tensor((8, 4, 3, 3)))


def test_conv2d_and_pooling_in_nhwc():
    x = tensor((1, 28, 28, 3))
    w = tensor((3, 3, 3, 8), name="w")                      # HWIO
    nhwc = {"data_layout": "NHWC", "kernel_layout": "HWIO"}
    assert shape_of(op.nn.conv2d(x, w, **nhwc)) == (1, 26, 26, 8)
    assert shape_of(op.nn.conv2d(x, w, strides=2, padding=1, **nhwc)) == (1, 14, 14, 8)
    assert shape_of(op.nn.max_pool2d(x, pool_size=2, strides=2, layout="NHWC")) == \
        (1, 14, 14, 3)
    assert shape_of(op.nn.avg_pool2d(x, pool_size=3, padding=1, layout="NHWC")) == \
        (1, 28, 28, 3)
    assert shape_of(op.nn.adaptive_avg_pool2d(x, 1, layout="NHWC")) == (1, 1, 1, 3)
    with pytest.raises(IRError, match="data has 3 channels but weight"):
        op.nn.conv2d(x, tensor((3, 3, 4, 8)), **nhwc)
    with pytest.raises(IRError, match="supported layouts are NCHW/OIHW and NHWC/HWIO, "
                                      "found NHWC/OIHW"):
        op.nn.conv2d(x, w, data_layout="NHWC")
    with pytest.raises(IRError, match="NHWC takes groups=1, found groups=3"):
        op.nn.conv2d(x, tensor((3, 3, 1, 3)), groups=3, **nhwc)
    with pytest.raises(IRError, match="supported layouts are NCHW and NHWC, found NCWH"):
        op.nn.max_pool2d(x, layout="NCWH")


def test_nn_ops_with_tuple_results_and_linear():
    x = tensor((4, 16))
    out, mask = op.nn.dropout(x, 0.1).struct_info.fields
    assert out.static_shape() == mask.static_shape() == (4, 16)
    c = tensor((3,), name="c")
    fields = op.nn.batch_norm(tensor((2, 3, 5, 5)), c, c, c, c).struct_info.fields
    assert fields[0].static_shape() == (2, 3, 5, 5) and fields[1].static_shape() == (3,)
    assert shape_of(op.nn.layer_norm(x, tensor((16,)), tensor((16,)), axes=[-1])) == (4, 16)
    assert shape_of(op.nn.softmax(x, axis=1)) == (4, 16)
    assert shape_of(op.nn.linear(x, tensor((8, 16)), tensor((8,)))) == (4, 8)


def test_call_tir_and_packed_take_out_sinfo():
    gv = relax.GlobalVar("f")
    x = tensor((2, 3))
    out = relax.TensorStructInfo((3, 2), "float32")
    assert op.call_tir(gv, (x,), out).struct_info is out
    assert op.call_dps_packed("env.relu", [x], out).struct_info is out
    both = op.call_tir(gv, x, [out, out]).struct_info
    assert isinstance(both, relax.TupleStructInfo) and len(both.fields) == 2
    assert op.builtin.alloc_tensor((2, 3), "float32").struct_info.static_shape() == (2, 3)
    assert isinstance(op.null_value().struct_info, relax.ObjectStructInfo)
    with pytest.raises(IRError, match="callee is a GlobalVar"):
        op.call_tir("f", (x,), out)


def test_registry_entries_have_patterns_and_legalizations():
    info = op.get_op_info("relax.add")
    assert info.pattern == op.OpPatternKind.BROADCAST and info.legalize is not None
    assert op.get_op_info("relax.matmul").pattern == op.OpPatternKind.OUT_EWISE_FUSABLE
    assert op.get_op_info("relax.sum").pattern == op.OpPatternKind.COMM_REDUCE
    assert op.get("relax.nn.relu") is Op.get("relax.nn.relu")
    with pytest.raises(IRError, match="did you mean"):
        Op.get("relax.ad")
