"""Devices, spelled as in TVM and DLPack: ``cpu(0)``, ``cuda(0)``, ``device("llvm", 0)``.

A :class:`Device` is just a (DLPack device type, index) pair. Only the CPU has a runtime
in mlcbench; a CUDA device can be named (so course code that mentions it imports and
prints fine) but ``exist`` is ``False`` and using it raises a clear error.

>>> cpu()
cpu(0)
>>> device("llvm", 0) == cpu(0)
True
>>> cuda().exist
False
"""
from __future__ import annotations

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
        """Whether this device can run code here: only ``cpu(0)`` can."""
        return self.device_type == kDLCPU and self.device_id == 0

    def sync(self) -> None:
        """Wait for queued work. CPU calls are synchronous, so this returns at once."""
        if self.device_type != kDLCPU:
            raise RuntimeError_(NO_GPU_MESSAGE.format(what=f"{self}.sync()"))

    @property
    def max_threads_per_block(self) -> int:
        """Threads per block of a GPU; a CPU has one thread per block."""
        return 1

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
    """A CUDA GPU, nameable but without a runtime: ``cuda().exist`` is ``False``."""
    return Device(kDLCUDA, dev_id)


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
