"""tensorize: replace a block's computation by a registered tensor intrinsic.

The body of the block (a loop nest around one inner block, as ``blockize`` makes it)
is compared with the ``desc`` of the intrinsic: same loop extents, same inner block
iterators (types and extents), same statements and expressions. Buffers correspond
up to a constant offset: ``C[vi_o, vj_o * 16 + vj_i]`` matches ``C[vj]`` of the desc
with offset ``[vi_o, vj_o * 16]``. The iterator *bindings* are not compared. When
everything matches, the block body becomes the ``impl`` body, whose buffers view the
matched regions through ``T.match_buffer``::

    with T.block("C_update_o"):
        ...
        A_1 = T.match_buffer(A[vi_o, vk_o], (1,), offset_factor=1)
        B_1 = T.match_buffer(B[vk_o, vj_o * 16:vj_o * 16 + 16], (16,), offset_factor=1)
        C_1 = T.match_buffer(C[vi_o, vj_o * 16:vj_o * 16 + 16], (16,), offset_factor=1)
        for j in T.vectorized(16):
            C_1[j] = C_1[j] + A_1[0] * B_1[j]
"""
from __future__ import annotations

from ..errors import fail
from ..ir_utils import find_block, replace_stmts, uses_any
from ...buffer import Buffer, BufferRegion, MatchBufferRegion
from ...expr import Range, Var, const
from ...function import PrimFunc
from ...functor import StmtExprMutator, post_order_visit, substitute
from ...stmt import Block, For, IterVar, LetStmt
from ....arith import Analyzer
from ....ir.node import Node


class _Mismatch(Exception):
    pass


class _Matcher:
    """Structural comparison of a desc subtree with an actual one (see module doc)."""

    def __init__(self, desc_params):
        self.desc_params = desc_params
        self.vars: dict = {}
        self.buffers: dict = {}        # desc Buffer -> (actual Buffer, offsets)
        self.analyzer = Analyzer()

    def match(self, d, a):
        if type(d) is not type(a):
            raise _Mismatch(f"the intrinsic has {type(d).__name__} `{_short(d)}` where the "
                            f"block has {type(a).__name__} `{_short(a)}`")
        method = getattr(self, "_" + type(d).__name__, None)
        if method is not None:
            return method(d, a)
        return self._fields(d, a)

    def _fields(self, d, a):
        for field in d._fields:
            self._value(getattr(d, field.name), getattr(a, field.name), d)

    def _value(self, dv, av, owner):
        if isinstance(dv, Node):
            self.match(dv, av)
        elif isinstance(dv, tuple):
            if not isinstance(av, tuple) or len(dv) != len(av):
                raise _Mismatch(f"`{_short(owner)}` has a different number of parts")
            for x, y in zip(dv, av):
                self._value(x, y, owner)
        elif dv != av and not isinstance(dv, dict):
            raise _Mismatch(f"`{_short(owner)}` differs: {dv!r} vs {av!r}")

    def _Var(self, d, a):
        if self.vars.get(d) is not a:
            raise _Mismatch(f"variable {d.name} of the intrinsic corresponds to {a.name}")

    def _constant(self, d, a):
        if d.value != a.value or d.dtype != a.dtype:
            raise _Mismatch(f"constant {d} of the intrinsic differs from {a}")

    _IntImm = _FloatImm = _StringImm = _constant

    def _For(self, d, a):
        if not (_const(d.extent) == _const(a.extent) and _const(d.min) == _const(a.min)):
            raise _Mismatch(f"loop {d.loop_var.name} of the intrinsic has extent {d.extent}, "
                            f"the block's loop {a.loop_var.name} has {a.extent}")
        self.vars[d.loop_var] = a.loop_var
        self.match(d.body, a.body)

    def _BlockRealize(self, d, a):
        self.match(d.block, a.block)      # bindings are not compared

    def _Block(self, d, a):
        if len(d.iter_vars) != len(a.iter_vars) or any(
                x.iter_type != y.iter_type or _const(x.dom.extent) != _const(y.dom.extent)
                for x, y in zip(d.iter_vars, a.iter_vars)):
            raise _Mismatch(f"block {a.name_hint!r} has iterators "
                            f"{_ivs(a.iter_vars)}, the intrinsic's block {d.name_hint!r} "
                            f"has {_ivs(d.iter_vars)}")
        for x, y in zip(d.iter_vars, a.iter_vars):
            self.vars[x.var] = y.var
        if (d.init is None) != (a.init is None):
            raise _Mismatch(f"block {a.name_hint!r} and the intrinsic differ in T.init()")
        if d.init is not None:
            self.match(d.init, a.init)
        self.match(d.body, a.body)

    def _BufferStore(self, d, a):
        self._access(d, a)
        self.match(d.value, a.value)

    def _BufferLoad(self, d, a):
        self._access(d, a)

    def _access(self, d, a):
        db, ab = d.buffer, a.buffer
        if db.dtype != ab.dtype or ab.ndim < db.ndim:
            raise _Mismatch(f"buffer {ab.name} ({ab.dtype}, {ab.ndim}-d) cannot play the "
                            f"intrinsic's {db.name} ({db.dtype}, {db.ndim}-d)")
        lead = ab.ndim - db.ndim
        mapped = substitute(tuple(d.indices), self.vars)
        offsets = list(a.indices[:lead]) + [self.analyzer.simplify(x - y) for x, y in
                                            zip(a.indices[lead:], mapped)]
        inner = list(self.vars.values())
        if any(uses_any(o, inner) for o in offsets):
            raise _Mismatch(f"the access {_short(a)} does not follow the intrinsic's "
                            f"{_short(d)} up to a constant offset")
        if db in self.buffers:
            seen, seen_offsets = self.buffers[db]
            if seen is not ab or not all(self.analyzer.can_prove_equal(x, y)
                                         for x, y in zip(seen_offsets, offsets)):
                raise _Mismatch(f"the intrinsic's {db.name} corresponds to two different "
                                f"regions ({seen.name} and {ab.name})")
        self.buffers[db] = (ab, offsets)


def _const(expr):
    return getattr(expr, "value", str(expr))


def _ivs(iter_vars):
    return [f"{iv.var.name}:{iv.iter_type.value}({iv.dom.extent})" for iv in iter_vars]


def _short(node):
    text = str(node).strip().splitlines()
    return text[0][:80] if text else type(node).__name__


class _Fresh(StmtExprMutator):
    def __init__(self, vmap, bmap):
        self.vmap, self.bmap = vmap, bmap

    def visit_Var(self, var):
        return self.vmap.get(var, var)

    def visit_Buffer(self, buf):
        return self.bmap.get(buf, buf)


def fresh_copy(func: PrimFunc):
    """``(root body, parameter buffers)`` of ``func`` with every binder renewed, so the
    same intrinsic can be placed many times in one function."""
    defined, buffers = [], [b for _, b in func.buffer_params()]

    def collect(node):
        if isinstance(node, (For, LetStmt)):
            defined.append(node.loop_var if isinstance(node, For) else node.var)
        elif isinstance(node, IterVar):
            defined.append(node.var)
        elif isinstance(node, Block):
            buffers.extend(node.alloc_buffers)
            buffers.extend(m.buffer for m in node.match_buffers)
    post_order_visit(func.body.block.body, collect)
    # the buffers' stride and offset variables (``strides=[sa, 1]``) are renewed too
    defined += [x for b in buffers for x in (*b.strides, b.elem_offset)
                if isinstance(x, Var) and x not in defined]
    vmap = {v: Var(v.name, v.dtype) for v in defined}
    bmap = {b: Buffer(b.name, b.shape, b.dtype, None, substitute(b.strides, vmap),
                      substitute(b.elem_offset, vmap), b.scope, b.axis_separators, b.align,
                      b.offset_factor) for b in buffers}
    # an impl that passes ``A.access_ptr("r")`` to an extern function names A's data
    vmap.update({b.data: bmap[b].data for b in buffers})
    body = _Fresh(vmap, bmap).visit(func.body.block.body)
    return body, [bmap[b] for _, b in func.buffer_params()]


def tensorize(func: PrimFunc, block_name: str, intrin, intrin_name: str) -> PrimFunc:
    """Replace the body of block ``block_name`` by ``intrin.impl`` (see module doc)."""
    hit = find_block(func, block_name, "tensorize")
    block = hit.node.block
    desc_params = [b for _, b in intrin.desc.buffer_params()]
    matcher = _Matcher(desc_params)
    try:
        if block.init is not None:
            raise _Mismatch(f"block {block_name!r} has T.init(); decompose_reduction first")
        matcher.match(intrin.desc.body.block.body, block.body)
        missing = [b.name for b in desc_params if b not in matcher.buffers]
        if missing:
            raise _Mismatch(f"the intrinsic's buffers {missing} are not used the same way")
    except _Mismatch as err:
        fail("tensorize", f"block {block_name!r} does not match the description of "
             f"intrinsic {intrin_name!r}: {err.args[0]}", func, blocks=[block_name])
    body, impl_params = fresh_copy(intrin.impl)
    matches = []
    for desc_buf, impl_buf in zip(desc_params, impl_params):
        actual, offsets = matcher.buffers[desc_buf]
        lead = actual.ndim - desc_buf.ndim
        region = [Range(o, const(1, o.dtype)) for o in offsets[:lead]] + [
            Range(o, e) for o, e in zip(offsets[lead:], desc_buf.shape)]
        matches.append(MatchBufferRegion(impl_buf, BufferRegion(actual, tuple(region))))
    new_block = block.replace(body=body, match_buffers=block.match_buffers + tuple(matches))
    return replace_stmts(func, {hit.node: hit.node.replace(block=new_block)})
