"""FuseOps: group the ``call_tir`` bindings of dataflow blocks into primitive functions.

Which bindings go together is decided by TVM's post-dominator partition over the
``"op_pattern"`` of each called PrimFunc (run AnnotateTIROpPattern first; see
:mod:`~mlcbench.relax.transform.graph_partitioner` for the rules). Each group of two or
more bindings becomes a private Relax function with ``"Primitive": True``, named after
the PrimFuncs it calls, and ``main`` calls it instead. FuseTIR then turns each such
function into one PrimFunc.

Before::

    with R.dataflow():
        lv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((1, 128), "float32"))
        lv1 = R.call_tir(cls.add, (lv, b), out_sinfo=R.Tensor((1, 128), "float32"))
        lv2 = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((1, 128), "float32"))
        gv = lv2
        R.output(gv)

After::

    @R.function(private=True)
    def fused_matmul_add_relu(x: R.Tensor((1, 784), "float32"), w: ..., b: ...):
        R.func_attr({"Primitive": True})
        with R.dataflow():
            lv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((1, 128), "float32"))
            lv1 = R.call_tir(cls.add, (lv, b), out_sinfo=R.Tensor((1, 128), "float32"))
            lv2 = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((1, 128), "float32"))
            R.output(lv2)
        return lv2

    # in main
    lv2: R.Tensor((1, 128), dtype="float32") = cls.fused_matmul_add_relu(x, w, b)

Constants used by a group become parameters of its function (passed by the caller);
equal groups share one function. ``relax.transform.fusion_report(mod)`` tells, edge by
edge, why bindings were or were not fused.
"""
from __future__ import annotations

from ...ir.module import IRModule
from ...ir.transform import module_pass
from ..analysis import free_vars, post_order_visit
from ..block_builder import BlockBuilder
from ..expr import (Call, Constant, DataflowBlock, DataflowVar, Function, SeqExpr, Tuple,
                    TupleGetItem, Var, VarBinding)
from ..expr_functor import ExprMutator
from ..struct_info import TupleStructInfo
from .graph_partitioner import (MAX_FUSE_DEPTH, PRIMITIVE, call_tir_callee, is_primitive,
                                partition_module)

MAX_DEPTH_CONFIG = "relax.FuseOps.max_depth"
MAX_NAME_LENGTH = 80


def FuseOps(fuse_opt_level: int = -1):  # noqa: N802 -- TVM's spelling
    """Fuse ``call_tir`` bindings into ``"Primitive"`` functions (see module docstring).

    Parameters
    ----------
    fuse_opt_level
        0 turns fusion off; -1 (default) takes the ``opt_level`` of the current
        ``PassContext``. ``PassContext(config={"relax.FuseOps.max_depth": n})`` caps the
        number of ops in one group (default 256).

    >>> mod = relax.transform.LegalizeOps()(mod)
    >>> mod = relax.transform.AnnotateTIROpPattern()(mod)
    >>> mod = relax.transform.FuseOps()(mod)
    >>> [gv.name_hint for gv in mod.get_global_vars() if gv.name_hint.startswith("fused")]
    ['fused_matmul_add_relu']
    """
    def transform(mod: IRModule, ctx) -> IRModule:
        opt_level = ctx.opt_level if fuse_opt_level < 0 else fuse_opt_level
        max_depth = int(ctx.config.get(MAX_DEPTH_CONFIG, MAX_FUSE_DEPTH))
        graph, partitioner = partition_module(mod, opt_level, max_depth)
        return _Fusor(mod, graph, partitioner).run()

    return module_pass(transform, opt_level=0, name="FuseOps")


def fused_function_name(bindings) -> str:
    """``fused_`` and the names of what the bindings call: ``fused_matmul_add_relu``."""
    parts = []
    for binding in bindings:
        value = binding.value
        callee = call_tir_callee(value)
        if callee is not None:
            parts.append(callee.name_hint)
        elif isinstance(value, Call):
            name = getattr(value.op, "name", None) or getattr(value.op, "name_hint", "call")
            parts.append(name.split(".")[-1].removeprefix("fused_"))
    name = "_".join(["fused"] + parts)
    return name if len(name) <= MAX_NAME_LENGTH else name[:MAX_NAME_LENGTH].rstrip("_")


class _Fusor:
    """Rewrites each dataflow block: one call per group of the partition."""

    def __init__(self, mod: IRModule, graph, partitioner):
        self.mod, self.graph, self.partitioner = mod, graph, partitioner
        self.builder = BlockBuilder(mod)

    def run(self) -> IRModule:
        updates = {}
        for gv, func in self.mod.items():
            if isinstance(func, Function) and not is_primitive(func):
                new_func = self.fuse_function(func)
                if new_func is not func:
                    updates[gv] = new_func
        if not updates:
            return self.mod
        out = self.builder.get()
        for gv, func in updates.items():
            out[gv] = func
        return out

    def fuse_function(self, func: Function) -> Function:
        body = func.body
        if not isinstance(body, SeqExpr):
            return func
        blocks = [self.fuse_block(b) if isinstance(b, DataflowBlock) else b for b in body.blocks]
        if all(a is b for a, b in zip(blocks, body.blocks)):
            return func
        return func.replace(body=SeqExpr(blocks, body.body))

    def fuse_block(self, block: DataflowBlock) -> DataflowBlock:
        units = self._units(block)
        if all(len(unit) == 1 for unit in units):
            return block
        used_by = _uses(block)
        bindings = []
        for unit in _in_dependency_order(units, used_by):
            if len(unit) == 1:
                bindings.extend(unit)
            else:
                bindings.extend(self._call_group(unit, used_by))
        return DataflowBlock(bindings)

    def _units(self, block) -> list:
        """The block's bindings grouped by partition group, in order of first binding."""
        units: dict[int, list] = {}
        for binding in block.bindings:
            root = self.partitioner.root_of(self.graph.node_of(binding.var))
            units.setdefault(id(root), []).append(binding)
        return list(units.values())

    def _call_group(self, unit, used_by) -> list:
        """Bindings that call the group's new function and unpack its results."""
        peeled, unit = _peel_tuple_items(unit)
        if len(unit) < 2:
            return peeled + unit
        members = {b.var for b in unit}
        outputs = [b.var for b in unit if not isinstance(b.var, DataflowVar)
                   or any(user not in members for user in used_by.get(b.var, ()))]
        if not outputs:
            return peeled + unit         # dead code: left for DeadCodeElimination
        inputs = _inputs_of(unit, members)
        func = _group_function(unit, inputs, outputs)
        gvar = self.builder.add_func(func, fused_function_name(unit))
        call = Call(gvar, inputs)
        if len(outputs) == 1:
            return peeled + [VarBinding(outputs[0], call)]
        packed = DataflowVar("lv", TupleStructInfo([v.struct_info for v in outputs]))
        return peeled + [VarBinding(packed, call)] + [
            VarBinding(var, TupleGetItem(packed, k)) for k, var in enumerate(outputs)]


def _peel_tuple_items(unit):
    """``(items, rest)``: the group's ``t[i]`` bindings of a tuple made outside the group
    stay in the caller, so the group's parameters are tensors (FuseTIR needs them so),
    as TVM's FuseOps passes such fields one by one."""
    members, peeled, rest = set(), [], []
    for binding in unit:
        value = binding.value
        if isinstance(value, TupleGetItem) and value.tuple_value not in members:
            peeled.append(binding)
        else:
            rest.append(binding)
            members.add(binding.var)
    return peeled, rest


def _uses(block) -> dict:
    """``{var: [binding vars of the block that use it]}``."""
    used_by: dict = {}
    for binding in block.bindings:
        for var in free_vars(binding.value):
            used_by.setdefault(var, []).append(binding.var)
    return used_by


def _in_dependency_order(units, used_by) -> list:
    """Units ordered so each comes after the units it uses, else in block order (a
    group's call stands where all of its inputs exist)."""
    unit_of = {b.var: k for k, unit in enumerate(units) for b in unit}
    deps = [[] for _ in units]
    for var, users in used_by.items():
        if var in unit_of:
            for user in users:
                k, producer = unit_of[user], unit_of[var]
                if k != producer and producer not in deps[k]:
                    deps[k].append(producer)
    order, visited = [], set()
    for start in range(len(units)):
        if start in visited:
            continue
        visited.add(start)
        # Sorted, so units keep block order wherever the dependencies leave a choice.
        stack = [(start, iter(sorted(deps[start])))]
        while stack:
            current, pending = stack[-1]
            following = next(pending, None)
            if following is None:
                stack.pop()
                order.append(units[current])
            elif following not in visited:
                visited.add(following)
                stack.append((following, iter(sorted(deps[following]))))
    return order


def _inputs_of(unit, members) -> list:
    """Variables and constants the unit reads from outside, in order of first use."""
    inputs: list = []

    def note(expr):
        # Identity, not ==: each distinct variable or constant becomes its own parameter.
        if isinstance(expr, (Var, Constant)) and expr not in members and \
                not any(expr is seen for seen in inputs):
            inputs.append(expr)

    for binding in unit:
        post_order_visit(binding.value, note)
    return inputs


class _Renamer(ExprMutator):
    """Replaces variables and constants by identity (``{id(old): new}``)."""

    def __init__(self, mapping: dict):
        super().__init__()
        self.mapping = mapping

    def visit_var_(self, var):
        return self.mapping.get(id(var), var)

    visit_dataflow_var_ = visit_var_

    def visit_constant_(self, const):
        return self.mapping.get(id(const), const)


def _group_function(unit, inputs, outputs) -> Function:
    params, mapping, constants = [], {}, 0
    for item in inputs:
        if isinstance(item, Var):
            name = item.name_hint
        else:
            name, constants = f"param_{constants}", constants + 1
        param = Var(name, item.struct_info)
        params.append(param)
        mapping[id(item)] = param
    renamer = _Renamer(mapping)
    bindings = []
    for binding in unit:
        value = renamer.visit_expr(binding.value)
        # Results leave the group's dataflow block, so they must be non-dataflow Vars.
        kind = Var if binding.var in outputs else DataflowVar
        var = kind(binding.var.name_hint, binding.var.struct_info)
        mapping[id(binding.var)] = var
        bindings.append(VarBinding(var, value))
    results = [mapping[id(v)] for v in outputs]
    body = results[0] if len(results) == 1 else Tuple(results)
    return Function(params, SeqExpr([DataflowBlock(bindings)], body), attrs={PRIMITIVE: True})


__all__ = ["FuseOps", "fused_function_name"]
