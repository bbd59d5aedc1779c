"""StaticPlanBlockMemory: intermediate tensors share storage once their owners are dead.

After ``CallTIRRewrite`` every tensor a function makes is an explicit
``R.builtin.alloc_tensor``. This pass walks a function's top-level bindings in order,
learns when each allocation is last used (through aliases: ``lv0 = alloc``, tuples,
calls), and gives each allocation of a constant shape a *storage token*: a free token
of the same dtype and exactly the same size if one exists, else the smallest free one
that is larger (at most 16 times), else the largest smaller one (which grows), else a
new token. Each token becomes one ``R.memory.alloc_storage``, and the tensor a view of
it::

    storage = R.memory.alloc_storage(R.shape([512]), virtual_device_index=0,
                                     storage_scope="global", dtype="float32")
    alloc = R.memory.alloc_tensor(storage, R.shape([1, 128]), offset=0, dtype="float32")
    _ = cls.linear0(x, w0, b0, alloc)
    ...
    alloc2 = R.memory.alloc_tensor(storage, R.shape([1, 128]), offset=0, dtype="float32")

A kernel's output may also take the token of one of its inputs while that input is
still live, when the input dies at the call and the kernel reads each input element
only where it writes the same output element (``add``, ``relu``: see
:func:`inplace_outputs`); such a kernel loses ``tir.noalias``, since its two pointers
now overlap.

Allocations whose value can reach the function's result stay ``builtin.alloc_tensor``:
the caller keeps them, so the next call must not write into them. Allocations of a
symbolic shape, and those inside ``If`` arms, are left as they are too.
``relax.analysis.estimate_memory_usage`` reports what the plan saves.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...ir.dtype import dtype as as_dtype
from ...ir.module import IRModule
from ...ir.op import Op
from ...ir.transform import module_pass
from ...tir.analysis.inplace import can_write_in_place
from ...tir.function import PrimFunc
from ..analysis import free_vars
from ..expr import (BindingBlock, Call, DataflowBlock, Function, GlobalVar, SeqExpr, ShapeExpr,
                    Var, VarBinding)
from ..op import memory
from ..struct_info import ObjectStructInfo

MATCH_RANGE = 16
"""A free token at most this many times larger than a request may serve it (TVM's rule)."""


def StaticPlanBlockMemory():  # noqa: N802 -- TVM's spelling
    """The pass described in the module docstring.

    >>> mod = relax.transform.StaticPlanBlockMemory()(mod)      # doctest: +SKIP
    """
    def transform(mod: IRModule, ctx) -> IRModule:
        out, inplace_kernels = None, set()
        for gv, func in mod.items():
            if isinstance(func, Function):
                new, kernels = _plan(func, mod)
                inplace_kernels |= kernels
                if new is not func:
                    out = out or mod.copy()
                    out[gv] = new
        for gv in inplace_kernels:
            out[gv] = mod[gv].with_attr("tir.noalias", False)
        return out or mod

    return module_pass(transform, opt_level=0, name="StaticPlanBlockMemory")


def is_op_call(value, name: str) -> bool:
    return isinstance(value, Call) and isinstance(value.op, Op) and value.op.name == name


def static_alloc_bytes(value) -> tuple[int, str] | None:
    """``(bytes, dtype)`` of a ``builtin.alloc_tensor`` of constant shape, else None."""
    if not is_op_call(value, "relax.builtin.alloc_tensor"):
        return None
    shape = value.struct_info.static_shape()
    if shape is None:
        return None
    count = 1
    for extent in shape:
        count *= extent
    dtype = str(value.attrs.dtype)
    return count * as_dtype(dtype).itemsize, dtype


# -- liveness ------------------------------------------------------------------------------

@dataclass
class _Liveness:
    """Which allocations (binding indices) each variable may hold, and their last uses."""
    allocs: dict = field(default_factory=dict)        # binding index -> (bytes, dtype)
    holds: dict = field(default_factory=dict)         # Var -> frozenset of binding indices
    last_use: dict = field(default_factory=dict)      # binding index -> last binding index
    first_use: dict = field(default_factory=dict)     # binding index -> first later use
    escaping: set = field(default_factory=set)


def _analyze(bindings: list, result) -> _Liveness:
    live = _Liveness()
    for index, binding in enumerate(bindings):
        used = free_vars(binding.value)
        held = frozenset().union(*(live.holds.get(v, frozenset()) for v in used))
        for alloc in held:
            live.last_use[alloc] = index
            live.first_use.setdefault(alloc, index)
        plan = static_alloc_bytes(binding.value)
        if plan is not None:
            live.allocs[index] = plan
            # An allocation nobody reads is dead right after it is made.
            live.last_use[index] = index
            held = frozenset([index])
        elif _makes_fresh_value(binding.value):
            held = frozenset()
        live.holds[binding.var] = held
    for var in free_vars(result):
        live.escaping |= live.holds.get(var, frozenset())
    return live


def _makes_fresh_value(value) -> bool:
    """Values that never alias an argument (everything else might: a call may return its
    input, a tuple holds its fields, an If returns a value of either arm)."""
    return isinstance(value, ShapeExpr) or is_op_call(value, "relax.builtin.alloc_tensor")


# -- token assignment ----------------------------------------------------------------------

@dataclass
class _Token:
    dtype: str
    nbytes: int
    first_user: int
    busy_until: int = -1


def _choose(free: list, nbytes: int):
    """Exact size first, then the smallest larger (within MATCH_RANGE), then the largest
    smaller token; None when nothing fits."""
    exact = [t for t in free if t.nbytes == nbytes]
    if exact:
        return exact[0]
    larger = [t for t in free if nbytes < t.nbytes <= nbytes * MATCH_RANGE]
    if larger:
        return min(larger, key=lambda t: t.nbytes)
    smaller = [t for t in free if t.nbytes < nbytes]
    return max(smaller, key=lambda t: t.nbytes) if smaller else None


def assign_tokens(live: _Liveness, inplace: dict | None = None) -> dict:
    """{alloc binding index: token}, tokens reused once the tensors in them are dead.

    ``inplace`` ({output alloc index: input alloc index}, from :func:`inplace_outputs`)
    lets an output take its input's token although the input is still live."""
    tokens: list[_Token] = []
    assignment = {}
    # In program order: a token whose tensors died earlier is free for a later allocation.
    for index in sorted(live.allocs):
        if index in live.escaping:
            continue
        nbytes, dtype = live.allocs[index]
        free = [t for t in tokens if t.dtype == dtype and t.busy_until < index]
        token = _choose(free, nbytes)
        donor = assignment.get((inplace or {}).get(index))
        if donor is not None and donor.dtype == dtype and donor.nbytes >= nbytes:
            token = donor
        if token is None:
            token = _Token(dtype, nbytes, index)
            tokens.append(token)
        # A smaller token chosen for a larger request grows to fit it.
        token.nbytes = max(token.nbytes, nbytes)
        token.busy_until = live.last_use[index]
        assignment[index] = token
    return assignment


# -- in-place outputs ----------------------------------------------------------------------

def inplace_outputs(bindings: list, live: _Liveness, mod) -> dict:
    """{output alloc index: (input alloc index, kernel)} for kernel calls that may write
    their output over an input: the input is one planned allocation, passed once, last
    used at this call, and the kernel passes :func:`can_write_in_place`; the output
    (the last argument) is first used by this call."""
    pairs = {}
    for index, binding in enumerate(bindings):
        kernel = _called_kernel(binding.value, mod)
        output = _alloc_of(binding.value.args[-1], live) if kernel else None
        # An output used before this call already holds a value; only a fresh one may share.
        if output is None or live.first_use.get(output) != index:
            continue
        args = binding.value.args
        for position, arg in enumerate(args[:-1]):
            source = _alloc_of(arg, live)
            # An input passed twice would be read at its second position after being overwritten.
            if (source is not None and source not in live.escaping
                    and live.last_use[source] == index
                    and sum(source in live.holds.get(a, ()) for a in args) == 1
                    and can_write_in_place(mod[kernel], position, len(args) - 1)):
                pairs[output] = (source, kernel)
                break
    return pairs


def _called_kernel(value, mod):
    """The GlobalVar of the PrimFunc ``value`` calls, else None."""
    if (mod is None or not isinstance(value, Call) or not isinstance(value.op, GlobalVar)
            or not value.args or value.op not in mod):
        return None
    return value.op if isinstance(mod[value.op], PrimFunc) else None


def _alloc_of(arg, live: _Liveness):
    """The one allocation ``arg`` holds, else None (a parameter, a constant, or a value
    that may be one of several allocations)."""
    held = live.holds.get(arg, frozenset()) if isinstance(arg, Var) else frozenset()
    return next(iter(held)) if len(held) == 1 else None


# -- rewriting -----------------------------------------------------------------------------

def plan_function(func: Function, mod: IRModule | None = None) -> Function:
    """``func`` with its planned allocations rewritten (the same object if none); with
    ``mod``, outputs of its PrimFuncs may share storage with inputs (see the module
    docstring)."""
    return _plan(func, mod)[0]


def _plan(func: Function, mod) -> tuple:
    """``(planned func, GlobalVars of the kernels it calls in place)``."""
    body = func.body
    if not isinstance(body, SeqExpr):
        return func, set()
    bindings = [b for block in body.blocks for b in block.bindings]
    live = _analyze(bindings, body.body)
    pairs = inplace_outputs(bindings, live, mod)
    assignment = assign_tokens(live, {out: source for out, (source, _) in pairs.items()})
    if not assignment:
        return func, set()
    # An output shares its input's token only in place: the input is live at the output's
    # allocation, so no ordinary reuse could give them one token.
    kernels = {kernel for out, (source, kernel) in pairs.items()
               if out in assignment and assignment[out] is assignment.get(source)}
    storages: dict = {}
    rewritten = {}
    for index, token in sorted(assignment.items()):
        prefix = []
        # By id: _Token is a mutable dataclass, compared by value and not hashable.
        if id(token) not in storages:
            storage = Var("storage", ObjectStructInfo())
            storages[id(token)] = storage
            prefix.append(VarBinding(storage, memory.alloc_storage(
                [token.nbytes], storage_scope="global", dtype=token.dtype)))
        binding = bindings[index]
        shape, dtype = binding.value.args[0], binding.value.attrs.dtype
        view = memory.alloc_tensor(storages[id(token)], shape, offset=0, dtype=dtype)
        rewritten[binding] = prefix + [VarBinding(binding.var, view)]
    blocks = [_rewrite_block(block, rewritten) for block in body.blocks]
    return func.replace(body=SeqExpr(blocks, body.body)), kernels


def _rewrite_block(block, rewritten: dict):
    if not any(b in rewritten for b in block.bindings):
        return block
    out = []
    for binding in block.bindings:
        out.extend(rewritten.get(binding, [binding]))
    kind = DataflowBlock if isinstance(block, DataflowBlock) else BindingBlock
    return kind(out)


__all__ = ["MATCH_RANGE", "StaticPlanBlockMemory", "assign_tokens", "inplace_outputs",
           "plan_function", "static_alloc_bytes"]
