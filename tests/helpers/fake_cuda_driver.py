"""A stand-in for ``cuda.bindings.driver`` (the subset mlcbench calls), for tests of the
real-GPU plumbing on machines without a GPU.

Same function names and signatures, same return convention (a tuple whose first item is
the CUresult, 0 for success, then the values), device pointers as ints. Device memory is
host memory behind made-up addresses; a copy or launch that touches an address outside
an allocation fails with CUDA_ERROR_INVALID_VALUE. ``cuModuleLoadData`` reads the PTX
text (its ``.target``, and each ``.entry``'s parameters and ``.maxntid``) and refuses a
target newer than the fake device. ``cuLaunchKernel`` reads the parameter values the way
a GPU does, through the ``void**`` array by the PTX entry's parameter sizes, and runs the
kernel of that name on the simulated GPU's CPU function over the fake device memory: a
launch that passes parameters in the wrong order, or copies the wrong bytes, computes a
wrong result. Unlike a GPU, it refuses a grid or block other than the kernel's own
(a GPU would run it and compute something else). With ``run_kernels=False`` a launch of
any entry of a loaded module is only recorded (for tests of tuning, whose candidates
have no simulated kernels to run).

>>> fake = FakeCUDADriver(simulated_kernels(sim_module))        # doctest: +SKIP
>>> cuda_driver.use_driver(fake)                                 # doctest: +SKIP
"""
import contextlib
import ctypes
import importlib
import math
import re
import struct
import time
from types import SimpleNamespace

import numpy as np

from mlcbench.codegen.llvm.function import symbolic_shape_vars
from mlcbench.runtime import cuda_driver
from mlcbench.runtime.device import gpu_backend

ERRORS = {0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
          100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE",
          218: "CUDA_ERROR_INVALID_PTX", 400: "CUDA_ERROR_INVALID_HANDLE",
          500: "CUDA_ERROR_NOT_FOUND"}
INVALID_VALUE, OUT_OF_MEMORY, NO_DEVICE, INVALID_PTX, INVALID_HANDLE, NOT_FOUND = (
    1, 2, 100, 218, 400, 500)
_ENTRY = re.compile(r"\.entry\s+(\w+)\s*\(([^)]*)\)\s*(?:\.maxntid\s+(\d+),\s*(\d+),\s*(\d+))?")
_PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.([a-z])(\d+)(\s+\.ptr)?[^\[]*(?:\[(\d+)\])?")


@contextlib.contextmanager
def as_cuda_device(fake, monkeypatch):
    """Within the block, ``cuda(0)`` of this process is a real device driven by ``fake``
    (``MLCBENCH_GPU=cuda``); the driver and the backend are restored afterwards."""
    device_module = importlib.import_module("mlcbench.runtime.device")
    saved = list(device_module._backend)
    cuda_driver.use_driver(fake)
    monkeypatch.setenv("MLCBENCH_GPU", "cuda")
    device_module._backend.clear()
    try:
        assert gpu_backend() == "cuda"
        yield fake
    finally:
        cuda_driver.use_driver(None)
        device_module._backend[:] = saved


def simulated_kernels(gpu_module) -> dict:
    """{kernel name: GPUKernel} of a module built for the simulated GPU."""
    return {kernel.name: kernel for function in gpu_module._gpu_functions.values()
            for kernel in function.host.kernels.values()}


class FakeCUDADriver:
    """See the module docstring; ``kernels`` are the simulated GPU's GPUKernels by name."""

    CUdevice_attribute = SimpleNamespace(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR=75,
                                         CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR=76)

    def __init__(self, kernels=None, *, devices=1, compute_capability=(8, 0), libcuda=True,
                 memory_limit=1 << 28, run_kernels=True):
        self.kernels, self.run_kernels = dict(kernels or {}), run_kernels
        self.devices, self.compute_capability = devices, compute_capability
        self.libcuda, self.memory_limit = libcuda, memory_limit
        self.memory = {}                  # address -> uint8 array
        self.next_address = 0x7F00_0000_0000
        self.modules, self.functions, self.events = {}, {}, {}
        self.launches = []                # (name, grid, block) of each launch
        self.calls = []

    # -- device and context ------------------------------------------------------------
    def cuInit(self, flags):
        self.calls.append("cuInit")
        if not self.libcuda:
            raise RuntimeError('"cuda" is an NVIDIA driver library and can only be found '
                               "via system search")
        return (0,) if self.devices else (NO_DEVICE,)

    def cuDeviceGetCount(self):
        return 0, self.devices

    def cuDeviceGet(self, ordinal):
        return (0, ordinal) if ordinal < self.devices else (101, None)

    def cuDeviceGetAttribute(self, attrib, dev):
        major = attrib == self.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
        return 0, self.compute_capability[0 if major else 1]

    def cuDeviceGetName(self, length, dev):
        return 0, b"Fake CUDA device".ljust(length, b"\0")

    def cuDevicePrimaryCtxRetain(self, dev):
        return 0, 1

    def cuCtxSetCurrent(self, ctx):
        return (0,)

    def cuCtxSynchronize(self):
        return (0,)

    def cuGetErrorName(self, error):
        name = ERRORS.get(int(error))
        return (0, name.encode()) if name else (INVALID_VALUE, None)

    # -- memory ------------------------------------------------------------------------
    def cuMemAlloc(self, nbytes):
        used = sum(m.size for m in self.memory.values())
        if used + nbytes > self.memory_limit:
            return OUT_OF_MEMORY, None
        address = self.next_address
        self.memory[address] = np.zeros(nbytes, dtype=np.uint8)
        self.next_address += (nbytes + 511) // 256 * 256      # 256-aligned, with a gap
        return 0, address

    def cuMemFree(self, address):
        return (0,) if self.memory.pop(int(address), None) is not None else (INVALID_VALUE,)

    def view(self, address, nbytes):
        """The fake device bytes [address, address + nbytes), or None outside memory."""
        for base, data in self.memory.items():
            if base <= address and address + nbytes <= base + data.size:
                return data[address - base:address - base + nbytes]
        return None

    def cuMemcpyHtoD(self, dst, src, nbytes):
        target = self.view(int(dst), nbytes)
        if target is None:
            return (INVALID_VALUE,)
        ctypes.memmove(target.ctypes.data, src, nbytes)
        return (0,)

    def cuMemcpyDtoH(self, dst, src, nbytes):
        source = self.view(int(src), nbytes)
        if source is None:
            return (INVALID_VALUE,)
        ctypes.memmove(dst, source.ctypes.data, nbytes)
        return (0,)

    # -- modules and launches ----------------------------------------------------------
    def cuModuleLoadData(self, image):
        ptx = ctypes.string_at(image).decode()
        target = re.search(r"\.target\s+sm_(\d+)", ptx)
        if target is None or int(target.group(1)) > 10 * self.compute_capability[0] + \
                self.compute_capability[1]:
            return INVALID_PTX, None
        entries = {}
        for name, params, *maxntid in _ENTRY.findall(ptx):
            kinds = [_PARAM.match(p.strip()).groups() for p in params.split(",") if p.strip()]
            entries[name] = ([(letter, int(bits) // 8 * int(count or 1), bool(ptr))
                              for letter, bits, ptr, count in kinds],
                             tuple(int(n) for n in maxntid) if maxntid[0] else None)
        handle = len(self.modules) + 1
        self.modules[handle] = entries
        return 0, handle

    def cuModuleGetFunction(self, module, name):
        entries = self.modules.get(module)
        if entries is None:
            return INVALID_HANDLE, None
        if name.decode() not in entries:
            return NOT_FOUND, None
        handle = len(self.functions) + 1
        self.functions[handle] = (name.decode(), *entries[name.decode()])
        return 0, handle

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        if f not in self.functions:
            return (INVALID_HANDLE,)
        name, entry, maxntid = self.functions[f]
        if maxntid and any(b > m for b, m in zip((bx, by, bz), maxntid)):
            return (INVALID_VALUE,)
        if not self.run_kernels:
            self.launches.append((name, (gx, gy, gz), (bx, by, bz)))
            return (0,)
        kernel = self.kernels[name]
        pointers = (ctypes.c_void_p * len(entry)).from_address(params)
        raw = [ctypes.string_at(pointers[i], nbytes) for i, (_, nbytes, _) in enumerate(entry)]
        values = self._values(kernel, entry, raw)
        if values is None:
            return (INVALID_VALUE,)
        cpu_args, bindings = kernel.buffers(values)
        # The kernel's own grid for these arguments (computed from n where it depends on it).
        nest = kernel.nest.bound(bindings)
        if (gx, gy, gz) != nest.grid or (bx, by, bz) != nest.block_dim:
            return (INVALID_VALUE,)
        kernel.run(cpu_args, nest)
        self.launches.append((name, (gx, gy, gz), (bx, by, bz)))
        return (0,)

    def _values(self, kernel, entry, raw):
        """The TIR parameters' values: arrays over fake device memory, scalars.

        Symbolic dimensions follow the parameters in the entry (int64 each), as the
        launch passes them; the arrays take their shapes from them."""
        params = kernel.func.params
        dims = {var: int.from_bytes(data, "little", signed=True) for var, data in
                zip(symbolic_shape_vars(kernel.func), raw[len(params):])}
        values = []
        for param, (letter, nbytes, _), data in zip(params, entry, raw):
            buffer = kernel.func.buffer_map.get(param)
            if buffer is None:
                values.append(_scalar(letter, data, param.dtype))
                continue
            np_dtype = buffer.dtype.to_numpy()
            shape = [dims[d] if d in dims else int(d) for d in buffer.shape]
            memory = self.view(int.from_bytes(data, "little"),
                               math.prod(shape) * np_dtype.itemsize)
            if memory is None:
                return None
            values.append(memory.view(np_dtype).reshape(shape))
        return values

    # -- events ------------------------------------------------------------------------
    def cuEventCreate(self, flags):
        handle = len(self.events) + 1
        self.events[handle] = None
        return 0, handle

    def cuEventRecord(self, event, stream):
        self.events[event] = time.perf_counter()
        return (0,)

    def cuEventSynchronize(self, event):
        return (0,)

    def cuEventElapsedTime(self, start, end):
        return 0, (self.events[end] - self.events[start]) * 1e3

    def cuEventDestroy(self, event):
        return (0,) if self.events.pop(event, 0) != 0 else (INVALID_HANDLE,)


def _scalar(letter, data, dtype):
    if letter == "f":
        return struct.unpack("<f" if len(data) == 4 else "<d", data)[0]
    if letter == "b":
        return np.frombuffer(data, dtype=dtype.to_numpy())[0]
    return int.from_bytes(data, "little", signed=not str(dtype).startswith("uint"))
