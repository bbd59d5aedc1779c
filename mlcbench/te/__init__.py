"""Tensor expressions: describe each output element, get a TensorIR PrimFunc.

::

    from mlcbench import te
    A = te.placeholder((128, 128), name="A")
    B = te.placeholder((128, 128), name="B")
    k = te.reduce_axis((0, 128), name="k")
    C = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    func = te.create_prim_func([A, B, C])       # blocks, loops and buffers as TVM makes them
"""
from ..tir.expr import const
from ..tir.op import (abs, ceil, cos, erf, exp, exp2, floor, floordiv, floormod, fma,
                      if_then_else, isnan, log, log2, log10, max_value, min_value,
                      nearbyint, pow, round, rsqrt, sigmoid, sin, sqrt, tan, tanh, trunc,
                      truncdiv, truncmod)
from ..tir.op import all, any  # noqa: A004
from .create_prim_func import create_prim_func
from .schedule import create_schedule
from .operation import compute, placeholder, size_var, var
from .reduction import (CommReducer, Reduce, TensorAxis, comm_reducer, max, min, reduce_axis,
                        sum, thread_axis)
from .tensor import ComputeOp, Operation, PlaceholderOp, Tensor

power = pow
