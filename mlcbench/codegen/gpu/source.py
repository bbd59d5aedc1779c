"""``imported_modules[0]`` of a GPU build: the device code as CUDA C or PTX, for reading.

The printers (:mod:`mlcbench.codegen.cuda`, :mod:`mlcbench.codegen.nvptx`) run when the
source is first asked for, so building for the simulated GPU does not pay for them.
"""
from __future__ import annotations

from ...ir.errors import RuntimeError_
from ...runtime.module import Module

_FORMATS = {"cu": "cu", "cuda": "cu", "c": "cu", "ptx": "ptx", "nvptx": "ptx", "cl": "cl",
            "opencl": "cl"}


class DeviceSourceModule(Module):
    """The device kernels of a GPU build; they run through the host module."""

    def __init__(self, lowered_mod, target, kernel_names: list):
        super().__init__({}, type_key="opencl" if target.kind.name == "opencl" else "cuda")
        self._lowered, self._target, self._kernel_names = lowered_mod, target, kernel_names
        self._sources: dict = {}

    @property
    def function_names(self) -> list:
        return list(self._kernel_names)

    def get_source(self, fmt: str = "") -> str:
        """``"cu"`` (CUDA C), ``"ptx"`` or ``"cl"`` (OpenCL C); by default the target's
        own language (OpenCL C for an "opencl" target, else CUDA C)."""
        if not fmt:
            fmt = "cl" if self._target.kind.name == "opencl" else "cu"
        kind = _FORMATS.get(fmt)
        if kind is None:
            raise RuntimeError_(f"get_source: unknown format {fmt!r} for device code, "
                                "expected 'cu' (CUDA C), 'ptx' or 'cl' (OpenCL C)")
        if kind not in self._sources:
            if kind == "cu":
                from ..cuda import cuda_source
                self._sources[kind] = cuda_source(self._lowered)
            elif kind == "cl":
                from ..cuda import opencl_source
                self._sources[kind] = opencl_source(self._lowered)
            else:
                from ..nvptx import ptx_source
                self._sources[kind] = ptx_source(self._lowered, self._target)
        return self._sources[kind]

    def __repr__(self) -> str:
        return f"Module({self.type_key} device code, kernels={self._kernel_names})"
