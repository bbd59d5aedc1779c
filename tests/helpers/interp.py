"""A reference interpreter for *lowered* TIR (a test tool, not part of the package).

It executes the lowered form that ``mlcbench.tir.transform.lower`` promises the code
generator, one scalar iteration at a time, with numpy arrays as memory, and refuses
anything outside that form (blocks, multi-dimensional accesses, unknown ``data``
variables, vectorized/unrolled loops left behind, out-of-bounds indices). Vectors
(``Ramp``/``Broadcast`` and vector-typed expressions) are numpy arrays.

    run_lowered(lowered_mod["main"], a, b, c)     # writes into the numpy arrays
"""
from __future__ import annotations

import numpy as np

from mlcbench import tir
from mlcbench.tir import expr as E
from mlcbench.tir.stmt import ForKind

_UNINITIALIZED = {"float": np.nan, "int": 0x5A5A5A5A, "uint": 0x5A5A5A5A, "bool": True}
_NUMPY_CALLS = {
    "tir.exp": np.exp, "tir.log": np.log, "tir.sqrt": np.sqrt, "tir.tanh": np.tanh,
    "tir.fabs": np.abs, "tir.abs": np.abs, "tir.floor": np.floor, "tir.ceil": np.ceil,
    "tir.exp2": np.exp2, "tir.log2": np.log2, "tir.sin": np.sin, "tir.cos": np.cos,
    "tir.sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tir.rsqrt": lambda x: 1 / np.sqrt(x),
    "tir.pow": np.power, "tir.round": np.round, "tir.nearbyint": np.round,
}


class LoweredFormViolation(AssertionError):
    """The IR is not in the lowered form the code generator consumes."""


def _np_dtype(dtype):
    element = dtype.element
    return np.dtype("bool" if element.is_bool else str(element))


def as_dtype(value, dtype):
    """Round ``value`` (scalar or lane array) to ``dtype`` as the machine would store it."""
    if dtype.lanes > 1:
        array = np.asarray(value)
        if array.shape != (dtype.lanes,):
            array = np.broadcast_to(array, (dtype.lanes,))
        return array.astype(_np_dtype(dtype))
    if dtype.is_float:
        return _np_dtype(dtype).type(value)
    if dtype.is_bool:
        return bool(value)
    return int(np.asarray(value).astype(_np_dtype(dtype)))


def _trunc_div(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.trunc(np.true_divide(a, b)).astype(np.int64)
    return E._c_div(a, b)


def _trunc_mod(a, b):
    return a - _trunc_div(a, b) * b


def _binary_op_table(op_is_float):
    return {
        E.Add: np.add, E.Sub: np.subtract, E.Mul: np.multiply,
        E.Div: np.true_divide if op_is_float else _trunc_div,
        E.Mod: np.fmod if op_is_float else _trunc_mod,
        E.FloorDiv: (lambda a, b: np.floor(a / b)) if op_is_float else np.floor_divide,
        E.FloorMod: np.mod, E.Min: np.minimum, E.Max: np.maximum,
        E.EQ: np.equal, E.NE: np.not_equal, E.LT: np.less, E.LE: np.less_equal,
        E.GT: np.greater, E.GE: np.greater_equal, E.And: np.logical_and, E.Or: np.logical_or,
    }


_BINARY_OPS = {True: _binary_op_table(True), False: _binary_op_table(False)}


class Interpreter:
    def __init__(self):
        self.env: dict = {}

    # -- expressions --------------------------------------------------------------------
    def eval(self, e):
        method = getattr(self, "eval_" + type(e).__name__, None)
        if method is None and isinstance(e, E.BinaryOp):
            method = self.eval_BinaryOp
        if method is None:
            raise LoweredFormViolation(f"cannot evaluate {type(e).__name__}")
        return method(e)

    def eval_IntImm(self, e):
        return bool(e.value) if e.dtype.is_bool else e.value

    def eval_FloatImm(self, e):
        return as_dtype(e.value, e.dtype)

    def eval_Var(self, e):
        if e not in self.env:
            raise LoweredFormViolation(f"variable {e.name} is used before it is defined")
        return self.env[e]

    eval_SizeVar = eval_Var

    def eval_BinaryOp(self, e):
        a, b = self.eval(e.a), self.eval(e.b)
        op = _BINARY_OPS[e.a.dtype.is_float][type(e)]
        return as_dtype(op(a, b), e.dtype)

    def eval_Not(self, e):
        return as_dtype(np.logical_not(self.eval(e.a)), e.dtype)

    def eval_Select(self, e):
        cond, t, f = self.eval(e.condition), self.eval(e.true_value), self.eval(e.false_value)
        return as_dtype(np.where(cond, t, f), e.dtype)

    def eval_Cast(self, e):
        return as_dtype(self.eval(e.value), e.dtype)

    def eval_Ramp(self, e):
        base, stride = self.eval(e.base), self.eval(e.stride)
        return base + stride * np.arange(e.lanes, dtype=np.int64)

    def eval_Broadcast(self, e):
        return as_dtype(self.eval(e.value), e.dtype)

    def eval_Let(self, e):
        self.env[e.var] = self.eval(e.value)
        return self.eval(e.body)

    def eval_Call(self, e):
        if e.op == "tir.if_then_else":
            cond = self.eval(e.args[0])
            if np.ndim(cond) == 0:
                return as_dtype(self.eval(e.args[1] if cond else e.args[2]), e.dtype)
            f = self.eval(e.args[2])
            if isinstance(e.args[1], E.BufferLoad):
                # A masked load: the lanes the mask keeps out read no memory.
                return as_dtype(np.where(cond, self._masked_load(e.args[1], cond), f), e.dtype)
            t = self.eval(e.args[1])
            return as_dtype(np.where(cond, t, f), e.dtype)
        if e.op in _NUMPY_CALLS:
            with np.errstate(all="ignore"):
                args = [self.eval(a) for a in e.args]
                return as_dtype(_NUMPY_CALLS[e.op](*args), e.dtype)
        raise LoweredFormViolation(f"the interpreter does not know the call {e.op}")

    def memory(self, buffer, indices):
        if len(indices) != 1:
            raise LoweredFormViolation(f"access to {buffer.name} with {len(indices)} indices; "
                                       "lowered accesses are one-dimensional")
        if buffer.data not in self.env:
            raise LoweredFormViolation(f"buffer {buffer.name}: its data var is neither a "
                                       "parameter's nor an enclosing Allocate's")
        index = indices[0]
        if not (index.dtype.lanes == 1 or isinstance(index, E.Ramp)):
            raise LoweredFormViolation(f"vector index of {buffer.name} is not a Ramp")
        array, position = self.env[buffer.data], self.eval(index)
        if np.any(np.asarray(position) < 0) or np.any(np.asarray(position) >= array.size):
            raise IndexError(f"{buffer.name}[{position}] is out of bounds ({array.size})")
        return array, position

    def _masked_load(self, load, mask):
        if len(load.indices) != 1 or not isinstance(load.indices[0], E.Ramp) or \
                load.buffer.data not in self.env:
            raise LoweredFormViolation(f"a load of {load.buffer.name} under a vector mask is "
                                       "not one vector load at a Ramp")
        array, position = self.env[load.buffer.data], self.eval(load.indices[0])
        kept = position[np.asarray(mask, bool)]
        if np.any(kept < 0) or np.any(kept >= array.size):
            raise IndexError(f"{load.buffer.name}[{kept}] is out of bounds ({array.size})")
        return as_dtype(array[np.clip(position, 0, array.size - 1)], load.dtype)

    def eval_BufferLoad(self, e):
        array, position = self.memory(e.buffer, e.indices)
        return as_dtype(array[position], e.dtype)

    # -- statements -----------------------------------------------------------------------
    def run(self, s):
        method = getattr(self, "run_" + type(s).__name__, None)
        if method is None:
            raise LoweredFormViolation(f"{type(s).__name__} is not part of the lowered form")
        method(s)

    def run_SeqStmt(self, s):
        for stmt in s.seq:
            self.run(stmt)

    def run_For(self, s):
        if s.kind not in (ForKind.SERIAL, ForKind.PARALLEL):
            raise LoweredFormViolation(f"loop {s.loop_var.name} of kind {s.kind.value} left")
        start, extent = self.eval(s.min), self.eval(s.extent)
        for value in range(start, start + extent):
            self.env[s.loop_var] = value
            self.run(s.body)

    def run_BufferStore(self, s):
        array, position = self.memory(s.buffer, s.indices)
        value = self.eval(s.value)
        if np.ndim(position) != np.ndim(value):
            raise LoweredFormViolation(f"store to {s.buffer.name}: index and value lanes differ")
        array[position] = value

    def run_Allocate(self, s):
        if s.buffer.ndim != 1:
            raise LoweredFormViolation(f"Allocate of {s.buffer.name} is not flat")
        size = self.eval(s.buffer.shape[0])
        dtype = _np_dtype(s.buffer.dtype)
        self.env[s.buffer.data] = np.full(size, _UNINITIALIZED[s.buffer.dtype.code], dtype)
        self.run(s.body)
        del self.env[s.buffer.data]

    def run_IfThenElse(self, s):
        if self.eval(s.condition):
            self.run(s.then_case)
        elif s.else_case is not None:
            self.run(s.else_case)

    def run_LetStmt(self, s):
        self.env[s.var] = self.eval(s.value)
        self.run(s.body)

    def run_AssertStmt(self, s):
        if not self.eval(s.condition):
            raise AssertionError(s.message)
        self.run(s.body)

    def run_Evaluate(self, s):
        self.eval(s.value)


def run_lowered(func: tir.PrimFunc, *args):
    """Execute ``func`` (lowered form) on numpy arrays / Python scalars, in place."""
    interp = Interpreter()
    if len(args) != len(func.params):
        raise TypeError(f"expected {len(func.params)} arguments, found {len(args)}")
    for param, arg in zip(func.params, args):
        buffer = func.buffer_map.get(param)
        if buffer is None:
            interp.env[param] = arg
            continue
        shape = tuple(int(s) for s in buffer.shape)
        if arg.shape != shape or arg.dtype != _np_dtype(buffer.dtype):
            raise TypeError(f"{buffer.name}: expected {shape} {buffer.dtype}, "
                            f"found {arg.shape} {arg.dtype}")
        interp.env[buffer.data] = arg.reshape(-1)       # a view: stores reach the caller
    interp.run(func.body)
