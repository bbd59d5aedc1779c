"""SplitWeightPacking: a scheduled kernel that packs a constant weight into panels on
every call gets the packed weight instead, packed once at build time.

The default matmul and convolution schedules copy the operand the vector loop walks into
panels (``mlcbench.dlight.cpu.packing``) at the head of the kernel. For a weight that
is a constant of the model, that copy gives the same result on every call: a
128x1024x1024 dense spends about a fifth of its time on it, ResNet-50's 7x7 layers a
quarter to a half, measured on a 2-core Zen host (``benchmarks/fold_weights.py`` times
dense layers and ResNet-50 with and without it). Before, with ``dense`` a scheduled
PrimFunc::

    # dense(x, w, out): w_global = T.alloc_buffer((32, 256, 16))
    #                   for ...: w_global[j // 16, k, j % 16] = w[j, k]   # packing
    #                   for ...: out[i, j] += x[i, k] * w_global[j // 16, k, j % 16]
    gv = R.call_tir(cls.dense, (x, R.const(w)), R.Tensor((128, 512), "float32"))

After SplitWeightPacking::

    # dense_pack_w(w, w_global): the packing loops alone
    # dense(x, w_global, out):   the rest, reading the packed parameter
    lv = R.call_tir(cls.dense_pack_w, (R.const(w),), R.Tensor((32, 256, 16), "float32"))
    gv = R.call_tir(cls.dense, (x, lv), R.Tensor((128, 512), "float32"))

and ``FoldConstant`` computes ``lv`` at build time. :func:`prepack_weights` (the pass
PrepackWeights, which ``relax.build``'s default pipeline runs after ``zero``) does it
all at once: the kernels that receive constants are scheduled (tuning records first,
else the default rules), split, and every packing is compiled into one library and run
on its constant then and there.

A parameter is split off only when the kernel reads it in exactly one loop nest, that
nest writes one buffer the kernel allocates, and every call of the kernel passes a
constant for it. The nest is either the first of the kernel's body or the first thing
inside the loops of its first nest: a weight packed a panel per parallel task (dlight's
``pack_in_tasks``), whose copies the packing function runs within the same loops, ahead
of the products.
"""
from __future__ import annotations

from ...ir.module import GlobalVar, IRModule
from ...ir.op import Op
from ...ir.transform import module_pass
from ...runtime import ndarray
from ...tir.function import PrimFunc
from ...tir.functor import post_order_visit
from ...arith import IterMapLevel, detect_iter_map
from ...tir.stmt import Block, BlockRealize, BufferStore, For, SeqStmt, seq
from ...tir.expr import Var as TirVar
from ..expr import Call, Constant, Function, Tuple
from ..expr_functor import ExprMutator, ExprVisitor
from ..op.base import call_tir
from ..struct_info import TensorStructInfo


@module_pass(opt_level=0, name="SplitWeightPacking")
class SplitWeightPacking:
    """Split the packing of constant weights out of scheduled kernels (module docstring).

    Example
    -------
    >>> mod = relax.transform.SplitWeightPacking()(mod)   # kernels already scheduled
    >>> mod = relax.transform.FoldConstant()(mod)          # the packing runs here, once
    """

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        splits = find_splits(mod, {gv: mod[gv] for gv in constant_arguments(mod)})
        if not splits:
            return mod
        out = mod.copy()
        packs = {}
        for gv, (param, pack, kernel) in splits.items():
            out[gv] = kernel
            pack_gv = GlobalVar(f"{gv.name_hint}_pack_{param}")
            out[pack_gv] = pack
            packs[gv] = (param, _packing_call(pack_gv, pack))
        return _rewrite_calls(out, packs)


@module_pass(opt_level=0, name="PrepackWeights")
class PrepackWeights:
    """:func:`prepack_weights` as a pass, for the target of the enclosing ``with target``
    (else the host) and the schedule lookup ``relax.build`` uses; the last pass before
    ``vm_lowering`` in the ``default`` pipeline. ``PassContext(disabled_pass=
    ["PrepackWeights"])`` keeps the packing in the kernels."""

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        from ...target import Target
        from ..vm_build import resolve_schedule_lookup
        target = Target.current() or Target("llvm")
        return prepack_weights(mod, target, resolve_schedule_lookup())


def find_splits(mod: IRModule, scheduled: dict) -> dict:
    """{kernel's GlobalVar: (parameter, pack, kernel)} for the kernels of ``scheduled``
    (scheduled versions of ``mod``'s kernels) that pack a parameter every call of them
    in ``mod`` gives a constant."""
    splits = {}
    for gv, params in constant_arguments(mod).items():
        found = first_split(scheduled[gv], params) if gv in scheduled else None
        if found is not None:
            splits[gv] = found
    return splits


def first_split(func: PrimFunc, params):
    """``(param, pack, kernel)`` of :func:`split_packing` for the lowest index of
    ``params`` whose packing splits off, else None: one packed parameter per kernel,
    chosen the same way wherever it is split (the build, a tuner's measurement)."""
    for param in sorted(params):
        found = split_packing(func, param)
        if found is not None:
            return (param, *found)
    return None


def prepack_weights(mod: IRModule, target, schedule_lookup=None) -> IRModule:
    """``mod`` (after the ``zero`` pipeline) with the kernels that receive constants
    scheduled (by ``schedule_lookup``, else the default rules; the build keeps these
    schedules) and, where a kernel packs a constant weight, given it already packed:
    all packings run at once in one compiled library, here. ``mod`` itself when no
    kernel receives a constant."""
    from ...dlight.cpu.gemv import CONSTANT_PARAMS
    from ..vm_build import plan_schedules, with_default_schedules
    constants = constant_arguments(mod)
    candidates = {gv.name_hint: gv for gv in constants}
    if not candidates:
        return mod
    kernels = {name: mod[gv] for name, gv in candidates.items()}
    with target:
        given, default = plan_schedules(kernels, target, schedule_lookup)
        # The default rules learn which parameters arrive constant, so packed once here
        # (the Matmul rule then packs a few-row product's weight instead of reading it
        # unpacked). Marked after the lookup: tuning records are keyed without it.
        default = {name: func.with_attr(CONSTANT_PARAMS, sorted(constants[candidates[name]]))
                   for name, func in default.items()}
        scheduled = with_default_schedules(kernels, given, default)
    out = mod.copy()
    for name, gv in candidates.items():
        # The build keeps these schedules: the split kernels must read what they were split for.
        out[gv] = scheduled[name]
    splits = find_splits(mod, {gv: scheduled[name] for name, gv in candidates.items()})
    if not splits:
        return out
    from ...target import Target
    from ...tir.build import build     # below the graph IR, as FoldConstant's kernels
    names = {gv: f"{gv.name_hint}_pack" for gv in splits}
    # The packings run here, at build time: compiled for this host, not for ``target``.
    library = build(IRModule({names[gv]: pack.with_attr("global_symbol", names[gv])
                              for gv, (_, pack, _) in splits.items()}), Target("llvm"))
    packs = {}
    for gv, (param, pack, kernel) in splits.items():
        out[gv] = kernel
        packs[gv] = (param, _packing_now(library[names[gv]], pack))
    return _rewrite_calls(out, packs)


def _packed_sinfo(pack: PrimFunc) -> TensorStructInfo:
    buffer = pack.buffer_map[pack.params[1]]
    return TensorStructInfo([int(s.value) for s in buffer.shape], str(buffer.dtype))


def _packing_call(pack_gv, pack):
    """Pack a weight by a call of the packing function (for FoldConstant to fold)."""
    sinfo = _packed_sinfo(pack)
    return lambda builder, weight: builder.emit(call_tir(pack_gv, Tuple([weight]), sinfo))


def _packing_now(kernel, pack):
    """Pack a constant weight now, with the compiled packing ``kernel``."""
    sinfo = _packed_sinfo(pack)

    def packed(builder, weight):
        out = ndarray.empty(sinfo.static_shape(), sinfo.dtype)
        kernel(weight.data, out)
        return Constant(out)
    return packed


def split_packing(func: PrimFunc, param: int):
    """``(pack, kernel)``: ``func``'s packing of parameter ``param`` as a PrimFunc of its
    own, and ``func`` taking the packed buffer in its place; None where the parameter is
    not packed as the module docstring says."""
    if param >= len(func.params) or func.params[param] not in func.buffer_map:
        return None
    source = func.buffer_map[func.params[param]]
    root = func.body.block if isinstance(func.body, BlockRealize) else None
    if root is None:
        return None
    found = _head_packing(root.body, source, root.alloc_buffers) \
        or _packing_in_tasks(root.body, source, root.alloc_buffers)
    if found is None:
        return None
    (packed, scratch), packing, rest = found
    # A kernel that still reads the raw weight after packing cannot drop that
    # parameter, nor can one that writes the panels elsewhere take them ready.
    if _accesses(rest, source, "reads") or _accesses(rest, packed, "writes") \
            or any(_accesses(rest, b, "reads") or _accesses(rest, b, "writes")
                   for b in scratch):
        return None
    return (_pack_func(func, param, root, packing, packed, scratch),
            _kernel_func(func, param, root, rest, (packed, *scratch)))


def _head_packing(body, source, allocated):
    """``((packed buffer, scratch buffers), packing nest, rest)`` where the first nest
    of ``body`` packs ``source`` and nothing else, else None."""
    if not isinstance(body, SeqStmt) or len(body.seq) < 2:
        return None
    target = _packing_target(body.seq[0], source, allocated)
    return None if target is None else (target, body.seq[0], seq(*body.seq[1:]))


def _packing_in_tasks(body, source, allocated):
    """``((packed buffer, scratch buffers), packing, rest)`` where the first nest of
    ``body`` packs ``source`` first thing inside its loops, a panel per iteration
    (dlight's ``pack_in_tasks``)::

        for j_0 in T.parallel(16):                 # packing: the loops around the copy
            for ax1, ax0 in ..:  w_global[..] = w[..]
            for i_0 in range(16): ..               # rest: the loops around the product

    Run ahead of the loops, the copies give the same panels only if no two of them write
    one element: the copy's indices must map its iterators one to one. Else None."""
    first, after = (body.seq[0], body.seq[1:]) if isinstance(body, SeqStmt) else (body, ())
    loops, stmt = [], first
    while isinstance(stmt, For):
        loops.append(stmt)
        stmt = stmt.body
    if not loops or not isinstance(stmt, SeqStmt) or len(stmt.seq) < 2:
        return None
    copy = stmt.seq[0]
    target = _packing_target(copy, source, allocated)
    if target is None or not _writes_each_element_once(copy, target[0]):
        return None

    def within_loops(inner):
        for loop in reversed(loops):
            inner = loop.replace(body=inner)
        return inner
    return target, within_loops(copy), seq(within_loops(seq(*stmt.seq[1:])), *after)


def _writes_each_element_once(nest, packed) -> bool:
    """The block of ``nest`` that writes ``packed`` stores at indices that map its
    iterators one to one."""
    blocks = []
    post_order_visit(nest, lambda n: blocks.append(n) if isinstance(n, Block) and any(
        w.buffer is packed for w in n.writes) else None)
    if len(blocks) != 1:
        return False
    stores = []
    post_order_visit(blocks[0].body, lambda n: stores.append(n)
                     if isinstance(n, BufferStore) else None)
    if len(stores) != 1:
        return False
    domains = {iv.var: iv.dom for iv in blocks[0].iter_vars}
    return bool(detect_iter_map(list(stores[0].indices), domains,
                                check_level=IterMapLevel.BIJECTIVE))


def _packing_target(nest, source, allocated):
    """``(packed, scratch)``: the buffer ``nest`` packs ``source`` into, and the buffers
    it fills on the way (dlight's blocks read into registers before they are stored
    transposed). Every block of ``nest`` writes one buffer of ``allocated`` and reads
    ``source`` or what an earlier block wrote; exactly one buffer written is not read
    again. Else None."""
    blocks = []
    post_order_visit(nest, lambda n: blocks.append(n) if isinstance(n, Block) else None)
    if not blocks or not any(r.buffer is source for b in blocks for r in b.reads):
        return None
    written = []
    for block in blocks:
        if len(block.writes) != 1 or not all(
                r.buffer is source or any(r.buffer is w for w in written)
                for r in block.reads):
            return None
        # Only a buffer the kernel allocates can become a parameter; an output must stay one.
        if not any(b is block.writes[0].buffer for b in allocated):
            return None
        written.append(block.writes[0].buffer)
    read = [r.buffer for b in blocks for r in b.reads]
    final = [w for w in dict.fromkeys(written) if not any(w is r for r in read)]
    if len(final) != 1:
        return None
    return final[0], tuple(w for w in dict.fromkeys(written) if w is not final[0])


def _accesses(stmt, buffer, kind: str) -> bool:
    """Whether a block of ``stmt`` lists ``buffer`` among its ``kind`` ("reads" or
    "writes")."""
    found = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, Block) and any(
        region.buffer is buffer for region in getattr(n, kind)) else None)
    return bool(found)


def _pack_func(func, param, root, nest, packed, scratch) -> PrimFunc:
    source_var = func.params[param]
    packed_var = TirVar(packed.name, "handle")
    body = BlockRealize((), True, root.replace(body=nest, alloc_buffers=tuple(scratch)))
    # The packing function gets its own symbol when it is added to a module.
    attrs = {k: v for k, v in func.attrs.items() if k != "global_symbol"}
    return PrimFunc((source_var, packed_var), body,
                    {source_var: func.buffer_map[source_var], packed_var: packed}, attrs)


def _kernel_func(func, param, root, rest, moved) -> PrimFunc:
    """``func`` with ``rest`` as its body, taking ``moved[0]`` (the packed buffer) as
    parameter ``param`` and no longer allocating any of ``moved``."""
    packed = moved[0]
    packed_var = TirVar(packed.name, "handle")
    params = list(func.params)
    params[param] = packed_var
    buffer_map = {p: func.buffer_map[p] for p in func.params if p in func.buffer_map}
    del buffer_map[func.params[param]]
    buffer_map[packed_var] = packed
    allocs = tuple(b for b in root.alloc_buffers if not any(b is m for m in moved))
    body = func.body.replace(block=root.replace(body=rest, alloc_buffers=allocs))
    return func.replace(params=tuple(params), body=body, buffer_map=buffer_map)


class _CallCollector(ExprVisitor):
    """{kernel's GlobalVar: parameter indices given a Constant by every call}."""

    def __init__(self, mod):
        self.mod = mod
        self.constant: dict = {}

    def visit_call_(self, call):
        super().visit_call_(call)
        if call.op != Op.get("relax.call_tir") or not isinstance(call.args[0], GlobalVar) \
                or not isinstance(self.mod[call.args[0]], PrimFunc) \
                or not isinstance(call.args[1], Tuple):
            return
        here = {n for n, a in enumerate(call.args[1].fields) if isinstance(a, Constant)}
        gv = call.args[0]
        # A parameter qualifies only if every call passes a constant for it.
        self.constant[gv] = here if gv not in self.constant else self.constant[gv] & here


def constant_arguments(mod) -> dict:
    """``{kernel's GlobalVar: parameter indices}`` that every ``call_tir`` of the
    kernel in ``mod``'s Relax functions gives a ``Constant``, for kernels with any."""
    collector = _CallCollector(mod)
    for func in mod.functions.values():
        if isinstance(func, Function):
            collector.visit_expr(func)
    return {gv: index for gv, index in collector.constant.items() if index}


def _rewrite_calls(mod: IRModule, packs: dict) -> IRModule:
    out = mod.copy()
    for gv, func in mod.items():
        if isinstance(func, Function):
            out[gv] = _CallRewriter(mod, packs).visit_expr(func)
    return out


class _CallRewriter(ExprMutator):
    """Each call of a split kernel gets its weight packed (``packs[kernel]``)."""

    def __init__(self, mod, packs: dict):
        super().__init__(mod)
        self.packs = packs

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        if call.op != Op.get("relax.call_tir") or call.args[0] not in self.packs:
            return call
        param, pack = self.packs[call.args[0]]
        fields = list(call.args[1].fields)
        fields[param] = pack(self.builder_, fields[param])
        return Call(call.op, [call.args[0], Tuple(fields), *call.args[2:]], call.attrs,
                    call.sinfo_args)


__all__ = ["PrepackWeights", "SplitWeightPacking", "constant_arguments", "find_splits",
           "first_split", "prepack_weights", "split_packing"]
