"""CombineParallelMatmul: sibling matmuls that read the same input become one matmul.

TensorRT's horizontal fusion, as in TVM: a wide matmul keeps the machine busier than
several narrow ones and reads ``x`` once. Before::

    with R.dataflow():
        lv0 = R.matmul(x, w0)                 # w0: (k, n0)
        lv1 = R.add(lv0, b0)
        lv2 = R.nn.relu(lv1)
        lv3 = R.matmul(x, w1)                 # w1: (k, n1)
        lv4 = R.add(lv3, b1)
        lv5 = R.nn.relu(lv4)
        ...

After::

    with R.dataflow():
        combined_weight = R.concat((w0, w1), axis=1)            # (k, n0 + n1)
        combined_matmul = R.matmul(x, combined_weight)
        combined_bias = R.concat((b0, b1), axis=0)
        combined_add = R.add(combined_matmul, combined_bias)
        combined_relu = R.nn.relu(combined_add)
        combined_split = R.split(combined_relu, indices_or_sections=[n0], axis=1)
        lv2 = combined_split[0]
        lv5 = combined_split[1]
        ...

Constant weights (and biases) are concatenated at compile time; other weights through
``R.concat``. The bias add is merged when every branch has one over the last axis with
the same leading shape, the activation (any one-input elementwise op) when every branch
applies the same one after that; otherwise only the common part is merged and the rest
stays per branch. Weights must have static shapes and equal batch dimensions.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir.module import IRModule
from ...ir.op import Op
from ...ir.transform import module_pass
from ..analysis import free_vars
from ..expr import (Call, Constant, DataflowBlock, DataflowVar, Function, If, SeqExpr, Tuple,
                    TupleGetItem, Var, VarBinding)
from ..expr_functor import ExprVisitor
from ..op import add, concat, matmul, split
from ..op.registry import OpPatternKind, is_call, op_pattern
from ..struct_info import TensorStructInfo, dim_equal, struct_info_equal


@module_pass(opt_level=0, name="CombineParallelMatmul")
class CombineParallelMatmul:
    """Combine ``matmul(x, w_i)`` (+ bias, + activation) sharing ``x`` into one matmul.

    Example
    -------
    >>> mod = relax.transform.CombineParallelMatmul()(mod)
    >>> mod = relax.transform.FoldConstant()(mod)    # folds concat of non-inline weights
    """

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        out = None
        for gv, func in mod.items():
            if not isinstance(func, Function):
                continue
            new = combine_parallel_matmul(func)
            if new is not func:
                out = out or mod.copy()
                out[gv] = new
        return out or mod


def combine_parallel_matmul(func: Function) -> Function:
    """``func`` with sibling matmuls combined; ``func`` itself when there are none."""
    body = _rewrite_seq(func.body, _use_counts(func))
    return func if body is func.body else func.replace(body=body)


def _rewrite_seq(seq, uses):
    if not isinstance(seq, SeqExpr):
        return seq
    blocks = [_rewrite_block(b, uses) for b in seq.blocks]
    if all(a is b for a, b in zip(blocks, seq.blocks)):
        return seq
    return SeqExpr(blocks, seq.body)


class _UseCounter(ExprVisitor):
    def __init__(self):
        self.counts: dict = {}

    def visit_var_(self, var):
        self.counts[var] = self.counts.get(var, 0) + 1

    visit_dataflow_var_ = visit_var_


def _use_counts(func: Function) -> dict:
    counter = _UseCounter()
    counter.visit_expr(func)
    return counter.counts


# -- branches: matmul, then optionally bias add and activation ------------------------------

@dataclass(frozen=True)
class _Step:
    kind: str              # "matmul", "bias" or "activation"
    binding: VarBinding
    operand: object = None  # the weight or the bias


@dataclass
class _Branch:
    steps: list
    width: int             # extent of the matmul output's last axis

    def end(self, depth: int) -> Var:
        return self.steps[depth - 1].binding.var


def _tensor(expr) -> TensorStructInfo | None:
    sinfo = expr.struct_info
    return sinfo if isinstance(sinfo, TensorStructInfo) and sinfo.dims is not None else None


def _matmul_step(binding):
    """The step of ``lv = matmul(x, w)`` when ``w`` has a static shape, else None."""
    value = binding.value
    if not isinstance(binding, VarBinding) or not is_call(value, "relax.matmul"):
        return None
    x, w = _tensor(value.args[0]), _tensor(value.args[1])
    if x is None or w is None or w.ndim < 2 or x.ndim < 1 or w.static_shape() is None:
        return None
    return _Step("matmul", binding, value.args[1])


def _next_step(var, bindings, users, uses, width):
    """The bias add or activation applied to ``var`` (its only use), or None."""
    if uses.get(var, 0) != 1 or len(users.get(var, ())) != 1:
        return None
    binding = bindings[users[var][0]]
    value = binding.value
    if not isinstance(binding, VarBinding) or not isinstance(value, Call):
        return None
    if is_call(value, "relax.add"):
        bias = value.args[1] if value.args[0] is var else value.args[0]
        sinfo = _tensor(bias)
        if bias is var or sinfo is None or sinfo.static_shape() is None or sinfo.ndim < 1 \
                or sinfo.static_shape()[-1] != width or sinfo.ndim > var.struct_info.ndim \
                or not struct_info_equal(value.struct_info, var.struct_info):
            return None
        return _Step("bias", binding, bias)
    if isinstance(value.op, Op) and len(value.args) == 1 and value.args[0] is var \
            and op_pattern(value.op) == OpPatternKind.ELEMWISE:
        return _Step("activation", binding)
    return None


def _branch(step, bindings, users, uses) -> _Branch:
    width = step.operand.struct_info.static_shape()[-1]
    steps = [step]
    # At most matmul, bias add and activation, each once.
    while len(steps) < 3:
        nxt = _next_step(steps[-1].binding.var, bindings, users, uses, width)
        if nxt is None or nxt.kind in [s.kind for s in steps]:
            break
        steps.append(nxt)
    return _Branch(steps, width)


def _group_key(step: _Step):
    x, w = step.binding.value.args
    shape = w.struct_info.static_shape()
    # Siblings combine only on the same input and equal weight shapes but for the last axis.
    return (id(x), w.struct_info.dtype, step.binding.value.attrs.get("out_dtype"),
            shape[:-1])


# -- how much of the branches can be merged --------------------------------------------------

def _same_step(steps: list) -> bool:
    first = steps[0]
    if any(s.kind != first.kind for s in steps):
        return False
    if first.kind == "bias":
        dims = [s.operand.struct_info.dims for s in steps]
        return all(len(d) == len(dims[0]) and all(dim_equal(a, b) for a, b in
                                                  zip(d[:-1], dims[0][:-1])) for d in dims)
    if first.kind == "activation":
        calls = [s.binding.value for s in steps]
        return all(c.op == calls[0].op and dict(c.attrs) == dict(calls[0].attrs) for c in calls)
    return True


def _independent(branches) -> list:
    """Branches that read no sibling's result. A weight that is a sibling's result leaves
    the branch out; a bias or activation step that reads one ends the branch before it,
    as in ``add(matmul(x, w0), matmul(x, w1))``: that add consumes both, it is no bias."""
    chain_vars = {s.binding.var for b in branches for s in b.steps}
    kept = [b for b in branches if not any(v in chain_vars for v in _vars(b.steps[0].operand))]
    for branch in kept:
        for depth, step in enumerate(branch.steps[1:], start=1):
            if step.operand is not None and any(v in chain_vars for v in _vars(step.operand)):
                del branch.steps[depth:]
                break
    return kept


def _common_depth(branches) -> int:
    depth = 1
    while all(len(b.steps) > depth for b in branches) and \
            _same_step([b.steps[depth] for b in branches]):
        depth += 1
    return depth


def _placement(branches, depth, position, users):
    """(insertion index, branches) such that every input is bound before the index and no
    branch result is read before it; branches that cannot wait are left out."""
    while len(branches) >= 2:
        inputs = [branches[0].steps[0].binding.value.args[0]]
        inputs += [s.operand for b in branches for s in b.steps[:depth] if s.operand is not None]
        at = 1 + max((position.get(v, -1) for e in inputs for v in _vars(e)), default=-1)
        # A branch whose result is read before the combined call can be placed stays out.
        ready = [b for b in branches if all(u >= at for u in users.get(b.end(depth), ()))]
        if len(ready) == len(branches):
            return at, branches
        branches = ready
    return None, branches


def _vars(expr):
    return [expr] if isinstance(expr, Var) else free_vars(expr)


# -- rewriting a block -------------------------------------------------------------------------

def _rewrite_block(block, uses):
    bindings = list(block.bindings)
    produced: set = set()
    while True:
        plan = _find_group(bindings, uses, produced)
        if plan is None:
            break
        at, branches, depth = plan
        combined = _combined_bindings(branches, depth, isinstance(block, DataflowBlock))
        produced.update(b.var for b in combined)
        merged = {id(s.binding) for b in branches for s in b.steps[:depth]}
        new = [b for b in bindings[:at] if id(b) not in merged] + combined
        bindings = new + [b for b in bindings[at:] if id(b) not in merged]
    if len(bindings) == len(block.bindings) and all(
            a is b for a, b in zip(bindings, block.bindings)):
        return _rewrite_nested(block, uses)
    return _rewrite_nested(type(block)(bindings), uses)


def _rewrite_nested(block, uses):
    """Blocks inside ``If`` arms are rewritten too."""
    new = []
    for binding in block.bindings:
        value = binding.value
        if isinstance(value, If):
            arms = _rewrite_seq(value.true_branch, uses), _rewrite_seq(value.false_branch, uses)
            if arms[0] is not value.true_branch or arms[1] is not value.false_branch:
                binding = binding.replace(value=If(value.cond, *arms))
        new.append(binding)
    return block if all(a is b for a, b in zip(new, block.bindings)) else type(block)(new)


def _find_group(bindings, uses, produced):
    """(insertion index, branches, merged depth) of the first combinable group, or None."""
    position = {b.var: k for k, b in enumerate(bindings)}
    users: dict = {}
    for k, binding in enumerate(bindings):
        for var in set(_vars(binding.value)):
            users.setdefault(var, []).append(k)
    groups: dict = {}
    for binding in bindings:
        # The combined matmul itself is not combined again.
        step = _matmul_step(binding) if binding.var not in produced else None
        if step is not None:
            groups.setdefault(_group_key(step), []).append(
                _branch(step, bindings, users, uses))
    for branches in groups.values():
        if len(branches) < 2:
            continue
        branches = _independent(branches)
        if len(branches) < 2:
            continue
        depth = _common_depth(branches)
        at, ready = _placement(branches, depth, position, users)
        if at is not None:
            return at, ready, depth
    return None


def _concat_last_axis(operands, emit, name):
    axis = operands[0].struct_info.ndim - 1
    # Constants are joined now, at compile time; others by an R.concat at run time.
    if all(isinstance(o, Constant) for o in operands):
        return Constant(np.concatenate([o.data.numpy() for o in operands], axis=axis))
    return emit(concat(Tuple(operands), axis=axis), name)


def _combined_bindings(branches, depth, dataflow: bool) -> list:
    kind = DataflowVar if dataflow else Var
    bindings: list = []

    def emit(value, name):
        var = kind(name, value.struct_info)
        bindings.append(VarBinding(var, value))
        return var

    first = branches[0].steps[0].binding.value
    weight = _concat_last_axis([b.steps[0].operand for b in branches], emit, "combined_weight")
    out = emit(matmul(first.args[0], weight, first.attrs.get("out_dtype")), "combined_matmul")
    for k in range(1, depth):
        step = branches[0].steps[k]
        if step.kind == "bias":
            bias = _concat_last_axis([b.steps[k].operand for b in branches], emit, "combined_bias")
            out = emit(add(out, bias), "combined_add")
        else:
            op = step.binding.value.op
            out = emit(Call(op, [out], step.binding.value.attrs),
                       "combined_" + op.name.rsplit(".", 1)[-1])
    bounds = np.cumsum([b.width for b in branches])[:-1]
    parts = emit(split(out, [int(i) for i in bounds], axis=out.struct_info.ndim - 1),
                 "combined_split")
    for index, branch in enumerate(branches):
        bindings.append(VarBinding(branch.end(depth), TupleGetItem(parts, index)))
    return bindings


__all__ = ["CombineParallelMatmul", "combine_parallel_matmul"]
