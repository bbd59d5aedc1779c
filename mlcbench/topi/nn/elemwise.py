"""``nn.relu`` and friends (the same operators as ``topi.relu``)."""
from ..math import gelu, relu, sigmoid, tanh  # noqa: F401


def leaky_relu(x, alpha: float):
    """``x`` where positive, ``alpha * x`` elsewhere."""
    from ...te.operation import compute
    from ...tir import op as tir_op
    from ...tir.expr import const

    def fcompute(*i):
        v = x(*i)
        return tir_op.Select_(v > const(0, x.dtype), v, v * const(alpha, x.dtype))
    return compute(x.shape, fcompute, tag="elemwise")


def silu(x):
    """``x * sigmoid(x)`` (swish), the activation of MobileNetV3 and LLaMA."""
    from ...te.operation import compute
    from ...tir import op as tir_op
    return compute(x.shape, lambda *i: x(*i) * tir_op.sigmoid(x(*i)), tag="elemwise")
