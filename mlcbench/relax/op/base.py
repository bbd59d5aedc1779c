"""Calls into lower levels: ``call_tir``, ``call_dps_packed``, ``call_pure_packed``, and
the builtins the VM provides (``builtin.alloc_tensor``, ``null_value``).

``call_tir(gv, (x, w), out_sinfo)`` calls the PrimFunc ``gv`` in destination-passing
style: the caller allocates outputs of ``out_sinfo`` and passes them after the inputs.
"""
from __future__ import annotations

from ...ir.errors import IRError
from ...ir.module import GlobalVar
from ...ir.op import Op
from ..expr import Call, Expr, ExternFunc, ShapeExpr, Tuple
from ..struct_info import (ObjectStructInfo, StructInfo, TensorStructInfo, TupleStructInfo)
from .registry import as_expr, make_call, register_op


def _from_sinfo_args(call):
    if not call.sinfo_args:
        raise IRError(f"{call.op.name}: the output struct info (out_sinfo) is missing")
    return call.sinfo_args[0]


def _out_sinfo(out_sinfo, where: str) -> StructInfo:
    if isinstance(out_sinfo, (list, tuple)):
        fields = [_out_sinfo(s, where) for s in out_sinfo]
        return fields[0] if len(fields) == 1 else TupleStructInfo(fields)
    if not isinstance(out_sinfo, (TensorStructInfo, TupleStructInfo)):
        raise IRError(f"{where}: out_sinfo is a tensor struct info such as "
                      f"R.Tensor((1, 128), 'float32') (or a list of them), found {out_sinfo!r}")
    return out_sinfo


def _arg_tuple(args):
    if isinstance(args, Expr) and not isinstance(args, Tuple):
        args = (args,)
    return as_expr(tuple(args) if isinstance(args, list) else args)


register_op("relax.call_tir", _from_sinfo_args, "opaque")
register_op("relax.call_dps_packed", _from_sinfo_args, "opaque")
register_op("relax.call_pure_packed", _from_sinfo_args, "opaque")


def call_tir(gvar, args, out_sinfo, tir_vars=None):
    """Call the PrimFunc ``gvar`` (a GlobalVar) on ``args``, producing ``out_sinfo``."""
    if not isinstance(gvar, GlobalVar):
        raise IRError(f"call_tir: the callee is a GlobalVar of a PrimFunc (cls.name in "
                      f"TVMScript), found {type(gvar).__name__}")
    call_args = [gvar, _arg_tuple(args)]
    if tir_vars is not None:
        call_args.append(tir_vars if isinstance(tir_vars, ShapeExpr) else ShapeExpr(tir_vars))
    return Call(Op.get("relax.call_tir"), call_args, None, [_out_sinfo(out_sinfo, "call_tir")])


def _extern(func):
    if isinstance(func, str):
        return ExternFunc(func)
    if not isinstance(func, ExternFunc):
        raise IRError(f"expected a packed function name or ExternFunc, found {func!r}")
    return func


def call_dps_packed(func, args, out_sinfo):
    """Call the registered packed function ``func`` (a name) in destination-passing style:
    ``call_dps_packed("env.relu", (x,), R.Tensor((1, 128), "float32"))``."""
    return Call(Op.get("relax.call_dps_packed"), [_extern(func), _arg_tuple(args)], None,
                [_out_sinfo(out_sinfo, "call_dps_packed")])


def call_pure_packed(func, *args, sinfo_args):
    """Call a packed function that returns its result (it must not have side effects)."""
    sinfo = sinfo_args if isinstance(sinfo_args, (list, tuple)) else [sinfo_args]
    return Call(Op.get("relax.call_pure_packed"), [_extern(func), *map(as_expr, args)], None,
                list(sinfo))


def _alloc_infer(call):
    shape = call.args[0]
    return TensorStructInfo(shape.values if hasattr(shape, "values") else None,
                            call.attrs.dtype)


register_op("relax.builtin.alloc_tensor", _alloc_infer, "opaque")
register_op("relax.null_value", lambda call: ObjectStructInfo(), "opaque")


class builtin:  # noqa: N801 -- a namespace, spelled as TVM's relax.op.builtin
    @staticmethod
    def alloc_tensor(shape, dtype: str, runtime_device_index: int = 0):
        """An uninitialized tensor of ``shape`` and ``dtype`` (the VM allocates it)."""
        shape = shape if isinstance(shape, ShapeExpr) else ShapeExpr(shape)
        return make_call("relax.builtin.alloc_tensor", (shape,),
                         {"dtype": str(dtype), "runtime_device_index": int(runtime_device_index)})


def null_value():
    """The null object (an absent optional value)."""
    return make_call("relax.null_value", ())
