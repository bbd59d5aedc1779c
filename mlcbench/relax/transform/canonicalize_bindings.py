"""CanonicalizeBindings: remove bindings that only rename a variable.

Before::

    with R.dataflow():
        lv0 = R.exp(x)
        lv1 = lv0                  # a trivial var-to-var binding
        lv2 = R.add(lv1, x)
        gv = lv2                   # the block's output, copied from a dataflow var
        R.output(gv)
    return gv

After::

    with R.dataflow():
        lv0 = R.exp(x)
        gv = R.add(lv0, x)         # the output var now binds the value directly
        R.output(gv)
    return gv

``y = x`` is dropped and every use of ``y`` reads ``x``, except when ``y`` leaves a
dataflow block and ``x`` is local to it (a ``DataflowVar`` is invisible after the
block): then ``x``'s own binding is renamed to ``y`` where their struct info agree.
``y = R.match_cast(x, sinfo)`` where ``x`` already has exactly ``sinfo`` is trivial too.
"""
from __future__ import annotations

from ...ir.module import IRModule
from ...ir.transform import module_pass
from ..expr import DataflowBlock, DataflowVar, Function, MatchCast, Var, VarBinding
from ..expr_functor import ExprMutator
from ..struct_info import struct_info_equal


@module_pass(opt_level=1, name="CanonicalizeBindings")
class CanonicalizeBindings:
    """Remove trivial var-to-var bindings in every Relax function of the module.

    Example
    -------
    >>> mod = relax.transform.CanonicalizeBindings()(mod)
    """

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        out = None
        for gv, func in mod.items():
            if not isinstance(func, Function):
                continue
            new = canonicalize_bindings(func, mod)
            if new is not func:
                out = out or mod.copy()
                out[gv] = new
        return out or mod


def canonicalize_bindings(func: Function, mod: IRModule | None = None) -> Function:
    """``func`` without trivial bindings; ``func`` itself when it has none."""
    return _Canonicalizer(mod).visit_expr(func)


def _aliased_var(binding):
    """The variable a binding merely renames, or None."""
    value = binding.value
    if not isinstance(value, Var):
        return None
    if isinstance(binding, MatchCast) and not struct_info_equal(value.struct_info,
                                                                 binding.struct_info):
        return None
    return value


def _output_renames(block: DataflowBlock) -> dict:
    """{dataflow var: the output var it is copied to}, for ``gv = lv`` in ``block`` where
    ``lv`` is bound in the block (following chains ``lv1 = lv0; gv = lv1``)."""
    bound, alias, renames = set(), {}, {}
    for binding in block.bindings:
        source = _aliased_var(binding)
        if source is not None:
            root = alias.get(source, source)
            if isinstance(binding.var, DataflowVar):
                alias[binding.var] = root
                continue
            if isinstance(root, DataflowVar) and root in bound and root not in renames \
                    and struct_info_equal(root.struct_info, binding.var.struct_info):
                renames[root] = binding.var
                continue
        bound.add(binding.var)
    return renames


class _Canonicalizer(ExprMutator):
    def __init__(self, mod):
        super().__init__(mod)
        self.renames: dict = {}

    def visit_var_(self, var):
        while var in self.var_remap_:        # follow chains: c = b; b = a
            var = self.var_remap_[var]
        return var

    visit_dataflow_var_ = visit_var_

    def visit_binding_block(self, block):
        if isinstance(block, DataflowBlock):
            self.renames.update(_output_renames(block))
        return super().visit_binding_block(block)

    def visit_binding(self, binding):
        target = self.renames.get(binding.var)
        if target is not None:               # lv = value; ...; gv = lv  ->  gv = value
            self.var_remap_[binding.var] = target
            binding = binding.replace(var=target)
            if isinstance(binding, MatchCast):
                binding = binding.replace(struct_info=target.struct_info)
        source = _aliased_var(binding)
        source = self.visit_expr(source) if source is not None else None
        if source is binding.var:            # gv = gv, left by the renaming above
            return
        if source is not None and (isinstance(binding.var, DataflowVar)
                                   or not isinstance(source, DataflowVar)):
            self.var_remap_[binding.var] = source
            return
        self._emit(binding)

    def _emit(self, binding):
        value = self.visit_expr(binding.value)
        if value is binding.value:
            self.builder_.emit_normalized(binding)
            return
        var = binding.var
        if not struct_info_equal(self.builder_.struct_info_of(value), var.struct_info) \
                and isinstance(binding, VarBinding):
            var = type(var)(var.name_hint, self.builder_.struct_info_of(value))
            self.var_remap_[binding.var] = var
        self.builder_.emit_normalized(binding.replace(var=var, value=value))


__all__ = ["CanonicalizeBindings", "canonicalize_bindings"]
