"""Devices, spelled as in TVM and DLPack: ``cpu(0)``, ``cuda(0)``, ``device("llvm", 0)``.

A :class:`Device` is just a (DLPack device type, index) pair. ``cuda(0)`` is device 0
of the CUDA driver where a driver, a device and the ``[cuda]`` extra (cuda-bindings) are
present (:mod:`.cuda_driver`); otherwise it is the *simulated GPU*
(``mlcbench.codegen.gpu``): its arrays live in host memory and GPU kernels run on the
CPU with GPU semantics. The first use says
so once, in one line (a :class:`SimulatedGPUWarning`). The environment variable
``MLCBENCH_GPU`` forces the choice: ``sim`` (the simulator, silently) or ``cuda`` (a real
device, an error where there is none).

>>> cpu()
cpu(0)
>>> device("llvm", 0) == cpu(0)
True
>>> cuda().exist
True
"""
from __future__ import annotations

import ctypes
import os
import sys
import warnings

from ..ir.errors import RuntimeError_
from .errors import ArgumentValueError

kDLCPU = 1
kDLCUDA = 2

_TYPE_NAMES = {kDLCPU: "cpu", kDLCUDA: "cuda"}
# Names accepted by ``device(...)``: target kinds and device kinds as TVM spells them.
_NAME_TO_TYPE = {
    "cpu": kDLCPU, "llvm": kDLCPU, "c": kDLCPU, "stackvm": kDLCPU, "ext_dev": kDLCPU,
    "cuda": kDLCUDA, "gpu": kDLCUDA, "nvptx": kDLCUDA,
}

NO_GPU_MESSAGE = ("no GPU runtime is available in mlcbench: {what} needs a CUDA device, "
                  "but only cpu(0) can run code; use mlcbench.cpu() instead")

GPU_ENV = "MLCBENCH_GPU"


class SimulatedGPUWarning(UserWarning):
    """``cuda(0)`` is the simulated GPU (said once per process)."""


_backend: list = []


def cuda_driver_devices() -> int:
    """How many CUDA devices the driver reports (0 without a driver), asked through
    ctypes: it works without cuda-bindings, to tell that they would find a device."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        if driver.cuInit(0) != 0 or driver.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return 0
        return count.value
    except OSError:
        return 0


def _caller_level() -> int:
    """The ``stacklevel`` that points a warning at the first frame outside mlcbench."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("mlcbench"):
        frame, level = frame.f_back, level + 1
    return level


def gpu_backend() -> str:
    """``"cuda"`` (a real device, through :mod:`.cuda_driver`) or ``"sim"`` (the simulated
    GPU): what runs code on ``cuda(0)``. Decided once per process, from ``MLCBENCH_GPU``
    (``sim`` or ``cuda``); without it, the real device where the driver, a device and
    cuda-bindings are present, else the simulator (with a one-line
    :class:`SimulatedGPUWarning`)."""
    if _backend:
        return _backend[0]
    choice = os.environ.get(GPU_ENV, "").strip().lower()
    if choice not in ("", "sim", "cuda"):
        raise ArgumentValueError(f"{GPU_ENV}={choice!r}: expected 'sim' (the simulated GPU) "
                                 "or 'cuda' (a real device)")
    missing = "" if choice == "sim" else _missing_for_cuda()
    if choice == "cuda" and missing:
        raise RuntimeError_(f"{GPU_ENV}=cuda asks for a real CUDA device, but {missing}; "
                            f"unset {GPU_ENV} or set it to 'sim' to use the simulated GPU")
    if choice == "" and missing:
        unused = ("; this machine has a CUDA device: pip install \"mlcbench[cuda]\" to use it"
                  if missing.startswith("cuda-bindings") and cuda_driver_devices() else "")
        warnings.warn("cuda(0) is a simulated GPU: kernels run on the CPU and times are "
                      f"modeled (set {GPU_ENV}=sim to silence this){unused}",
                      SimulatedGPUWarning, stacklevel=_caller_level())
    _backend.append("sim" if choice == "sim" or missing else "cuda")
    return _backend[0]


def _missing_for_cuda() -> str:
    """What a real device lacks here (``""``: nothing), from the driver layer."""
    from .cuda_driver import probe
    return probe()


class Device:
    """A device that holds arrays and runs code: ``Device(kDLCPU, 0)`` prints as ``cpu(0)``.

    Devices compare and hash by value, so they can be dict keys.
    """

    __slots__ = ("device_type", "device_id")

    def __init__(self, device_type: int, device_id: int = 0):
        if device_type not in _TYPE_NAMES:
            raise ArgumentValueError(
                f"unknown device type {device_type!r}: expected {kDLCPU} (cpu) or {kDLCUDA} (cuda)")
        if not isinstance(device_id, int) or device_id < 0:
            raise ArgumentValueError(f"device id must be a non-negative int, found {device_id!r}")
        self.device_type = int(device_type)
        self.device_id = device_id

    @property
    def exist(self) -> bool:
        """Whether this device can run code here: ``cpu(0)`` and ``cuda(0)`` (a real
        device or the simulated one)."""
        if self.device_id != 0:
            return False
        if self.device_type == kDLCPU:
            return True
        try:
            return gpu_backend() in ("sim", "cuda")
        except RuntimeError_:
            return False

    def sync(self) -> None:
        """Wait for queued work: on a real GPU, all of it (``cuCtxSynchronize``); CPU
        and simulated calls are synchronous, so this returns at once."""
        if self.device_type != kDLCPU:
            require_gpu(self, f"{self}.sync()")
            if gpu_backend() == "cuda":
                from .cuda_driver import context
                context().synchronize()

    @property
    def max_threads_per_block(self) -> int:
        """Threads per block of a GPU (the simulated GPU's default target); a CPU has one."""
        return 1 if self.device_type == kDLCPU else 1024

    def __eq__(self, other) -> bool:
        return (isinstance(other, Device) and other.device_type == self.device_type
                and other.device_id == self.device_id)

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{_TYPE_NAMES[self.device_type]}({self.device_id})"

    def _dlpack(self) -> tuple[int, int]:
        return (self.device_type, self.device_id)


def cpu(dev_id: int = 0) -> Device:
    """The host CPU. ``mlcbench.cpu()`` is where arrays live and kernels run."""
    return Device(kDLCPU, dev_id)


def cuda(dev_id: int = 0) -> Device:
    """A CUDA GPU: ``cuda(0)`` is device 0, or the simulated GPU (module docstring)."""
    return Device(kDLCUDA, dev_id)


def require_gpu(dev: Device, what: str) -> Device:
    """``dev`` when it is a GPU that runs code here (``cuda(0)``), else a clear error."""
    which = "the simulated GPU" if gpu_backend() == "sim" else "mlcbench runs on device 0,"
    if dev.device_id != 0:
        raise RuntimeError_(f"{what}: {dev} does not exist; {which} cuda(0)")
    return dev


def device(dev_type, dev_id: int = 0) -> Device:
    """Make a device from a name (``"llvm"``, ``"cpu"``, ``"cuda"``, ``"gpu"``) or a DLPack int.

    A target string with options is accepted too: ``device("llvm -mcpu=znver4")`` is the CPU.

    >>> device("cuda", 1)
    cuda(1)
    >>> device(1)
    cpu(0)
    """
    if isinstance(dev_type, Device):
        return dev_type
    if isinstance(dev_type, str):
        kind = dev_type.strip().split(" ")[0].split(":")[0].lower()
        if kind not in _NAME_TO_TYPE:
            names = ", ".join(sorted(_NAME_TO_TYPE))
            raise ArgumentValueError(f"unknown device name {dev_type!r}: expected one of {names}")
        return Device(_NAME_TO_TYPE[kind], dev_id)
    if isinstance(dev_type, int) and not isinstance(dev_type, bool):
        return Device(dev_type, dev_id)
    raise ArgumentValueError(f"expected a device name or DLPack device type, found {dev_type!r}")


def as_device(value) -> Device:
    """``None`` means the CPU; a Device passes through; names go through :func:`device`."""
    return cpu(0) if value is None else device(value)
