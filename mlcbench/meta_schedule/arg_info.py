"""What a kernel's arguments look like, so a runner can allocate them without the IR.

A tuning record keeps the argument descriptions next to the trace; a runner in another
process reads them to allocate random inputs of the right dtype and shape::

    >>> from mlcbench.script import tir as T
    >>> @T.prim_func
    ... def add(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    ...     for i, j in T.grid(4, 8):
    ...         B[i, j] = A[i, j] + T.float32(1)
    >>> ArgInfo.from_prim_func(add)                          # doctest: +SKIP
    [TensorInfo("float32", [4, 8]), TensorInfo("float32", [4, 8])]
    >>> TensorInfo("float32", [4, 8]).as_json()
    ['TENSOR', 'float32', [4, 8]]
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.errors import TuningError
from ..ir.module import IRModule
from ..tir.expr import IntImm
from ..tir.function import PrimFunc

__all__ = ["ArgInfo", "TensorInfo"]


class ArgInfo:
    """Base of argument descriptions; :class:`TensorInfo` is the one kind kernels take."""

    def as_json(self):
        raise NotImplementedError

    @staticmethod
    def from_json(json_obj) -> "ArgInfo":
        """The ArgInfo written by :meth:`as_json` (``["TENSOR", dtype, shape]``)."""
        if isinstance(json_obj, (list, tuple)) and len(json_obj) == 3 and json_obj[0] == "TENSOR":
            return TensorInfo(json_obj[1], json_obj[2])
        raise TuningError(f"ArgInfo.from_json: expected ['TENSOR', dtype, shape], "
                          f"found {json_obj!r}")

    @staticmethod
    def from_prim_func(func: PrimFunc) -> list["ArgInfo"]:
        """One TensorInfo per parameter of ``func``, in order.

        Raises TuningError for a scalar parameter or a symbolic dimension: a runner could
        not invent a value for either.
        """
        infos = []
        for param in func.params:
            buffer = func.buffer_map.get(param)
            if buffer is None:
                raise TuningError(f"ArgInfo.from_prim_func: parameter {param.name!r} is a "
                                  f"scalar ({param.dtype}); tuning needs buffer parameters only")
            shape = []
            for dim in buffer.shape:
                if not isinstance(dim, IntImm):
                    raise TuningError(f"ArgInfo.from_prim_func: buffer {buffer.name!r} has the "
                                      f"symbolic dimension `{dim}`; tuning needs constant shapes")
                shape.append(int(dim.value))
            infos.append(TensorInfo(str(buffer.dtype), shape))
        return infos

    @staticmethod
    def from_entry_func(mod: IRModule, remove_preproc: bool = True) -> list["ArgInfo"]:
        """The ArgInfos of the module's entry PrimFunc (``main``, else the only PrimFunc).

        ``remove_preproc`` is TVM's: it takes out layout-rewrite preprocessing blocks,
        so that a rewritten weight is described in its original shape. No schedule here
        adds such blocks (weights are packed by a separate Relax pass), so both values
        describe the same arguments.
        """
        return ArgInfo.from_prim_func(entry_prim_func(mod))


def entry_prim_func(mod: IRModule) -> PrimFunc:
    """``mod["main"]`` when it is a PrimFunc, else the module's only PrimFunc."""
    funcs = {gv.name_hint: f for gv, f in mod.functions.items() if isinstance(f, PrimFunc)}
    if "main" in funcs:
        return funcs["main"]
    if len(funcs) == 1:
        return next(iter(funcs.values()))
    raise TuningError(f"expected a module with one PrimFunc (or one called 'main'), "
                      f"found {sorted(funcs) or 'none'}")


@dataclass(frozen=True)
class TensorInfo(ArgInfo):
    """A tensor argument: element ``dtype`` and constant ``shape``."""

    dtype: str
    shape: tuple

    def __post_init__(self):
        object.__setattr__(self, "dtype", str(self.dtype))
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))

    def as_json(self) -> list:
        return ["TENSOR", self.dtype, list(self.shape)]

    def __repr__(self) -> str:
        return f"TensorInfo({self.dtype!r}, {list(self.shape)})"
