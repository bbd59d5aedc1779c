"""Activations beyond ReLU: ``nn.leakyrelu`` and ``nn.silu`` (reached as ``relax.op.nn.*``)."""
from __future__ import annotations

from ... import topi
from .registry import make_call, register_op
from .unary import define_unary, unary_infer

silu = define_unary("nn.silu", topi.nn.silu, float_only=True)

register_op("relax.nn.leakyrelu", unary_infer, "elemwise",
            lambda bb, call: bb.call_te(topi.nn.leaky_relu, call.args[0], call.attrs.alpha,
                                        primfunc_name_hint="leakyrelu"))


def leakyrelu(x, alpha: float = 0.01):
    """``x`` where positive, ``alpha * x`` elsewhere."""
    return make_call("relax.nn.leakyrelu", (x,), {"alpha": float(alpha)})
