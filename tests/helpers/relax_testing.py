"""Small Relax modules that tests of ops, passes and tuning share."""
from mlcbench import relax
from mlcbench.relax import op


def conv2d_module(data_shape, weight, groups: int = 1, padding=0, strides=1):
    """``main(x)`` of one conv2d whose weight is a constant (``weight`` an array), or
    ``main(x, w)`` whose weight is a parameter (``weight`` its shape, a tuple)."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(data_shape, "float32"))
    params = [x]
    if isinstance(weight, tuple):
        w = relax.Var("w", relax.TensorStructInfo(weight, "float32"))
        params.append(w)
    else:
        w = relax.const(weight)
    with bb.function("main", params):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(op.nn.conv2d(x, w, strides, padding, groups=groups)))
        bb.emit_func_output(out)
    return bb.get()
