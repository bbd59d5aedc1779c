"""The op registry: one entry per op with everything passes need to know about it.

An entry holds the op's struct-info rule (``infer(call) -> StructInfo``), its fusion
pattern kind (TVM's ``OpPatternKind``) and its legalization to TE/TOPI
(``legalize(bb, call) -> Expr``, used by ``LegalizeOps``). A new op is one
:func:`register_op` call next to its user-facing function::

    register_op("relax.exp", infer=unary_infer, pattern="elemwise",
                legalize=lambda bb, call: bb.call_te(topi.exp, call.args[0]))
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Callable

from ...ir.errors import IRError
from ...ir.module import GlobalVar
from ...ir.op import Op
from ...tir.expr import IntImm
from ..expr import Call, Expr, Tuple, const, struct_info_of
from ..struct_info import (StructInfo, TensorStructInfo, describe, dim_equal, shape_text)


class OpPatternKind(IntEnum):
    """How an op's output element depends on its inputs; FuseOps reads it (TVM's values)."""
    ELEMWISE = 0            # out[i] = f(in[i]) with the same shape
    BROADCAST = 1           # out[i] = f(in[broadcast(i)])
    INJECTIVE = 2           # each output element reads a computable set of inputs
    COMM_REDUCE = 3         # a commutative reduction
    OUT_EWISE_FUSABLE = 4   # a complex op (matmul, conv) whose output takes elementwise ops
    # TVM's numbering skips 5 and 6; the same values keep pattern comparisons as in TVM.
    TUPLE = 7
    OPAQUE = 8


_PATTERNS = {kind.name.lower(): kind for kind in OpPatternKind}


@dataclass(frozen=True)
class OpInfo:
    op: Op
    infer: Callable
    pattern: OpPatternKind
    legalize: Callable | None = None
    doc: str = ""

    @property
    def name(self) -> str:
        return self.op.name


_REGISTRY: dict[str, OpInfo] = {}


def register_op(name: str, infer: Callable, pattern: str = "opaque",
                legalize: Callable | None = None, doc: str = "") -> Op:
    """Register (or re-register) ``name``; returns its :class:`~mlcbench.ir.Op`."""
    op = Op.register(name)
    _REGISTRY[name] = OpInfo(op, infer, _PATTERNS[pattern], legalize, doc)
    return op


def get_op_info(op) -> OpInfo:
    name = op.name if isinstance(op, Op) else op
    if name not in _REGISTRY:
        raise IRError(f"operator {name!r} has no registry entry (struct-info rule); "
                      f"registered ops are listed by mlcbench.relax.op.list_ops()")
    return _REGISTRY[name]


def list_ops() -> list[str]:
    return sorted(_REGISTRY)


def op_pattern(op) -> OpPatternKind:
    return get_op_info(op).pattern


def infer_struct_info(call) -> StructInfo:
    return get_op_info(call.op).infer(call)


def legalize_call(bb, call):
    """The TE/TOPI implementation of ``call`` (a ``call_tir``), or None if it has none."""
    info = get_op_info(call.op)
    return info.legalize(bb, call) if info.legalize is not None else None


# -- helpers for the rules -----------------------------------------------------------------

def tensor_arg(call, index: int, what: str = "") -> TensorStructInfo:
    """The struct info of argument ``index``, which must be a tensor."""
    if index >= len(call.args):
        raise IRError(f"{call.op.name}: expected at least {index + 1} arguments, "
                      f"found {len(call.args)}")
    sinfo = struct_info_of(call.args[index])
    if not isinstance(sinfo, TensorStructInfo):
        raise IRError(f"{call.op.name}: argument {index}{' (' + what + ')' if what else ''} "
                      f"must be a tensor, found {describe(sinfo)}")
    return sinfo


def check_arity(call, count: int) -> None:
    if len(call.args) != count:
        raise IRError(f"{call.op.name}: expected {count} argument(s), found {len(call.args)}")


def normalize_axis(op_name: str, axis: int, ndim: int) -> int:
    if ndim >= 0 and not -ndim <= axis < ndim:
        raise IRError(f"{op_name}: axis {axis} is out of range for a tensor of "
                      f"{ndim} dimension(s)")
    return axis + ndim if axis < 0 else axis


def broadcast_dims(op_name: str, lhs: tuple, rhs: tuple) -> tuple:
    """numpy broadcasting of two shapes of dimension expressions."""
    ndim = max(len(lhs), len(rhs))
    one = IntImm("int64", 1)
    a = (None,) * (ndim - len(lhs)) + tuple(lhs)
    b = (None,) * (ndim - len(rhs)) + tuple(rhs)
    out = []
    for x, y in zip(a, b):
        # A missing leading axis broadcasts like an extent of 1.
        if x is None or _is_one(x):
            out.append(y if y is not None else one)
        elif y is None or _is_one(y) or dim_equal(x, y):
            out.append(x)
        elif _const(x) is not None and _const(y) is not None:
            raise IRError(f"{op_name}: shapes {shape_text(lhs)} and {shape_text(rhs)} do not "
                          f"broadcast (dimension {_const(x)} against {_const(y)})")
        else:
            out.append(x)      # symbolic extents: assume equal, checked at run time
    return tuple(out)


def _const(dim):
    return dim.value if isinstance(dim, IntImm) else None


def _is_one(dim) -> bool:
    return _const(dim) == 1


def as_expr(value):
    """A Relax argument from a Python value: numbers become constants, sequences Tuples."""
    if isinstance(value, (Expr, GlobalVar, Op)):
        return value
    if isinstance(value, (list, tuple)):
        return Tuple([as_expr(v) for v in value])
    if isinstance(value, (bool, int, float)):
        return const(value)
    raise IRError(f"expected a Relax expression, found {type(value).__name__}: {value!r}")


def is_call(expr, name: str) -> bool:
    """True when ``expr`` is a call of the registered op ``name`` (what graph passes match)."""
    return isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name == name


def make_call(name: str, args, attrs=None, sinfo_args=()):
    return Call(Op.get(name), [as_expr(a) for a in args], attrs, sinfo_args)
