"""ConvertLayout: convolutions in NHWC (channels last), and the ops between them with them.

TVM's pass of the same name, for one layout change: ``relax.nn.conv2d`` from NCHW data
and OIHW weights to NHWC data and HWIO weights. Ops that do not care about the layout
follow their input into NHWC (elementwise and broadcast ops, whose constant operands are
transposed here; max, average and adaptive average pooling; a concatenation of
channels; batch norm and local response normalization, along the channel axis), so a chain of convolutions
stays channels last, and a ``permute_dims`` is emitted only where a value enters the chain
or where an op outside it (a reshape, a matmul) reads one::

    # before                                     # after ConvertLayout({"relax.nn.conv2d": ["NHWC", "HWIO"]})
    lv0 = R.nn.conv2d(x, w0)                     lv = R.permute_dims(x, [0, 2, 3, 1])
    lv1 = R.add(lv0, b0)           # (1,C,1,1)   lv0 = R.nn.conv2d(lv, w0', data_layout="NHWC", kernel_layout="HWIO")
    lv2 = R.nn.relu(lv1)                         lv1 = R.add(lv0, b0')          # (1,1,1,C)
    lv3 = R.nn.conv2d(lv2, w1)                   lv2 = R.nn.relu(lv1)
    lv4 = R.reshape(lv3, (1, -1))                lv3 = R.nn.conv2d(lv2, w1', ...)
                                                 lv5 = R.permute_dims(lv3, [0, 3, 1, 2])
                                                 lv4 = R.reshape(lv5, (1, -1))

Constant weights and biases are transposed here (``w'``); a weight passed as an argument
gets a ``permute_dims``. Grouped convolutions stay NCHW.

Why: a convolution's register tile holds output channels in the vector lanes. In NCHW
its write-back transposes every tile (pixels become the contiguous axis), which LLVM
emits as about 800 instructions per 7 x 32 tile; in NHWC the tile is stored as it is.
Each ResNet-50 layer with its residual add and relu, weights packed at build time, on a
2-core Zen 4 (``benchmarks/models.py`` has the whole models), NCHW -> NHWC in us: 1x1
256->1024 at 14x14 511 -> 465, 1x1 512->2048 at 7x7 485 -> 461, 3x3 128->128 at 28x28
1085 -> 1039, 3x3 256->256 at 14x14 1049 -> 1029, 3x3 64->64 at 56x56 1061 -> 1039.
"""
from __future__ import annotations

import numpy as np

from ...ir.errors import IRError
from ...ir.module import IRModule
from ...ir.op import Op
from ...ir.transform import module_pass
from ..analysis import post_order_visit
from ..expr import (Call, Constant, DataflowVar, Function, Tuple, TupleGetItem, Var, VarBinding,
                    const)
from ..expr_functor import ExprMutator
from ..op import permute_dims
from ..op.registry import OpPatternKind, is_call, op_pattern
from ..struct_info import TensorStructInfo

TO_NHWC = (0, 2, 3, 1)
TO_NCHW = (0, 3, 1, 2)
# Ops that take their layout as an attribute and keep the others as they are.
_POOLS = ("relax.nn.max_pool2d", "relax.nn.avg_pool2d", "relax.nn.adaptive_avg_pool2d")


@module_pass(opt_level=0, name="ConvertLayout")
class ConvertLayout:
    """Convert ``relax.nn.conv2d`` to the layouts ``desired_layouts`` names (see the module
    docstring).

    Example
    -------
    >>> mod = relax.transform.ConvertLayout({"relax.nn.conv2d": ["NHWC", "HWIO"]})(mod)

    ``["NHWC", "default"]`` means the same; NHWC data with HWIO weights is the one
    conversion there is.
    """

    def __init__(self, desired_layouts: dict):
        unknown = sorted(set(desired_layouts) - {"relax.nn.conv2d"})
        if unknown:
            raise IRError(f"ConvertLayout: converts relax.nn.conv2d only, found {unknown}")
        layouts = list(desired_layouts.get("relax.nn.conv2d", ["NHWC", "HWIO"]))
        if len(layouts) == 1:
            layouts.append("default")
        data, kernel = layouts[:2]
        if data != "NHWC" or kernel not in ("HWIO", "default"):
            raise IRError(f"ConvertLayout: relax.nn.conv2d converts to ['NHWC', 'HWIO'] "
                          f"(or ['NHWC', 'default']), found {layouts}")
        self.desired_layouts = {"relax.nn.conv2d": ["NHWC", "HWIO"]}

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        return _convert_functions(mod, lambda func: True)


def _convert_functions(mod: IRModule, wanted) -> IRModule:
    """``mod`` with every Relax function that ``wanted(func)`` accepts converted."""
    out = None
    for gv, func in mod.items():
        if not isinstance(func, Function) or not wanted(func):
            continue
        new = _ChannelsLast(mod).visit_expr(func)
        if new is not func:
            out = out or mod.copy()
            out[gv] = new
    return out or mod


def _tensor4(expr) -> bool:
    sinfo = getattr(expr, "struct_info", None)
    return isinstance(sinfo, TensorStructInfo) and sinfo.ndim == 4 and sinfo.dims is not None


def _channels_last_constant(value: Constant) -> Constant | None:
    """A constant operand of a broadcast op, rearranged for NHWC data; None above rank 4."""
    array = value.data.numpy()
    if array.ndim == 0:
        return value
    if array.ndim > 4:
        return None
    # Right-aligned broadcasting: a (C, 1, 1) bias is (1, C, 1, 1) against NCHW data.
    array = array.reshape((1,) * (4 - array.ndim) + array.shape)
    return const(np.ascontiguousarray(array.transpose(TO_NHWC)))


class _ChannelsLast(ExprMutator):
    """Rewrites each binding it can into NHWC. ``nhwc`` maps an original variable to its
    NHWC value; such a variable's NCHW binding is emitted only when something reads it
    (``visit_var_``) or it leaves the dataflow block."""

    def __init__(self, mod):
        super().__init__(mod)
        self.nhwc: dict = {}          # original var -> var holding it in NHWC
        self.pending: dict = {}       # original var -> its NHWC var, NCHW form not emitted
        self.norm_tuples: dict = {}   # original batch norm var -> its NHWC batch norm's var

    # -- reading a value in either layout -------------------------------------------------
    def visit_var_(self, var):
        if var in self.pending:
            nhwc = self.pending.pop(var)
            value = self.builder_.normalize(permute_dims(nhwc, list(TO_NCHW)))
            new = type(var)(var.name_hint, self.builder_.struct_info_of(value))
            self.builder_.emit_normalized(VarBinding(new, value))
            self.var_remap_[var] = new
            return new
        if var in self.norm_tuples and var not in self.var_remap_:
            # A batch norm's tuple read whole: rebuilt with its output back in NCHW.
            tup = self.norm_tuples[var]
            out = self.builder_.emit(TupleGetItem(tup, 0))
            fields = [self.builder_.emit(permute_dims(out, list(TO_NCHW)))] + \
                [self.builder_.emit(TupleGetItem(tup, i)) for i in (1, 2)]
            value = self.builder_.normalize(Tuple(fields))
            new = type(var)(var.name_hint, self.builder_.struct_info_of(value))
            self.builder_.emit_normalized(VarBinding(new, value))
            self.var_remap_[var] = new
            return new
        return super().visit_var_(var)

    visit_dataflow_var_ = visit_var_

    def _as_nhwc(self, expr):
        """``expr`` (an original operand) in NHWC: its converted value, a transposed
        constant, or a ``permute_dims`` of the 4-D value; None when none applies."""
        if isinstance(expr, Var) and expr in self.nhwc:
            return self.nhwc[expr]
        if isinstance(expr, Constant):
            return _channels_last_constant(expr)
        if _tensor4(expr):
            nhwc = self.builder_.emit(permute_dims(self.visit_expr(expr), list(TO_NHWC)))
            if isinstance(expr, Var):
                self.nhwc[expr] = nhwc
            return nhwc
        return None

    # -- bindings ---------------------------------------------------------------------------
    def visit_binding(self, binding):
        value = binding.value
        converted = None
        if isinstance(binding, VarBinding) and is_call(value, "relax.nn.batch_norm"):
            if self._batch_norm(binding):
                return None
        elif isinstance(binding, VarBinding) and isinstance(value, TupleGetItem) and \
                value.tuple_value in self.norm_tuples:
            item = TupleGetItem(self.norm_tuples[value.tuple_value], value.index)
            if value.index != 0:            # a running statistic: one value per channel
                item = self.builder_.normalize(item)
                var = type(binding.var)(binding.var.name_hint, self.builder_.struct_info_of(item))
                self.builder_.emit_normalized(VarBinding(var, item))
                self.var_remap_[binding.var] = var
                return None
            converted = self.builder_.emit(item)
        elif isinstance(binding, VarBinding) and isinstance(value, Call) and \
                _tensor4(binding.var):
            converted = self._convert(value)
        if converted is None:
            return super().visit_binding(binding)
        self.nhwc[binding.var] = converted
        self.pending[binding.var] = converted
        # A value leaving the dataflow block (or any binding outside one) is needed as is.
        if not isinstance(binding.var, DataflowVar):
            self.visit_var_(binding.var)
        return None

    def _convert(self, call: Call):
        if is_call(call, "relax.nn.conv2d"):
            return self._conv2d(call)
        if any(is_call(call, name) for name in _POOLS):
            return self._pool(call)
        if is_call(call, "relax.concat"):
            return self._concat(call)
        if is_call(call, "relax.nn.lrn"):
            return self._channel_axis(call)
        if self._layout_free(call):
            return self._elementwise(call)
        return None

    def _conv2d(self, call: Call):
        a = call.attrs
        if a.get("data_layout", None) not in (None, "NCHW") or a.groups != 1 \
                or not (_tensor4(call.args[0]) and _tensor4(call.args[1])):
            return None
        weight = call.args[1]
        if isinstance(weight, Constant):
            weight = const(np.ascontiguousarray(weight.data.numpy().transpose(2, 3, 1, 0)))
        else:
            weight = self.builder_.emit(permute_dims(self.visit_expr(weight), [2, 3, 1, 0]))
        data = self._as_nhwc(call.args[0])
        attrs = dict(a, data_layout="NHWC", kernel_layout="HWIO")
        return self.builder_.emit(Call(call.op, [data, weight], attrs, call.sinfo_args))

    def _pool(self, call: Call):
        a = call.attrs
        source = call.args[0]
        if a.get("layout", None) not in (None, "NCHW") or not \
                (isinstance(source, Var) and source in self.nhwc):
            return None
        return self.builder_.emit(Call(call.op, [self.nhwc[source]], dict(a, layout="NHWC"),
                                       call.sinfo_args))

    def _channel_axis(self, call: Call):
        """An op normalizing along channels (axis 1) of a converted value, along axis 3."""
        source = call.args[0]
        if call.attrs.axis not in (1, -3) or not (isinstance(source, Var) and source in self.nhwc):
            return None
        args = [self.nhwc[source]] + [self.visit_expr(a) for a in call.args[1:]]
        return self.builder_.emit(Call(call.op, args, dict(call.attrs, axis=3), call.sinfo_args))

    def _batch_norm(self, binding) -> bool:
        """A batch norm of a converted value, along axis 3; its tuple's first field is
        read through ``TupleGetItem`` bindings (see ``visit_binding``)."""
        if not isinstance(binding.var, DataflowVar):
            return False
        converted = self._channel_axis(binding.value)
        if converted is None:
            return False
        self.norm_tuples[binding.var] = converted
        return True

    def _concat(self, call: Call):
        """A concatenation of channels (axis 1) with a converted field joins along axis 3."""
        fields = call.args[0]
        if call.attrs.axis not in (1, -3) or not isinstance(fields, Tuple) or \
                not all(_tensor4(f) for f in fields.fields) or \
                not any(isinstance(f, Var) and f in self.nhwc for f in fields.fields):
            return None
        joined = Tuple([self._as_nhwc(f) for f in fields.fields])
        return self.builder_.emit(Call(call.op, [joined], dict(call.attrs, axis=3),
                                       call.sinfo_args))

    def _layout_free(self, call: Call) -> bool:
        """An elementwise or broadcast op reading at least one converted value, every
        other operand a constant or 4-D."""
        # call_tir and calls of functions or packed functions are not ops of the registry.
        if not isinstance(call.op, Op) or \
                op_pattern(call.op) not in (OpPatternKind.ELEMWISE, OpPatternKind.BROADCAST):
            return False
        if not any(isinstance(arg, Var) and arg in self.nhwc for arg in call.args):
            return False
        return all(isinstance(arg, Constant) and arg.data.numpy().ndim <= 4 or _tensor4(arg)
                   for arg in call.args)

    def _elementwise(self, call: Call):
        args = [self._as_nhwc(arg) for arg in call.args]
        return self.builder_.emit(Call(call.op, args, call.attrs, call.sinfo_args))


# The default pipeline converts a function whose convolutions do at least this many
# multiply-adds (a few microseconds of work per call). Below it the permutes the
# conversion adds at its borders, each a kernel call, cost more than the transposing
# write-backs save (the digits CNN: 8x8 images).
MIN_CONV_MACS = 10_000_000


@module_pass(opt_level=0, name="ConvertLayoutForTarget")
class ConvertLayoutForTarget:
    """ConvertLayout as the default pipelines use it: on a CPU target (the enclosing
    ``with target``, else the host), each function whose convolutions all convert (none
    grouped) and do at least ``MIN_CONV_MACS`` multiply-adds gets them in NHWC. A grouped
    convolution stays NCHW, with a permute on each side: ShuffleNet from the onnx wheel,
    whose every other convolution is grouped, ran 2.95 -> 3.11 ms converted (2-core Zen 4).
    ``PassContext(disabled_pass=["ConvertLayoutForTarget"])`` keeps NCHW."""

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        from ...target import Target
        target = Target.current() or Target("llvm")
        if target.kind.name != "llvm":
            return mod
        return _convert_functions(mod, _worth_converting)


def _worth_converting(func: Function) -> bool:
    convs = []
    post_order_visit(func, lambda e: convs.append(e) if is_call(e, "relax.nn.conv2d") else None)
    if not convs:
        return False
    macs = 0
    for conv in convs:
        if conv.attrs.groups != 1 or conv.attrs.get("data_layout", None) not in (None, "NCHW"):
            return False
        out, weight = conv.struct_info.dims, conv.args[1].struct_info.dims
        if out is None or weight is None or not all(hasattr(d, "value") for d in (*out, *weight)):
            return False
        macs += int(np.prod([d.value for d in out])) * int(np.prod([d.value for d in weight[1:]]))
    return macs >= MIN_CONV_MACS
