"""DeadCodeElimination: drop bindings nobody reads and functions nobody calls.

Before::

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv0 = R.exp(x)                                    # never used
            gv = R.call_tir(cls.relu, (x,), R.Tensor((4,), "float32"))
            R.output(gv)
        return gv
    # + PrimFuncs relu (called) and exp (never called)

After: ``lv0`` and the PrimFunc ``exp`` are gone; ``relu`` stays, since ``main`` reaches
it through ``call_tir``.

A binding is removed only when its value is pure (no call of a packed function by name,
no call of an impure function) and, for ``R.match_cast``, when it defines no symbolic
dimension.
"""
from __future__ import annotations

from ...ir.errors import IRError
from ...ir.module import GlobalVar, IRModule
from ...ir.transform import module_pass
from ..analysis import free_vars, post_order_visit
from ..expr import (Call, ExternFunc, Function, If, MatchCast, SeqExpr, Var)
from ..struct_info import FuncStructInfo, ShapeStructInfo, TensorStructInfo, TupleStructInfo


@module_pass(opt_level=1, name="DeadCodeElimination")
class DeadCodeElimination:
    """Remove unused pure bindings, then functions unreachable from the entry functions.

    Parameters
    ----------
    entry_functions : list of str, optional
        Names of functions to keep (with everything they reach) in addition to the
        module's externally visible Relax functions (those with a ``global_symbol``) and
        ``main``. A module without Relax functions is left as it is, since nothing in it
        says which PrimFuncs are used.

    Example
    -------
    >>> mod = relax.transform.DeadCodeElimination()(mod)
    >>> mod = relax.transform.DeadCodeElimination(["main", "train_step"])(mod)
    """

    def __init__(self, entry_functions=None):
        self.entry_functions = list(entry_functions or [])

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        entries = entry_functions(mod, self.entry_functions)
        out = mod.copy()
        changed = False
        for gv, func in mod.items():
            if isinstance(func, Function):
                pruned = remove_unused_bindings(func, mod)
                if pruned is not func:
                    out[gv] = pruned
                    changed = True
        # Without a Relax function nothing says which PrimFuncs are used: keep them all.
        if any(isinstance(f, Function) for f in mod.functions.values()):
            reached = reachable_functions(out, entries)
            for gv in [gv for gv in out.get_global_vars() if gv not in reached]:
                out.remove(gv)
                changed = True
        return out if changed else mod


def entry_functions(mod: IRModule, names=()) -> list[GlobalVar]:
    """The functions DCE keeps: ``names``, Relax functions with a ``global_symbol``, main."""
    entries = []
    for name in names:
        if name not in mod:
            raise IRError(f"DeadCodeElimination: entry function {name!r} is not in the module; "
                          f"it has {sorted(gv.name_hint for gv in mod)}")
        entries.append(mod.get_global_var(name))
    for gv, func in mod.items():
        public = isinstance(func, Function) and "global_symbol" in func.attrs
        if (public or gv.name_hint == "main") and gv not in entries:
            entries.append(gv)
    return entries


def reachable_functions(mod: IRModule, entries) -> set:
    """GlobalVars of the functions reachable from ``entries`` (calls, call_tir ...)."""
    reached, work = set(), list(entries)
    while work:
        gv = work.pop()
        if gv in reached or gv not in mod:
            continue
        reached.add(gv)
        func = mod[gv]
        if isinstance(func, Function):
            work.extend(_global_vars_in(func))
    return reached


def _global_vars_in(func: Function) -> list:
    found = []
    post_order_visit(func, lambda e: found.append(e) if isinstance(e, GlobalVar) else None)
    return found


# -- unused bindings -----------------------------------------------------------------------

def remove_unused_bindings(func: Function, mod: IRModule | None = None) -> Function:
    """``func`` without bindings whose variables are never read (pure ones only), in
    nested ``If`` arms and inner functions too; ``func`` itself when none is unused."""
    body = _prune(func.body, mod)
    return func if body is func.body else func.replace(body=body)


def _prune(expr, mod):
    if isinstance(expr, Function):
        return remove_unused_bindings(expr, mod)
    if isinstance(expr, If):
        arms = _prune(expr.true_branch, mod), _prune(expr.false_branch, mod)
        if arms[0] is expr.true_branch and arms[1] is expr.false_branch:
            return expr
        return If(expr.cond, *arms)
    if isinstance(expr, SeqExpr):
        return _prune_seq(expr, mod)
    return expr


def _prune_seq(seq: SeqExpr, mod) -> SeqExpr:
    used = _uses(seq.body)
    new_blocks, changed = [], False
    # Backwards, so a binding's uses are known before the binding itself is judged.
    for block in reversed(seq.blocks):
        kept = []
        for binding in reversed(block.bindings):
            if binding.var not in used and _removable(binding, mod):
                changed = True
                continue
            value = _prune(binding.value, mod)
            if value is not binding.value:
                binding = binding.replace(value=value)
                changed = True
            kept.append(binding)
            # A kept binding keeps alive what it reads, its shape variable included.
            used |= _uses(value) | _vars_in_struct_info(binding.var.struct_info)
        if kept:
            kept.reverse()
            new_blocks.append(type(block)(kept) if len(kept) != len(block.bindings)
                              or any(a is not b for a, b in zip(kept, block.bindings))
                              else block)
        else:
            changed = True
    if not changed:
        return seq
    new_blocks.reverse()
    return SeqExpr(new_blocks, seq.body)


def _uses(expr) -> set:
    return set(free_vars(expr)) | ({expr} if isinstance(expr, Var) else set())


def _vars_in_struct_info(sinfo) -> set:
    """Relax variables a struct info refers to (``R.Tensor(shape_var)``)."""
    if isinstance(sinfo, TensorStructInfo) and isinstance(sinfo.shape, Var):
        return {sinfo.shape}
    if isinstance(sinfo, TupleStructInfo):
        return set().union(*(_vars_in_struct_info(f) for f in sinfo.fields))
    return set()


def _removable(binding, mod) -> bool:
    if isinstance(binding, MatchCast) and _defines_symbols(binding):
        return False
    impure: list = []
    post_order_visit(binding.value,
                     lambda e: impure.append(e) if _is_impure_call(e, mod) else None)
    return not impure


def _is_impure_call(expr, mod) -> bool:
    if not isinstance(expr, Call):
        return False
    callee = expr.op
    if isinstance(callee, ExternFunc):
        return True                       # R.call_packed: may act on the world
    if isinstance(callee, GlobalVar) and mod is not None and callee in mod:
        return not getattr(mod[callee], "is_pure", True)
    if isinstance(callee, Var) and isinstance(callee.struct_info, FuncStructInfo):
        return not callee.struct_info.purity
    return False


def _defines_symbols(binding: MatchCast) -> bool:
    """A match_cast that names a new symbolic dimension defines it for later bindings."""
    return bool(_tir_vars(binding.struct_info) - _tir_vars(binding.value.struct_info))


def _tir_vars(sinfo) -> set:
    from ...tir.expr import Var as TIRVar
    from ...tir.functor import post_order_visit as tir_visit
    dims = ()
    if isinstance(sinfo, TensorStructInfo):
        dims = sinfo.dims or ()
    elif isinstance(sinfo, ShapeStructInfo):
        dims = sinfo.values or ()
    elif isinstance(sinfo, TupleStructInfo):
        return set().union(*(_tir_vars(f) for f in sinfo.fields))
    found: set = set()
    for dim in dims:
        tir_visit(dim, lambda e: found.add(e) if isinstance(e, TIRVar) else None)
    return found


__all__ = ["DeadCodeElimination", "entry_functions", "reachable_functions",
           "remove_unused_bindings"]
