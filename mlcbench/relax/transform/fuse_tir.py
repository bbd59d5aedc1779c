"""FuseTIR: each ``"Primitive"`` Relax function (made by FuseOps) becomes one PrimFunc.

The bodies of the PrimFuncs the function calls are placed one after another under a
new root block, with every loop and block variable renewed and block names made
unique (``T_add``, ``T_add_1``). A value passed from one call to the next becomes a
``T.alloc_buffer`` named ``<output>_intermediate``; the function's parameters and
results become the PrimFunc's buffers. ``main`` then calls the fused PrimFunc with one
``R.call_tir``; the Primitive functions, and PrimFuncs no longer called, are removed.

Before (from FuseOps)::

    lv = cls.fused_matmul_add_relu(x, w, b)

After::

    @T.prim_func
    def fused_matmul_add_relu(x: T.Buffer((1, 784), "float32"), w: ..., b: ...,
                              compute: T.Buffer((1, 128), "float32")):
        T_matmul_NN_intermediate = T.alloc_buffer((1, 128))
        T_add_intermediate = T.alloc_buffer((1, 128))
        for i, j, k in T.grid(1, 128, 784):
            with T.block("T_matmul_NN"): ...
        for ax0, ax1 in T.grid(1, 128):
            with T.block("T_add"): ...
        for i0, i1 in T.grid(1, 128):
            with T.block("compute"): ...

    lv = R.call_tir(cls.fused_matmul_add_relu, (x, w, b),
                    out_sinfo=R.Tensor((1, 128), dtype="float32"))
"""
from __future__ import annotations

from ...ir.errors import IRError
from ...ir.module import GlobalVar, IRModule
from ...ir.transform import module_pass
from ...tir.buffer import Buffer
from ...tir.expr import IntImm, Let, Var as TIRVar, const
from ...tir.function import PrimFunc
from ...tir.functor import StmtExprMutator, post_order_visit
from ...tir.stmt import Block, BlockRealize, For, IterVar, LetStmt, seq
from ..analysis import post_order_visit as relax_post_order_visit
from ..expr import Call, Function, MatchCast, SeqExpr, Tuple, TupleGetItem, Var
from ..expr_functor import ExprMutator
from ..op.base import call_tir
from ..struct_info import TensorStructInfo, TupleStructInfo
from .graph_partitioner import call_tir_args, call_tir_callee, is_primitive


def FuseTIR():  # noqa: N802 -- TVM's spelling
    """Turn every Primitive Relax function into one PrimFunc (see module docstring).

    >>> mod = relax.transform.FuseOps()(mod)
    >>> mod = relax.transform.FuseTIR()(mod)
    >>> lib = mlcbench.build(mod)            # the fused kernels, one per group
    """
    def transform(mod: IRModule, ctx) -> IRModule:
        primitives = {gv: f for gv, f in mod.items() if is_primitive(f)}
        if not primitives:
            return mod
        fused = {gv: fuse_primitive_function(mod, func, gv.name_hint)
                 for gv, func in primitives.items()}
        rewriter = _CallRewriter(primitives)
        out = IRModule(attrs=mod.attrs)
        for gv, func in mod.items():
            if gv in primitives:
                out[gv] = fused[gv]
            elif isinstance(func, Function):
                out[gv] = rewriter.visit_expr(func)
            else:
                out[gv] = func
        _remove_uncalled(out, _callees(primitives.values()))
        return out

    return module_pass(transform, opt_level=0, name="FuseTIR")


def fuse_primitive_function(mod: IRModule, func: Function, name: str) -> PrimFunc:
    """The PrimFunc computing the Primitive function ``func`` of ``mod``."""
    return _FusedPrimFunc(mod, func, name).build()


class _FusedPrimFunc:
    """Collects the inlined bodies and the buffers of one Primitive function."""

    def __init__(self, mod: IRModule, func: Function, name: str):
        self.mod, self.func, self.name = mod, func, name
        self.buffers: dict = {}            # relax var -> [tir Buffer] (one per tensor)
        self.param_buffers: dict = {}      # relax param -> Buffer, made at first use
        self.output_slots = _output_slots(func)
        self.output_buffers: dict = {}     # (call var, index) -> Buffer
        self.allocs: list = []
        self.bodies: list = []
        self.block_names: dict = {}
        # Parameter names are taken first, so no intermediate buffer shadows one.
        self.buffer_names: dict = {p.name_hint: True for p in func.params}

    def fail(self, message: str):
        return IRError(f"FuseTIR: function {self.name!r}: {message}")

    def build(self) -> PrimFunc:
        for param in self.func.params:
            if not isinstance(param.struct_info, TensorStructInfo):
                raise self.fail(f"parameter {param.name_hint!r} must be a tensor, found "
                                f"{param.struct_info}")
        ret = self.func.ret_struct_info
        fields = ret.fields if isinstance(ret, TupleStructInfo) else [ret]
        if not all(isinstance(f, TensorStructInfo) for f in fields):
            raise self.fail(f"returns {ret}; FuseTIR handles a tensor or a tuple of tensors")
        body = self.func.body
        if not isinstance(body, SeqExpr):
            raise self.fail("the body must be a sequence of bindings")
        for block in body.blocks:
            for binding in block.bindings:
                self.bind(binding)
        params, buffer_map = [], {}
        for buffer in [self._param_buffer(p) for p in self.func.params] + \
                [self.output_buffers[slot] for slot in self.output_slots]:
            handle = TIRVar(buffer.name, "handle")
            params.append(handle)
            buffer_map[handle] = buffer
        root = Block((), (), (), "root", seq(*self.bodies), alloc_buffers=tuple(self.allocs))
        # Outputs and intermediates are fresh allocations: what the kernel writes aliases nothing.
        return PrimFunc(params, BlockRealize((), const(True), root), buffer_map,
                        attrs={"global_symbol": self.name, "tir.noalias": True})

    # -- bindings ---------------------------------------------------------------------------
    def bind(self, binding) -> None:
        value = binding.value
        if isinstance(binding, MatchCast):
            raise self.fail("match_cast is not supported inside a primitive function")
        if call_tir_callee(value) is not None:
            self.buffers[binding.var] = self.inline_call(binding.var, value)
        elif isinstance(value, TupleGetItem):
            self.buffers[binding.var] = [self.buffers_of(value.tuple_value)[value.index]]
        else:
            self.buffers[binding.var] = self.buffers_of(value)

    def buffers_of(self, expr) -> list:
        if isinstance(expr, Tuple):
            return [b for f in expr.fields for b in self.buffers_of(f)]
        if isinstance(expr, Var) and expr in self.buffers:
            return self.buffers[expr]
        if isinstance(expr, Var) and expr in self.func.params:
            return [self._param_buffer(expr)]
        raise self.fail(f"only call_tir, tuples and tuple items can be fused; found "
                        f"{type(expr).__name__} {expr}")

    def _param_buffer(self, param: Var, like: Buffer | None = None) -> Buffer:
        if param not in self.param_buffers:
            sinfo = param.struct_info
            if like is None:
                shape = sinfo.static_shape()
                if shape is None:
                    raise self.fail(f"parameter {param.name_hint!r} has a symbolic shape; "
                                    "FuseTIR supports static shapes")
                like = Buffer(param.name_hint, shape, sinfo.dtype)
            # Made at first use, in the layout of the first PrimFunc that reads the parameter.
            self.param_buffers[param] = _copy_buffer(like, param.name_hint)
        return self.param_buffers[param]

    def inline_call(self, var: Var, call: Call) -> list:
        """Place the callee's body, reading the argument buffers; its output buffers."""
        gvar = call_tir_callee(call)
        callee = self.mod[gvar] if gvar in self.mod else None
        if not isinstance(callee, PrimFunc) or not isinstance(callee.body, BlockRealize):
            raise self.fail(f"{gvar.name_hint} must be a PrimFunc whose body is a root block")
        if len(call.args) > 2:
            raise self.fail(f"call_tir of {gvar.name_hint} passes tir_vars; FuseTIR supports "
                            "static shapes")
        formal = [b for _, b in callee.buffer_params()]
        args = call_tir_args(call)
        if len(formal) != len(args) + len(_out_sinfos(call)):
            raise self.fail(f"{gvar.name_hint} takes {len(formal)} buffers, the call passes "
                            f"{len(args)} inputs and {len(_out_sinfos(call))} outputs")
        mapping = {}
        for k, (buffer, arg) in enumerate(zip(formal, args)):
            mapping[buffer] = self._input_buffer(arg, buffer, gvar, k)
        outputs = []
        for k, buffer in enumerate(formal[len(args):]):
            outputs.append(self._output_buffer(var, k, buffer))
            mapping[buffer] = outputs[-1]
        body, allocs = self._inline_body(callee, mapping)
        self.bodies.append(body)
        self.allocs.extend(allocs)
        return outputs

    def _input_buffer(self, arg, formal: Buffer, gvar: GlobalVar, k: int) -> Buffer:
        if isinstance(arg, Var) and arg in self.func.params:
            actual = self._param_buffer(arg, like=formal)
        elif isinstance(arg, Var) and arg in self.buffers and len(self.buffers[arg]) == 1:
            actual = self.buffers[arg][0]
        else:
            raise self.fail(f"argument {k} of {gvar.name_hint} must be a tensor variable, "
                            f"found {arg}")
        if _static(actual.shape) != _static(formal.shape) or actual.dtype != formal.dtype:
            raise self.fail(f"argument {k} of {gvar.name_hint}: the PrimFunc expects "
                            f"{_static(formal.shape)} {formal.dtype}, the value is "
                            f"{_static(actual.shape)} {actual.dtype}")
        return actual

    def _output_buffer(self, var: Var, k: int, formal: Buffer) -> Buffer:
        if (var, k) in self.output_slots:
            buffer = _copy_buffer(formal, self._unique(self.buffer_names, formal.name))
            self.output_buffers[(var, k)] = buffer
        else:
            name = self._unique(self.buffer_names, formal.name + "_intermediate")
            buffer = _copy_buffer(formal, name)
            self.allocs.append(buffer)
        return buffer

    def _inline_body(self, callee: PrimFunc, mapping: dict):
        """The callee's root body with fresh binders, ``mapping``'s buffers and unique block
        names; and its own root allocations, renewed."""
        root = callee.body.block
        variables, buffers = _defined_in(root.body)
        buffers = list(root.alloc_buffers) + buffers
        # Fresh binders: two calls of one PrimFunc must not share loop or block variables.
        vmap = {id(v): TIRVar(v.name, v.dtype, v.type_annotation) for v in variables}
        bmap = {id(b): _copy_buffer(b, self._unique(self.buffer_names, b.name))
                for b in buffers}
        # The call's argument and output buffers replace the callee's parameter buffers.
        bmap.update({id(old): new for old, new in mapping.items()})
        inliner = _Inliner(vmap, bmap, lambda name: self._unique(self.block_names, name))
        body = inliner.visit(root.body)
        return body, [bmap[id(b)] for b in root.alloc_buffers]

    @staticmethod
    def _unique(used: dict, name: str) -> str:
        """``name``, or ``name_1``, ``name_2`` ... when taken (TVM's block renaming)."""
        unique, k = name, 0
        while unique in used:
            k += 1
            unique = f"{name}_{k}"
        used[unique] = True
        return unique


def _out_sinfos(call: Call) -> list:
    sinfo = call.sinfo_args[0]
    return list(sinfo.fields) if isinstance(sinfo, TupleStructInfo) else [sinfo]


def _static(shape) -> tuple:
    return tuple(d.value if isinstance(d, IntImm) else d for d in shape)


def _copy_buffer(buffer: Buffer, name: str) -> Buffer:
    """A new buffer (new data pointer) with ``buffer``'s shape, dtype and layout."""
    for extent in buffer.shape:
        if not isinstance(extent, IntImm):
            raise IRError(f"FuseTIR: buffer {buffer.name} has the symbolic shape "
                          f"{list(buffer.shape)}; FuseTIR supports static shapes")
    return Buffer(name, buffer.shape, buffer.dtype, None, buffer.strides, buffer.elem_offset,
                  buffer.scope, buffer.axis_separators, buffer.align, buffer.offset_factor)


def _defined_in(stmt):
    """Variables (loops, block iterators, lets) and buffers (allocated, matched) that
    ``stmt`` defines."""
    variables, buffers = [], []

    def collect(node):
        if isinstance(node, For):
            variables.append(node.loop_var)
        elif isinstance(node, (LetStmt, Let)):
            variables.append(node.var)
        elif isinstance(node, IterVar):
            variables.append(node.var)
        elif isinstance(node, Block):
            buffers.extend(node.alloc_buffers)
            buffers.extend(m.buffer for m in node.match_buffers)

    post_order_visit(stmt, collect)
    return variables, buffers


class _Inliner(StmtExprMutator):
    """Renames variables and buffers (by identity) and blocks (by ``rename``)."""

    def __init__(self, vmap: dict, bmap: dict, rename):
        self.vmap, self.bmap, self.rename = vmap, bmap, rename

    def visit_Var(self, var):
        return self.vmap.get(id(var), var)

    def visit_Buffer(self, buffer):
        return self.bmap.get(id(buffer), buffer)

    def visit_Block(self, block):
        new = self.generic_visit(block)
        name = self.rename(block.name_hint)
        return new if name == new.name_hint else new.replace(name_hint=name)


def _output_slots(func: Function) -> list:
    """``(call var, output index)`` of each tensor the function returns, in order."""
    values = {b.var: b.value for block in func.body.blocks for b in block.bindings}

    def slots(expr) -> list:
        if isinstance(expr, Tuple):
            return [s for f in expr.fields for s in slots(f)]
        if not isinstance(expr, Var):
            raise IRError(f"FuseTIR: only call_tir, tuples and tuple items can be fused; "
                          f"found {type(expr).__name__} {expr}")
        value = values.get(expr)
        if value is None:
            raise IRError(f"FuseTIR: the primitive function returns {expr}, which no "
                          "binding inside it computes")
        if call_tir_callee(value) is not None:
            return [(expr, k) for k in range(len(_out_sinfos(value)))]
        if isinstance(value, TupleGetItem):
            return [slots(value.tuple_value)[value.index]]
        return slots(value)

    found = slots(func.body.body)
    if len(set(found)) != len(found):
        raise IRError("FuseTIR: a primitive function returns the same tensor twice")
    return found


class _CallRewriter(ExprMutator):
    """``cls.fused_f(x, w)`` -> ``R.call_tir(cls.fused_f, (x, w), out_sinfo=...)``."""

    def __init__(self, primitives: dict):
        super().__init__()
        self.primitives = primitives

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        func = self.primitives.get(call.op) if isinstance(call.op, GlobalVar) else None
        if func is None:
            return call
        ret = func.ret_struct_info
        out_sinfo = list(ret.fields) if isinstance(ret, TupleStructInfo) else ret
        return call_tir(call.op, Tuple(call.args), out_sinfo)


def _callees(functions) -> set:
    """GlobalVars called (as ``call_tir`` callee or directly) from ``functions``."""
    found = set()

    def note(expr):
        if isinstance(expr, Call):
            callee = call_tir_callee(expr)
            if callee is not None:
                found.add(callee)
            elif isinstance(expr.op, GlobalVar):
                found.add(expr.op)

    for func in functions:
        relax_post_order_visit(func, note)
    return found


def _remove_uncalled(mod: IRModule, candidates: set) -> None:
    """Drop the ``candidates`` that no remaining Relax function calls."""
    # A PrimFunc may also be called from outside the fused groups: keep those.
    still_called = _callees(f for f in mod.functions.values() if isinstance(f, Function))
    for gvar in candidates:
        if gvar in mod and gvar not in still_called and isinstance(mod[gvar], PrimFunc):
            mod.remove(gvar)


__all__ = ["FuseTIR", "fuse_primitive_function"]
