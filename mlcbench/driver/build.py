"""``build``: TensorIR in, a runtime Module of compiled functions out (TVM's ``tvm.build``).

Example::

    lib = mlcbench.build(MyModule, target="llvm")
    lib["mm_relu"](a_nd, b_nd, c_nd)
    print(lib.get_source("ll"))          # the optimized LLVM IR

The implementation lives in :mod:`mlcbench.tir.build`, below the graph IR, so that
``relax.build`` compiles its kernels with the same code; this driver module keeps the
public spelling ``mlcbench.build`` / ``mlcbench.driver.build.build``.
"""
from ..tir.build import (as_module, build, build_lowered, kernel_spec, kernel_symbol, lower,
                         resolve_target)

__all__ = ["as_module", "build", "build_lowered", "kernel_spec", "kernel_symbol", "lower",
           "resolve_target"]
