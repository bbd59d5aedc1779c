"""FoldBatchnormToConv2D: an inference batch norm after a convolution with constant
weights becomes part of that convolution's weight and bias.

Before (weights are constants: an imported model, or ``BindParams`` then ``FoldConstant``)::

    with R.dataflow():
        lv0 = R.nn.conv2d(x, R.const(w))                   # w: (O, I, kh, kw)
        lv1 = R.add(lv0, R.const(b))                       # optional bias, (1, O, 1, 1)
        lv2 = R.nn.batch_norm(lv1, gamma, beta, mean, var, axis=1, epsilon=eps)
        gv = lv2[0]
        R.output(gv)

After, with ``s = gamma / sqrt(var + eps)`` per output channel::

    with R.dataflow():
        lv = R.nn.conv2d(x, R.const(w * s[:, None, None, None]))
        gv = R.add(lv, R.const((beta + (b - mean) * s).reshape(1, O, 1, 1)))
        R.output(gv)

The batch norm's kernel (or, fused, its epilogue of a subtract, a divide by a square root,
a multiply and an add per element) is gone; what is left is the bias add every convolution
with a bias has. The batch norm's other two outputs are its running statistics, so
``lv2[1]`` and ``lv2[2]`` become those constants.

A batch norm is folded only when all of these hold, and is left as it is otherwise: its
four parameters are constants and it normalizes axis 1 of 4-D data; its input is a
``conv2d`` with a constant floating-point weight (and the data's dtype as output dtype),
or such a ``conv2d`` plus a constant that varies only along the channel axis; and the
convolution (and the bias add) is used by nothing else, so folding does not compute the
convolution twice.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir.module import IRModule
from ...ir.transform import module_pass
from ..expr import (Call, Constant, DataflowVar, Function, Tuple, TupleGetItem, Var, VarBinding,
                    const)
from ..expr_functor import ExprMutator, ExprVisitor
from ..op import add
from ..op.registry import is_call
from ..struct_info import TensorStructInfo


@module_pass(opt_level=0, name="FoldBatchnormToConv2D")
class FoldBatchnormToConv2D:
    """Fold ``batch_norm(conv2d(x, W) [+ b])`` with constant parameters into
    ``conv2d(x, W') + b'`` (see the module docstring).

    Example
    -------
    >>> mod = relax.transform.BindParams("main", params)(mod)
    >>> mod = relax.transform.FoldConstant()(mod)         # the conv bias reshape, ...
    >>> mod = relax.transform.FoldBatchnormToConv2D()(mod)
    """

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        out = None
        for gv, func in mod.items():
            if not isinstance(func, Function):
                continue
            new = fold_batchnorm_to_conv2d(func, mod)
            if new is not func:
                out = out or mod.copy()
                out[gv] = new
        return out or mod


def fold_batchnorm_to_conv2d(func: Function, mod: IRModule | None = None) -> Function:
    """``func`` with every foldable batch norm folded; ``func`` itself when none is."""
    matches = find_conv_batchnorm(func)
    if not matches:
        return func
    return _Rewriter(mod, matches).visit_expr(func)


@dataclass(frozen=True)
class ConvBatchnorm:
    """One foldable chain: ``conv`` (a conv2d call with a constant weight), the per-channel
    ``bias`` added to it (None without one), the ``batch_norm`` call, and the variables
    of the bindings the folded chain replaces (the convolution's, the bias add's)."""
    conv: Call
    bias: np.ndarray | None
    batch_norm: Call
    replaced: tuple

    def folded_parameters(self):
        """(W', b'): the scaled weight and the per-channel bias, in the weight's dtype."""
        # Folded in float64 and rounded once, at the end, to the weight's dtype.
        gamma, beta, mean, var = (c.data.numpy().astype("float64")
                                  for c in self.batch_norm.args[1:])
        attrs = self.batch_norm.attrs
        # Without scale or center the batch norm ignores gamma or beta, and so does the fold.
        gamma = gamma if attrs.scale else np.ones_like(gamma)
        beta = beta if attrs.center else np.zeros_like(beta)
        weight = self.conv.args[1].data.numpy()
        scale = gamma / np.sqrt(var + attrs.epsilon)
        bias = np.zeros_like(mean) if self.bias is None else self.bias.astype("float64")
        new_weight = weight.astype("float64") * scale[:, None, None, None]
        new_bias = beta + (bias - mean) * scale
        return (new_weight.astype(weight.dtype),
                new_bias.reshape(1, -1, 1, 1).astype(weight.dtype))


def find_conv_batchnorm(func: Function) -> dict:
    """{batch norm's variable: ConvBatchnorm} for each batch norm of ``func`` that folds."""
    values = _bound_values(func)
    uses = _use_counts(func)
    matches = {}
    for var, value in values.items():
        if is_call(value, "relax.nn.batch_norm"):
            match = _match_chain(value, values, uses)
            if match is not None:
                matches[var] = match
    return matches


def _match_chain(bn: Call, values: dict, uses: dict):
    data = bn.args[0]
    sinfo = data.struct_info
    if not (isinstance(sinfo, TensorStructInfo) and sinfo.ndim == 4
            and bn.attrs.axis in (1, -3) and all(isinstance(a, Constant) for a in bn.args[1:])):
        return None
    # Another reader of the convolution would need it unscaled: folding would compute it twice.
    if not _single_use(data, uses):
        return None
    producer, bias, replaced = values.get(data), None, (data,)
    if is_call(producer, "relax.add"):
        conv_var, bias = _split_bias_add(producer)
        if conv_var is None or not _single_use(conv_var, uses):
            return None
        producer, replaced = values.get(conv_var), (conv_var, data)
    if not _is_foldable_conv(producer):
        return None
    channels = producer.args[1].data.shape[0]
    if bias is not None:
        bias = _per_channel(bias, channels)
        if bias is None:
            return None
    # One statistic per output channel, or the scale cannot be folded into the weight rows.
    if any(a.data.shape != (channels,) for a in bn.args[1:]):
        return None
    return ConvBatchnorm(producer, bias, bn, replaced)


def _split_bias_add(add: Call):
    """(the non-constant operand as a Var, the constant operand's array) of a bias add."""
    lhs, rhs = add.args
    if isinstance(rhs, Constant) and isinstance(lhs, Var):
        return lhs, rhs.data.numpy()
    if isinstance(lhs, Constant) and isinstance(rhs, Var):
        return rhs, lhs.data.numpy()
    return None, None


def _per_channel(bias: np.ndarray, channels: int):
    """``bias`` as one value per output channel, or None when, broadcast against NCHW
    output, it varies along another axis (a (O,) bias would vary along W)."""
    if bias.ndim > 4:
        return None
    shape = (1,) * (4 - bias.ndim) + bias.shape
    if shape[0] != 1 or shape[2:] != (1, 1) or shape[1] not in (1, channels):
        return None
    return np.broadcast_to(bias.reshape(-1), (channels,))


def _is_foldable_conv(value) -> bool:
    if not is_call(value, "relax.nn.conv2d") or not isinstance(value.args[1], Constant):
        return False
    weight = value.args[1].data.numpy()
    data_dtype = getattr(value.args[0].struct_info, "dtype", None)
    out_dtype = value.attrs.out_dtype or data_dtype
    # A scaled integer weight would round; the folded bias takes the weight's dtype, so all agree.
    return weight.dtype.kind == "f" and str(weight.dtype) == out_dtype == data_dtype


def _single_use(var, uses) -> bool:
    return isinstance(var, Var) and uses.get(var, 0) == 1


class _BindingCollector(ExprVisitor):
    def __init__(self):
        self.values: dict = {}
        self.uses: dict = {}

    def visit_binding(self, binding) -> None:
        if isinstance(binding, VarBinding):
            self.values[binding.var] = binding.value
        super().visit_binding(binding)

    def visit_var_(self, var) -> None:
        self.uses[var] = self.uses.get(var, 0) + 1

    visit_dataflow_var_ = visit_var_


def _collect(func: Function) -> _BindingCollector:
    collector = _BindingCollector()
    collector.visit_expr(func)
    return collector


def _bound_values(func: Function) -> dict:
    return _collect(func).values


def _use_counts(func: Function) -> dict:
    return _collect(func).uses


class _Rewriter(ExprMutator):
    """Replaces each matched chain, at its batch norm's binding, by the folded conv2d and
    bias add; reads of the batch norm's tuple become the folded output or the constants."""

    def __init__(self, mod, matches: dict):
        super().__init__(mod)
        self.matches = matches
        self.replaced = {v for m in matches.values() for v in m.replaced}
        self.outputs: dict = {}       # batch norm's variable -> its three outputs

    def visit_var_(self, var):
        if var in self.outputs:
            return Tuple(list(self.outputs[var]))
        return super().visit_var_(var)

    visit_dataflow_var_ = visit_var_

    def visit_tuple_getitem_(self, item):
        if isinstance(item.tuple_value, Var) and item.tuple_value in self.outputs:
            return self.outputs[item.tuple_value][item.index]
        return super().visit_tuple_getitem_(item)

    def visit_binding(self, binding):
        if binding.var in self.replaced:
            return
        match = self.matches.get(binding.var)
        if match is not None:
            self.outputs[binding.var] = self._emit_folded(match)
            return
        value = self.visit_expr(binding.value)
        if isinstance(binding.value, TupleGetItem) and isinstance(value, (Var, Constant)) \
                and (isinstance(binding.var, DataflowVar) or not isinstance(value, DataflowVar)):
            self.var_remap_[binding.var] = value     # an alias of a folded output: dropped
            return
        super().visit_binding(binding)

    def _emit_folded(self, match: ConvBatchnorm) -> tuple:
        weight, bias = match.folded_parameters()
        conv = match.conv
        data = self.visit_expr(conv.args[0])
        folded = self.builder_.emit(Call(conv.op, [data, const(weight)], conv.attrs,
                                         conv.sinfo_args))
        out = self.builder_.emit(add(folded, const(bias)))
        # In inference the running mean and variance pass through unchanged.
        return out, match.batch_norm.args[3], match.batch_norm.args[4]


__all__ = ["ConvBatchnorm", "FoldBatchnormToConv2D", "find_conv_batchnorm",
           "fold_batchnorm_to_conv2d"]
