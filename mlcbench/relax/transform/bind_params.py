"""BindParams: turn parameters of a Relax function into constants (trained weights).

Before (``BindParams("main", {"w": w_np})``)::

    @R.function
    def main(x: R.Tensor((1, 4), "float32"), w: R.Tensor((4, 2), "float32")):
        gv = R.matmul(x, w)
        return gv

After::

    @R.function
    def main(x: R.Tensor((1, 4), "float32")):
        gv = R.matmul(x, R.const(w_np))
        return gv

A symbolic dimension takes the extent of the array bound to it (``w: R.Tensor(("k", 2))``
bound to a (4, 2) array makes ``k`` 4 everywhere in the function), as in TVM.
"""
from __future__ import annotations

import numpy as np

from ...arith.analyzer import Analyzer
from ...ir.errors import IRError
from ...ir.module import GlobalVar, IRModule
from ...ir.transform import module_pass
from ...tir.expr import IntImm, Var as TIRVar
from ...tir.functor import substitute
from ..expr import Call, Constant, Function, MatchCast, PrimValue, ShapeExpr, Var
from ..expr_functor import ExprMutator
from ..struct_info import (FuncStructInfo, ShapeStructInfo, TensorStructInfo, TupleStructInfo,
                           describe, shape_text)


@module_pass(opt_level=0, name="BindParams")
class BindParams:
    """Bind parameters of function ``func_name`` to constants.

    Parameters
    ----------
    func_name : str or GlobalVar
        The Relax function whose parameters are bound.
    params : dict
        ``{name or relax.Var: numpy array or NDArray}``. Each array must have the
        parameter's dtype and shape; a symbolic dimension takes the array's extent (and
        must take the same extent everywhere it appears).

    Example
    -------
    >>> mod = relax.transform.BindParams("main", {"w0": w0_np, "b0": b0_np})(mod)
    """

    def __init__(self, func_name, params: dict):
        self.func_name = func_name
        self.params = dict(params or {})

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        name = self.func_name.name_hint if isinstance(self.func_name, GlobalVar) \
            else self.func_name
        if name not in mod:
            raise IRError(f"BindParams: the module has no function {name!r}; it has "
                          f"{sorted(gv.name_hint for gv in mod)}")
        func = mod[name]
        if not isinstance(func, Function):
            raise IRError(f"BindParams: {name!r} is a {type(func).__name__}; only the "
                          "parameters of a Relax function can be bound")
        new_func = bind_params(func, self.params, where=f"BindParams({name!r})")
        return mod if new_func is func else mod.with_function(mod.get_global_var(name), new_func)


def bind_params(func: Function, params: dict, where: str = "bind_params") -> Function:
    """``func`` with the parameters named in ``params`` replaced by constants (see
    :func:`BindParams`); ``func`` itself when ``params`` is empty."""
    bound = [(var, _as_array(value, var, where)) for var, value in _resolve(func, params, where)]
    if not bound:
        return func
    symbols: dict = {}
    for var, array in bound:
        _check_and_bind_dims(var, array, symbols, where)
    constants = {var: Constant(array) for var, array in bound}
    binder = _Binder(constants, symbols)
    kept = [binder.define_param(p) for p in func.params if p not in constants]
    body = binder.visit_expr(func.body)
    ret = binder.sinfo(func.ret_struct_info)
    return Function(kept, body, ret, func.is_pure, func.attrs)


# -- matching keys and arrays to parameters ------------------------------------------------

def _resolve(func: Function, params: dict, where: str) -> list:
    names = [p.name_hint for p in func.params]
    resolved = []
    for key, value in params.items():
        if isinstance(key, Var):
            if key not in func.params:
                raise IRError(f"{where}: relax.Var {key.name_hint!r} is not a parameter of "
                              f"the function (its parameters are {names})")
            resolved.append((key, value))
            continue
        matches = [p for p in func.params if p.name_hint == key]
        if not matches:
            raise IRError(f"{where}: the function has no parameter named {key!r}; its "
                          f"parameters are {names}")
        if len(matches) > 1:
            raise IRError(f"{where}: {len(matches)} parameters are named {key!r}; bind them "
                          "by relax.Var instead of by name")
        resolved.append((matches[0], value))
    seen = [var for var, _ in resolved]
    duplicates = {v.name_hint for v in seen if seen.count(v) > 1}
    if duplicates:
        raise IRError(f"{where}: parameter(s) {sorted(duplicates)} bound twice")
    return resolved


def _as_array(value, var: Var, where: str) -> np.ndarray:
    from ...runtime.ndarray import NDArray
    if isinstance(value, Constant):
        return value.data.numpy()
    if isinstance(value, NDArray):
        return value.numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    raise IRError(f"{where}: parameter {var.name_hint!r} must be bound to a numpy array or an "
                  f"NDArray, found {type(value).__name__}")


def _check_and_bind_dims(var: Var, array: np.ndarray, symbols: dict, where: str) -> None:
    """Check ``array`` against the parameter's struct info; record symbolic extents."""
    sinfo = var.struct_info
    found = f"an array of shape {tuple(array.shape)} and dtype {array.dtype}"
    if not isinstance(sinfo, TensorStructInfo):
        raise IRError(f"{where}: parameter {var.name_hint!r} is {describe(sinfo)}, not a tensor; "
                      "only tensor parameters can be bound to arrays")
    expected = f"parameter {var.name_hint!r} is {describe(sinfo)}, but it is bound to {found}"
    if sinfo.dtype and sinfo.dtype != str(array.dtype):
        raise IRError(f"{where}: {expected} (dtype {array.dtype} != {sinfo.dtype}; cast with "
                      f"array.astype({sinfo.dtype!r}))")
    if sinfo.ndim >= 0 and sinfo.ndim != array.ndim:
        raise IRError(f"{where}: {expected} ({array.ndim} dimensions, expected {sinfo.ndim})")
    for axis, (dim, extent) in enumerate(zip(sinfo.dims or (), array.shape)):
        if isinstance(dim, IntImm) and dim.value != extent:
            raise IRError(f"{where}: {expected} (axis {axis} has extent {extent}, expected "
                          f"{dim.value})")
        if isinstance(dim, TIRVar):
            # Shape extents are int64 in Relax struct info.
            previous = symbols.setdefault(dim, IntImm("int64", extent))
            if previous.value != extent:
                raise IRError(f"{where}: {expected}: symbolic dimension {dim.name!r} would be "
                              f"{extent} here but is {previous.value} in another bound "
                              f"parameter (shape {shape_text(sinfo.dims)})")


# -- rewriting the function ----------------------------------------------------------------

class _Binder(ExprMutator):
    """Replaces bound parameters by constants and bound symbolic dimensions by extents."""

    def __init__(self, constants: dict, symbols: dict):
        super().__init__()
        self.var_remap_.update(constants)
        self.symbols = symbols
        self.analyzer = Analyzer()

    def sinfo(self, sinfo):
        return substitute_struct_info(sinfo, self.symbols, self.analyzer) if self.symbols \
            else sinfo

    def define_param(self, param: Var) -> Var:
        sinfo = self.sinfo(param.struct_info)
        if sinfo is param.struct_info:
            return param
        new = type(param)(param.name_hint, sinfo)
        self.var_remap_[param] = new
        return new

    def visit_shape_expr_(self, shape):
        values = [self.dim(v) for v in shape.values]
        return shape if all(a is b for a, b in zip(values, shape.values)) else ShapeExpr(values)

    def visit_prim_value_(self, value):
        new = self.dim(value.value)
        return value if new is value.value else PrimValue(new)

    def visit_call_(self, call):
        new = super().visit_call_(call)
        sinfo_args = [self.sinfo(s) for s in new.sinfo_args]
        if all(a is b for a, b in zip(sinfo_args, new.sinfo_args)):
            return new
        return Call(new.op, new.args, new.attrs, sinfo_args)

    def visit_binding(self, binding):
        sinfo = self.sinfo(binding.struct_info) if isinstance(binding, MatchCast) else None
        if sinfo is None or sinfo is binding.struct_info:
            super().visit_binding(binding)
            return
        value = self.builder_.normalize(self.visit_expr(binding.value))
        var = type(binding.var)(binding.var.name_hint, sinfo)
        self.var_remap_[binding.var] = var
        self.builder_.emit_normalized(MatchCast(var, value, sinfo))

    def dim(self, dim):
        return _substitute_dim(dim, self.symbols, self.analyzer) if self.symbols else dim


def _substitute_dim(dim, symbols: dict, analyzer: Analyzer):
    new = substitute(dim, symbols)
    # Bound extents make expressions such as n * 2 constant: fold them.
    return dim if new is dim else analyzer.simplify(new)


def substitute_struct_info(sinfo, symbols: dict, analyzer: Analyzer | None = None):
    """``sinfo`` with symbolic dimensions replaced per ``symbols`` (``{tir.Var: expr}``);
    the same object when nothing changes."""
    analyzer = analyzer or Analyzer()
    if isinstance(sinfo, TensorStructInfo) and sinfo.dims is not None:
        dims = [_substitute_dim(d, symbols, analyzer) for d in sinfo.dims]
        if all(a is b for a, b in zip(dims, sinfo.dims)):
            return sinfo
        return TensorStructInfo(dims, sinfo.dtype)
    if isinstance(sinfo, ShapeStructInfo) and sinfo.values is not None:
        values = [_substitute_dim(d, symbols, analyzer) for d in sinfo.values]
        return sinfo if all(a is b for a, b in zip(values, sinfo.values)) \
            else ShapeStructInfo(values)
    if isinstance(sinfo, TupleStructInfo):
        fields = [substitute_struct_info(f, symbols, analyzer) for f in sinfo.fields]
        return sinfo if all(a is b for a, b in zip(fields, sinfo.fields)) \
            else TupleStructInfo(fields)
    if isinstance(sinfo, FuncStructInfo):
        params = [substitute_struct_info(p, symbols, analyzer) for p in sinfo.params]
        ret = substitute_struct_info(sinfo.ret, symbols, analyzer)
        if ret is sinfo.ret and all(a is b for a, b in zip(params, sinfo.params)):
            return sinfo
        return FuncStructInfo(params, ret, sinfo.purity)
    return sinfo


__all__ = ["BindParams", "bind_params", "substitute_struct_info"]
