"""The operator library, written in tensor expressions.

Every operator returns te tensors, so a whole layer becomes one PrimFunc::

    from mlcbench import te, topi
    x = te.placeholder((1, 784), name="x")
    w = te.placeholder((128, 784), name="w")
    y = topi.nn.relu(topi.nn.dense(x, w))
    func = te.create_prim_func([x, w, y])

``mlcbench.topi.testing`` holds the numpy references the tests compare against.
"""
from . import image, nn
from .broadcast import (add, broadcast_shape, broadcast_to, divide, equal, floor_divide,
                        floor_mod, greater, greater_equal, less, less_equal, maximum, minimum,
                        multiply, not_equal, power, subtract)
from .math import (abs, cast, clip, erf, exp, gelu, log, negative, relu, rsqrt, sigmoid,
                   sqrt, tanh)
from .indexing import strided_slice, where
from .reduction import argmax, argmin, max, mean, min, prod, sum
from .transform import (concatenate, expand_dims, reshape, split, squeeze, take, transpose)
from .utils import get_const_tuple
