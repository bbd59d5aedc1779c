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
from . import arith
from .target import Target
from .driver.build import build, lower

# Higher layers load on first use (``mlcbench.relax``, ``from mlcbench import te``) so
# that ``import mlcbench`` stays fast.
_LAZY_SUBPACKAGES = ("te", "topi", "dlight", "relax", "meta_schedule", "autotvm", "relay",
                     "contrib")

# The older tutorials' names: tvm.context(...) and tvm.gpu(...) for devices.
context = device
gpu = cuda


def compile(mod, target=None, **kwargs):   # noqa: A001 -- current TVM's name
    """``tvm.compile``: ``relax.build`` for a module with Relax functions, else ``build``."""
    from .driver.build import compile_module
    return compile_module(mod, target, **kwargs)


def __getattr__(name):
    if name in _LAZY_SUBPACKAGES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    if name == "module":        # tvm.module.load(path), the spelling of TVM before 0.7
        import types
        return types.SimpleNamespace(load=load_module, Module=runtime.Module)
    raise AttributeError(f"module 'mlcbench' has no attribute {name!r}")
