"""The ``T`` namespace of TVMScript: ``from mlcbench.script import tir as T``.

Inside ``@T.prim_func`` these spell TIR (``T.grid``, ``T.block``, ``T.axis.remap``,
``T.reads`` ...). Outside, the expression helpers work on their own::

    T.int32(5)                       # IntImm("int32", 5)
    T.max(x, T.float32(0))           # Max node
    T.Buffer((128, 128), "float32")  # a tir.Buffer
"""
from ..ir.dtype import dtype as _as_dtype
from ..tir.op import (abs, call_extern, ceil, cos, erf, exp, exp2, fabs, floor, floordiv,  # noqa: F401,A004
                      floormod, fma, if_then_else, isnan, log, log2, log10, max, max_value,
                      min, min_value, nearbyint, pow, prefetch, reinterpret, round, rsqrt,
                      shift_left, shift_right, sigmoid, sin, sqrt, tan, tanh, trunc, truncdiv,
                      truncmod, tvm_access_ptr, tvm_storage_sync, type_annotation)
from ..tir.op import all, any  # noqa: F401,A004
from .parser import prim_func  # noqa: F401
from .parser.t_expr import (EQ, GE, GT, LE, LT, NE, Add, And, Broadcast, BufferType,  # noqa: F401
                            Cast, Div, DTypeFunc, FloorDiv, FloorMod, HandleFunc, Let, Max,
                            Min, Mod, Mul, Not, Or, Ramp, Select, StringImm, Sub, call_intrin,
                            cast, likely, size_var, var)
from .parser.t_stmt import (Assert, LetStmt, alloc_buffer, allocate, axis, block,  # noqa: F401
                            block_attr, decl_buffer, evaluate, func_attr, grid, init,
                            match_buffer, parallel, reads, serial, thread_binding, unroll,
                            vectorized, where, writes)

Buffer = BufferType()
handle = HandleFunc()
bool = DTypeFunc("bool")  # noqa: A001
int8, int16, int32, int64 = (DTypeFunc(f"int{b}") for b in (8, 16, 32, 64))
uint8, uint16, uint32, uint64 = (DTypeFunc(f"uint{b}") for b in (8, 16, 32, 64))
float16, float32, float64 = (DTypeFunc(f"float{b}") for b in (16, 32, 64))


def __getattr__(name: str):
    """Vector types such as ``T.float32x16`` and ``T.int32x4``."""
    if name[:1] in "iuf" and "x" in name:
        try:
            return DTypeFunc(str(_as_dtype(name)))
        except ValueError:
            pass
    raise AttributeError(f"module 'T' (mlcbench.script.tir) has no attribute '{name}'")
