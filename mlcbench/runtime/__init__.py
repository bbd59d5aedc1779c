"""The runtime: devices, NDArrays, the global function registry, compiled Modules, timing.

Everything here works without the compiler: a Module is built from ``(KernelSpec,
address)`` pairs by code generation, or loaded from a shared library with
:func:`load_module`.

>>> import mlcbench.runtime as rt
>>> a = rt.ndarray.array([1.0, 2.0], rt.cpu())
>>> a.shape, a.dtype, a.device
((2,), 'float64', cpu(0))
"""
from . import ndarray
from .benchmark import BenchmarkResult, measure
from .device import Device, cpu, cuda, device, kDLCPU, kDLCUDA
from .errors import ArgumentTypeError, ArgumentValueError
from .library import load_module
from .metadata import METADATA_SYMBOL, KernelSpec, ParamSpec, decode_metadata, encode_metadata
from .module import FunctionNotFoundError, Module
from .ndarray import NDArray
from .package import Package, PackageError, load_package
from .param_dict import load_param_dict, save_param_dict
from .packed_func import PackedFunc
from .registry import (get_global_func, list_global_func_names, register_func,
                       remove_global_func)

__all__ = [
    "Device", "cpu", "cuda", "device", "kDLCPU", "kDLCUDA", "NDArray", "ndarray", "Module",
    "PackedFunc", "KernelSpec", "ParamSpec", "BenchmarkResult", "measure", "load_module",
    "register_func", "get_global_func", "list_global_func_names", "remove_global_func",
    "METADATA_SYMBOL", "encode_metadata", "decode_metadata", "ArgumentTypeError",
    "ArgumentValueError", "FunctionNotFoundError", "Package", "PackageError", "load_package",
    "load_param_dict", "save_param_dict",
]
