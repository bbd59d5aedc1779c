"""A thin layer over the CUDA driver API (``cuda.bindings.driver``, the ``[cuda]`` extra).

mlcbench runs on a real GPU through these calls only: ``cuInit`` and the primary
context of device 0, ``cuModuleLoadData`` of our PTX and ``cuModuleGetFunction``,
``cuLaunchKernel``, ``cuMemAlloc``/``cuMemFree``, ``cuMemcpyHtoD``/``DtoH`` and events
for timing. Every ``CUresult`` is checked: a failure raises :class:`CUDADriverError`
naming the call and the driver's error name (``cuGetErrorName``).

The driver module is looked up on each call through :func:`driver`, so another module
with the same functions can stand in for it (:func:`use_driver`; the tests' fake driver
runs kernels on host memory).

>>> probe()                      # doctest: +SKIP
'cuda-bindings is not installed (pip install "mlcbench[cuda]")'
"""
from __future__ import annotations

import ctypes

from ..ir.errors import MLCBenchError, RuntimeError_

_override: list = []        # the stand-in driver module, when one is installed
_context: list = []         # the Context of device 0, made on first use
CUDA_ERROR_NO_DEVICE = 100


class CUDADriverError(RuntimeError_):
    """A CUDA driver call failed; the message names the call and the driver's error."""


def use_driver(module):
    """Make ``module`` the driver (``None``: ``cuda.bindings.driver`` again); returns the
    one it replaces. The context of device 0 is made afresh with the new driver."""
    previous = _override[0] if _override else None
    _override.clear()
    _context.clear()
    if module is not None:
        _override.append(module)
    return previous


def driver():
    """The driver module; ImportError when cuda-bindings is not installed."""
    if _override:
        return _override[0]
    from cuda.bindings import driver as cuda_driver
    return cuda_driver


def error_name(err) -> str:
    """``CUDA_ERROR_OUT_OF_MEMORY`` for a CUresult (its number when the driver has no name)."""
    try:
        status, name = driver().cuGetErrorName(err)
        if int(status) == 0 and name:
            return name.decode() if isinstance(name, bytes) else str(name)
    except (RuntimeError, TypeError, ValueError):
        pass
    return f"CUresult {int(err)}"


def call(name: str, *args):
    """``driver().<name>(*args)`` with its CUresult checked; returns what follows the
    CUresult (one value, a tuple of them, or None)."""
    try:
        result = getattr(driver(), name)(*args)
    except MLCBenchError:
        raise
    except RuntimeError as err:      # cuda-bindings raises when libcuda cannot be loaded
        raise CUDADriverError(f"{name} failed: {err}") from None
    err, values = (result[0], result[1:]) if isinstance(result, tuple) else (result, ())
    if int(err) != 0:
        raise CUDADriverError(f"{name} failed: {error_name(err)}")
    return values[0] if len(values) == 1 else (values or None)


def probe() -> str:
    """``""`` when device 0 can run code, else what is missing, in one line."""
    try:
        drv = driver()
    except ImportError:
        return 'cuda-bindings is not installed (pip install "mlcbench[cuda]")'
    try:
        err = drv.cuInit(0)[0]
    except RuntimeError:
        return "no CUDA driver: libcuda.so.1 was not found (is the NVIDIA driver installed?)"
    if int(err) == CUDA_ERROR_NO_DEVICE:
        return "the CUDA driver reports no device"
    if int(err) != 0:
        return f"cuInit failed: {error_name(err)}"
    try:
        count = call("cuDeviceGetCount")
    except CUDADriverError as failure:
        return str(failure)
    return "" if count > 0 else "the CUDA driver reports no device"


class Context:
    """The primary context of device 0, current on this thread; its device's facts."""

    def __init__(self):
        call("cuInit", 0)
        self.device = call("cuDeviceGet", 0)
        self.handle = call("cuDevicePrimaryCtxRetain", self.device)
        call("cuCtxSetCurrent", self.handle)
        attribute = driver().CUdevice_attribute
        major = call("cuDeviceGetAttribute",
                     attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device)
        minor = call("cuDeviceGetAttribute",
                     attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device)
        self.compute_capability = (int(major), int(minor))
        raw = call("cuDeviceGetName", 256, self.device)
        self.name = raw.split(b"\0")[0].decode(errors="replace")

    @property
    def arch(self) -> str:
        """``sm_80`` for compute capability 8.0."""
        return "sm_%d%d" % self.compute_capability

    def synchronize(self) -> None:
        call("cuCtxSetCurrent", self.handle)
        call("cuCtxSynchronize")


def context() -> Context:
    """The context of device 0, made (cuInit, primary context) on first use."""
    if not _context:
        _context.append(Context())
    call("cuCtxSetCurrent", _context[0].handle)
    return _context[0]


# -- memory ----------------------------------------------------------------------------
def mem_alloc(nbytes: int) -> int:
    """Device memory of ``nbytes`` (at least 1 byte), as an int address."""
    context()
    return int(call("cuMemAlloc", max(int(nbytes), 1)))


def mem_free(address: int, owner) -> None:
    """Free what :func:`mem_alloc` gave, through the driver module ``owner`` that gave it
    (an array may outlive a driver swapped in after it). Called from finalizers, so a
    failure (a driver already shut down) is ignored."""
    try:
        owner.cuMemFree(address)
    except Exception:               # noqa: BLE001 -- nothing to report to at exit
        pass


def copy_to_device(address: int, host_address: int, nbytes: int) -> None:
    if nbytes:
        call("cuMemcpyHtoD", address, host_address, nbytes)


def copy_to_host(host_address: int, address: int, nbytes: int) -> None:
    if nbytes:
        call("cuMemcpyDtoH", host_address, address, nbytes)


# -- modules and launches --------------------------------------------------------------
def load_module(ptx: str):
    """``cuModuleLoadData`` of PTX text; the driver compiles it for the device."""
    context()
    image = ctypes.create_string_buffer(ptx.encode())      # NUL-terminated, as it must be
    return call("cuModuleLoadData", ctypes.addressof(image))


def get_function(module, name: str):
    return call("cuModuleGetFunction", module, name.encode())


def launch(function, grid: tuple, block: tuple, params: list) -> None:
    """``cuLaunchKernel`` on the default stream; ``params`` are ctypes values in the
    order of the PTX entry's parameters (the driver reads each through a pointer)."""
    pointers = (ctypes.c_void_p * max(len(params), 1))(
        *[ctypes.addressof(p) for p in params])
    call("cuLaunchKernel", function, *grid, *block, 0, 0, ctypes.addressof(pointers), 0)


def time_calls(run, number: int) -> float:
    """Seconds per call of ``run()`` (which launches work), ``number`` calls between two
    CUDA events on the default stream."""
    context()
    start, end = call("cuEventCreate", 0), call("cuEventCreate", 0)
    try:
        call("cuEventRecord", start, 0)
        for _ in range(number):
            run()
        call("cuEventRecord", end, 0)
        call("cuEventSynchronize", end)
        milliseconds = call("cuEventElapsedTime", start, end)
    finally:
        call("cuEventDestroy", start)
        call("cuEventDestroy", end)
    return float(milliseconds) / 1e3 / number
