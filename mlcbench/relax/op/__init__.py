"""Relax operators: user functions that build calls, backed by one registry entry per op.

>>> from mlcbench import relax
>>> y = relax.op.add(x, relax.op.nn.relu(z))
>>> relax.op.get_op_info("relax.add").pattern
<OpPatternKind.BROADCAST: 1>
"""
from . import image, memory, nn
from .base import builtin, call_dps_packed, call_pure_packed, call_tir, null_value
from .binary import (add, divide, equal, floor_divide, greater, greater_equal, less, less_equal,
                     maximum, minimum, multiply, not_equal, power, subtract)
from .index import strided_slice
from .manipulate import (broadcast_to, concat, expand_dims, flatten, permute_dims, reshape,
                         split, squeeze, take)
from .reduce import matmul, max, mean, min, sum
from .registry import (OpInfo, OpPatternKind, get_op_info, legalize_call, list_ops, op_pattern,
                       register_op)
from .search import where
from .unary import (abs, astype, clip, erf, ewise_fma, exp, log, negative, rsqrt, sigmoid, sqrt,
                    tanh)
from ...ir.op import Op


def get(name: str) -> Op:
    """The op named ``name``: ``relax.op.get("relax.add")``."""
    return Op.get(name)
