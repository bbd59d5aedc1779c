"""``relay.op.nn`` (also ``relay.nn``): conv2d, dense, softmax, relu, on Relax ops."""
from __future__ import annotations

from ...relax.op import nn as _relax_nn


class RelayOp:
    """A Relay operator name bound to the Relax op that computes it."""

    def __init__(self, name: str, build):
        self.name, self._build = name, build

    def __call__(self, *args, **kwargs):
        return self._build(*args, **kwargs)

    def __repr__(self) -> str:
        return f"relay.op.{self.name}"


conv2d = RelayOp("nn.conv2d", _relax_nn.conv2d)
dense = RelayOp("nn.dense", lambda data, weight, units=None, out_dtype=None:
                _relax_nn.linear(data, weight, out_dtype=out_dtype))
softmax = RelayOp("nn.softmax", _relax_nn.softmax)
relu = RelayOp("nn.relu", _relax_nn.relu)

__all__ = ["RelayOp", "conv2d", "dense", "relu", "softmax"]
