"""mlcbench: a machine-learning compiler in Python, spelled like the MLC course's TVM.

``import mlcbench as tvm`` and course code runs: TVMScript, schedules, ``tvm.build``,
``tvm.nd.array``, ``time_evaluator``.
"""
__version__ = "0.1.0"

from . import ir
from .ir import IRModule, assert_structural_equal, structural_equal, structural_hash
from .ir import transform, instrument
from . import tir
from . import script
