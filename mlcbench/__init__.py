"""mlcbench: a machine-learning compiler in Python, spelled like the MLC course's TVM.

``import mlcbench as tvm`` and course code runs: TVMScript, ``tvm.build``,
``tvm.nd.array``, ``time_evaluator``, passes and instruments.
"""
__version__ = "0.1.0"

from . import ir
from .ir import IRModule, assert_structural_equal, structural_equal, structural_hash
from .ir import transform, instrument
from . import runtime
from .runtime import (Device, cpu, cuda, device, get_global_func, load_module, register_func)
from .runtime import ndarray as nd
from . import tir, script, target, testing
from . import te, topi
from . import dlight
from . import arith
from . import relax
from .target import Target
from .driver.build import build, lower
