"""What differs between CUDA C and OpenCL C when printing the same kernel: rows of data.

The printer asks its dialect how to spell a thread index, a barrier, a kernel
signature, a vector type or a math function; everything else (loops, stores,
arithmetic) is the same C in both.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...ir.dtype import DataType
from ...ir.errors import CodegenError

_C_TYPES = {"float32": "float", "float64": "double", "float16": "half", "int32": "int",
            "int64": "int64_t", "int16": "short", "int8": "signed char", "uint8": "unsigned char",
            "uint16": "unsigned short", "uint32": "unsigned int", "uint64": "uint64_t",
            "bool": "bool"}
_VECTOR_BASES = {"float32": "float", "int32": "int", "uint32": "uint", "float64": "double"}
_THREAD_AXES = ("x", "y", "z")


@dataclass(frozen=True)
class Dialect:
    """One C dialect: ``name``, its thread-index spellings and its qualifiers."""

    name: str
    block_index: str            # "blockIdx.{axis}" / "get_group_id({dim})"
    thread_index: str
    barrier: str
    shared_qualifier: str       # before a per-block array declaration
    global_qualifier: str       # before a kernel's pointer parameters
    restrict: str
    float_suffix_math: bool     # expf(x) for float32 (CUDA) or overloaded exp(x) (OpenCL)
    type_overrides: dict = field(default_factory=dict)

    def c_type(self, dtype: DataType, where: str = "") -> str:
        """``float32`` -> ``float``; ``float32x4`` -> ``float4``."""
        if dtype.lanes > 1:
            return self.vector_type(dtype)
        name = self.type_overrides.get(str(dtype)) or _C_TYPES.get(str(dtype))
        if name is None:
            raise CodegenError(f"{self.name} source: no C type for dtype {dtype}"
                               + (f" ({where})" if where else ""))
        return name

    def vector_type(self, dtype: DataType) -> str | None:
        base = _VECTOR_BASES.get(str(dtype.element))
        if base is None or dtype.lanes not in (2, 3, 4):
            return None
        return f"{base}{dtype.lanes}"

    def thread_var(self, tag: str) -> str:
        """``"threadIdx.y"`` -> ``((int)threadIdx.y)`` (CUDA) or ``((int)get_local_id(1))``."""
        kind, _, axis = tag.partition(".")
        if kind not in ("blockIdx", "threadIdx") or axis not in _THREAD_AXES:
            raise CodegenError(f"{self.name} source: unknown thread tag {tag!r}; expected "
                               "blockIdx.x/y/z or threadIdx.x/y/z (vthread loops become "
                               "serial loops when lowering)")
        pattern = self.block_index if kind == "blockIdx" else self.thread_index
        return "((int)" + pattern.format(axis=axis, dim=_THREAD_AXES.index(axis)) + ")"

    def math(self, name: str, dtype: DataType) -> str:
        """``exp`` on float32 -> ``expf`` in CUDA; OpenCL overloads the plain name."""
        if self.float_suffix_math and dtype.element.is_float and dtype.element.bits == 32:
            return name + "f"
        return name

    def vector_pointer(self, vtype: str, scope: str) -> str:
        """The cast that reads a vector out of an array: ``(float4*)`` in CUDA, where
        pointers are generic; OpenCL names the address space: ``(__local float4*)``."""
        if self.name != "opencl":
            return f"({vtype}*)"
        qualifier = {"shared": self.shared_qualifier, "local": ""}.get(scope,
                                                                       self.global_qualifier)
        return f"({qualifier}{vtype}*)"

    def make_vector(self, vtype: str, lanes: list) -> str:
        if self.name == "opencl":
            return f"(({vtype})({', '.join(lanes)}))"
        return f"make_{vtype}({', '.join(lanes)})"

    def signature(self, symbol: str, params: list, threads: tuple) -> str:
        """The kernel's first line; ``threads`` = (x, y, z) threads per block."""
        if self.name == "opencl":
            x, y, z = threads
            return (f"__kernel __attribute__((reqd_work_group_size({x}, {y}, {z}))) void "
                    f"{symbol}({', '.join(params)}) {{")
        bound = threads[0] * threads[1] * threads[2]
        return (f'extern "C" __global__ void __launch_bounds__({bound}) '
                f"{symbol}({', '.join(params)}) {{")

    def float_literal(self, value: float, dtype: DataType) -> str:
        suffix = "f" if dtype.bits == 32 else ""
        if value != value:
            return "NAN" if self.name == "opencl" else "__int_as_float(0x7fc00000)"
        if value in (float("inf"), float("-inf")):
            sign = "-" if value < 0 else ""
            return sign + ("INFINITY" if self.name == "opencl" else "__int_as_float(0x7f800000)")
        text = repr(float(value))
        return text + suffix


CUDA = Dialect(name="cuda", block_index="blockIdx.{axis}", thread_index="threadIdx.{axis}",
               barrier="__syncthreads();", shared_qualifier="__shared__ ",
               global_qualifier="", restrict=" __restrict__", float_suffix_math=True)

OPENCL = Dialect(name="opencl", block_index="get_group_id({dim})",
                 thread_index="get_local_id({dim})", barrier="barrier(CLK_LOCAL_MEM_FENCE);",
                 shared_qualifier="__local ", global_qualifier="__global ", restrict=" restrict",
                 float_suffix_math=False, type_overrides={"int64": "long", "uint64": "ulong",
                                                          "uint32": "uint"})

DIALECTS = {"cuda": CUDA, "opencl": OPENCL}
