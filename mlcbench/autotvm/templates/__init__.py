"""Registered templates of the operator library's tunable ops on x86 CPUs.

============================  ==========================================================
``dense.x86``                 ``data @ W.T`` (or ``data @ W``), the weight read in place
``dense_pack.x86``            the same, the weight packed into vector-wide panels first
``conv2d_nchw.x86``           NCHW direct convolution, OIHW kernel
``conv2d_nchw_winograd.x86``  NCHW 3x3 stride-1 convolution by Winograd F(m x m, 3x3)
                              (``create("conv2d_nchw.x86", ..., "winograd")``)
============================  ==========================================================

Importing :mod:`mlcbench.autotvm` registers them; :mod:`.extract` finds them in Relax
models.
"""
from . import conv2d, conv2d_winograd, dense
from .workload import placeholder_of, tensor_arg

__all__ = ["conv2d", "conv2d_winograd", "dense", "placeholder_of", "tensor_arg"]
