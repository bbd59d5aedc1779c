"""Intrinsic calls (``Call("tir.exp", ...)``) -> LLVM intrinsics, libm or expansions.

* Inline polynomial expansions (``vector_math``), scalar and vector alike: exp, log,
  tanh, sigmoid for float16/32/64 (float16 computes in float32), erf for float16/32.
* Direct LLVM intrinsics, scalar and vector (``llvm.exp2.v16f32``): exp2, log2, log10,
  sqrt, fabs, floor, ceil, trunc, round (to even), sin, cos, pow, fma.
* libm per lane (no vector libm is linked): float64 erf and tan.
* Expansions: rsqrt = 1 / sqrt(x), isnan = x != x.
* ``tir.call_extern("float32", "expf", x)`` calls any C function the process exports.
"""
from __future__ import annotations

from llvmlite import ir

from ...tir import expr as E
from . import types as T
from . import vector_math

_LLVM_UNARY = {"exp2": "llvm.exp2", "log2": "llvm.log2",
               "log10": "llvm.log10", "sqrt": "llvm.sqrt", "fabs": "llvm.fabs",
               "floor": "llvm.floor", "ceil": "llvm.ceil", "trunc": "llvm.trunc",
               "round": "llvm.roundeven", "nearbyint": "llvm.nearbyint", "sin": "llvm.sin",
               "cos": "llvm.cos"}
_LIBM = {"erf": "erf", "tan": "tan"}
# Expanded inline so that vector code stays vector: name -> (function, float bits it handles).
_VECTOR_MATH = {"exp": (vector_math.exp, (32, 64)), "log": (vector_math.log, (32, 64)),
                "tanh": (vector_math.tanh, (32, 64)), "sigmoid": (vector_math.sigmoid, (32, 64)),
                "erf": (vector_math.erf, (32,))}


def intrinsic_suffix(ty: ir.Type) -> str:
    """LLVM's overload suffix: ``f32``, ``v16f32``, ``i64``."""
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{intrinsic_suffix(ty.element)}"
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    return {"half": "f16", "float": "f32", "double": "f64"}[str(ty)]


class IntrinsicCalls:
    """Mixin: ``emit_call`` and ``call_intrinsic``; needs ``builder``, ``module``, ``emit_expr``."""

    def declare_function(self, name: str, ret: ir.Type, args) -> ir.Function:
        # A module declares a name once; later calls reuse that declaration.
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ir.Function(self.module, ir.FunctionType(ret, list(args)), name=name)

    def call_intrinsic(self, base: str, args) -> ir.Value:
        """``call_intrinsic("llvm.exp", [x])`` with the overload picked from ``x``'s type."""
        ty = args[0].type
        fn = self.declare_function(f"{base}.{intrinsic_suffix(ty)}", ty, [a.type for a in args])
        return self.builder.call(fn, args)

    def emit_call(self, op) -> ir.Value:
        name = op.op[4:] if op.op.startswith("tir.") else op.op
        if name == "call_extern" or name == "call_pure_extern":
            return self._call_extern(op)
        if name == "tvm_access_ptr":
            return self._access_ptr(op)
        if name == "if_then_else":
            return self._if_then_else(op)
        if name == "prefetch":
            return self._prefetch(op)
        # likely is only a hint: its value is its argument's.
        if name == "likely":
            return self.emit_expr(op.args[0])
        args = [self.emit_expr(a) for a in op.args]
        lanes = max(T.lanes_of(a) for a in args)
        args = [T.broadcast(self.builder, a, lanes) for a in args]
        arg_dtype = op.args[0].dtype
        if arg_dtype.is_float and name in _VECTOR_MATH:
            expanded = self._vector_math(name, args[0], arg_dtype)
            if expanded is not None:
                return expanded
        if arg_dtype.is_float and name in _LLVM_UNARY:
            return self.call_intrinsic(_LLVM_UNARY[name], args)
        if arg_dtype.is_float and name in _LIBM:
            return self._libm_per_lane(_LIBM[name], args[0], arg_dtype)
        handler = getattr(self, "_call_" + name, None)
        if handler is None:
            self.fail(f"unsupported intrinsic {op.op!r} on {arg_dtype} (supported: "
                      f"{sorted(set(_LLVM_UNARY) | set(_LIBM) | set(_VECTOR_MATH))} and "
                      "rsqrt, pow, fma, "
                      "abs, isnan, call_extern, if_then_else, bitwise ops)", op)
        return handler(op, args)

    # -- expansions --------------------------------------------------------------------
    def _vector_math(self, name: str, x: ir.Value, dt) -> ir.Value | None:
        """``vector_math.<name>(x)``; float16 is computed in float32. None when the
        expansion does not cover ``dt`` (float64 erf goes to libm)."""
        function, bits = _VECTOR_MATH[name]
        elem_bits = dt.element.bits
        if elem_bits == 16 and 32 in bits:
            wide = ir.VectorType(ir.FloatType(), T.lanes_of(x)) if T.is_vector(x) \
                else ir.FloatType()
            result = function(self.builder, self.builder.fpext(x, wide))
            return self.builder.fptrunc(result, x.type)
        if elem_bits not in bits:
            return None
        return function(self.builder, x)

    def _call_rsqrt(self, op, args):
        root = self.call_intrinsic("llvm.sqrt", args)
        return self.builder.fdiv(T.constant(op.dtype, 1.0), root, flags=T.FLOAT_FLAGS)

    def _call_pow(self, op, args):
        return self.call_intrinsic("llvm.pow", args)

    def _call_fma(self, op, args):
        return self.call_intrinsic("llvm.fma", args)

    def _call_abs(self, op, args):
        x = args[0]
        if op.dtype.is_float:
            return self.call_intrinsic("llvm.fabs", args)
        if op.dtype.is_uint:
            return x
        negative = self.builder.icmp_signed("<", x, ir.Constant(x.type, None))
        return self.builder.select(negative, self.builder.neg(x), x)

    _call_fabs = _call_abs

    def _call_isnan(self, op, args):
        if not op.args[0].dtype.is_float:
            return T.constant(op.dtype, False)
        return self.builder.fcmp_unordered("uno", args[0], args[0])

    def _call_popcount(self, op, args):
        return self.call_intrinsic("llvm.ctpop", args)

    def _call_bitwise_not(self, op, args):
        return self.builder.not_(args[0])

    # Signed values shift their sign bit in (arithmetic shift), unsigned ones zeros.
    def _call_shift_right(self, op, args):
        if op.dtype.is_int:
            return self.builder.ashr(args[0], args[1])
        return self.builder.lshr(args[0], args[1])

    def _call_reinterpret(self, op, args):
        return self.builder.bitcast(args[0], T.value_type(op.dtype))

    def _call_bitwise_and(self, op, args):
        return self.builder.and_(args[0], args[1])

    def _call_bitwise_or(self, op, args):
        return self.builder.or_(args[0], args[1])

    def _call_bitwise_xor(self, op, args):
        return self.builder.xor(args[0], args[1])

    def _call_shift_left(self, op, args):
        return self.builder.shl(args[0], args[1])

    # -- libm and extern calls ---------------------------------------------------------
    def _libm_per_lane(self, base: str, x: ir.Value, dt) -> ir.Value:
        """Call ``tanhf``/``tanh`` per lane; float16 computes in float32."""
        elem = dt.element
        compute = T.scalar_type(elem) if elem.bits != 16 else ir.FloatType()
        # libm's float32 variants end in f (tanf, erff).
        name = base + ("f" if str(compute) == "float" else "")
        fn = self.declare_function(name, compute, [compute])
        fn.attributes.add("nounwind")
        lanes = T.lanes_of(x)
        result = ir.Constant(x.type, None) if lanes > 1 else None
        for lane in range(lanes):
            value = x if lanes == 1 else self.builder.extract_element(x, ir.Constant(T.I32, lane))
            if compute != value.type:
                value = self.builder.fpext(value, compute)
            out = self.builder.call(fn, [value])
            if compute != T.scalar_type(elem):
                out = self.builder.fptrunc(out, T.scalar_type(elem))
            if lanes == 1:
                return out
            result = self.builder.insert_element(result, out, ir.Constant(T.I32, lane))
        return result

    def _call_extern(self, op) -> ir.Value:
        callee = op.args[0]
        if not isinstance(callee, E.StringImm):
            self.fail("tir.call_extern expects the function name (a string) first", op)
        args = [self.emit_expr(a) for a in op.args[1:]]
        ret = ir.VoidType() if op.dtype.is_handle and not args else T.value_type(op.dtype)
        fn = self.declare_function(callee.value, ret, [a.type for a in args])
        return self.builder.call(fn, args)

    def _access_ptr(self, op) -> ir.Value:
        """``tvm_access_ptr(type_annotation(dtype), data, offset, extent, mask)``: the
        address of element ``offset`` of ``data`` (extent and mask only document it)."""
        ptype, data, offset = op.args[:3]
        if not (isinstance(data, E.Var) and data.dtype.is_handle):
            self.fail("tir.tvm_access_ptr expects a buffer's data pointer as its second "
                      "argument", op)
        index = self.emit_expr(offset)
        if index.type != T.I64:
            index = self.builder.sext(index, T.I64)
        return self.builder.gep(self.emit_expr(data), [index], inbounds=True,
                                source_etype=T.memory_type(ptype.dtype))

    def _prefetch(self, op) -> ir.Value:
        """``tir.prefetch(address, rw, locality, cache_type)`` -> ``llvm.prefetch``: a hint
        that never faults (constant rw 0/1, locality 0-3, cache type 1 = data)."""
        if len(op.args) != 4 or not all(isinstance(a, E.IntImm) for a in op.args[1:]):
            self.fail("tir.prefetch expects an address and three integer constants (rw, "
                      "locality, cache type)", op)
        address = self.emit_expr(op.args[0])
        if not isinstance(address.type, ir.PointerType):
            self.fail("tir.prefetch expects an address (tvm_access_ptr) first", op)
        i32 = ir.IntType(32)
        fn = self.declare_function("llvm.prefetch.p0", ir.VoidType(),
                                   [address.type, i32, i32, i32])
        return self.builder.call(fn, [address] + [i32(a.value) for a in op.args[1:]])

    def _if_then_else(self, op) -> ir.Value:
        """``cond ? a : b`` evaluating only the taken side (a guarded load stays safe)."""
        cond = self.emit_expr(op.args[0])
        # A vector condition evaluates both sides, except that a load on the true side is
        # masked (VectorizeLoop's border tiles); the false side loads nothing.
        if T.is_vector(cond):
            f = self.emit_expr(op.args[2])
            masked = self.emit_masked_load(op.args[1], cond, f) \
                if isinstance(op.args[1], E.BufferLoad) else None
            return masked if masked is not None else \
                self.builder.select(cond, self.emit_expr(op.args[1]), f)
        with self.builder.if_else(cond) as (then, otherwise):
            with then:
                t = self.emit_expr(op.args[1])
                then_block = self.builder.block
            with otherwise:
                f = self.emit_expr(op.args[2])
                else_block = self.builder.block
        phi = self.builder.phi(t.type)
        phi.add_incoming(t, then_block)
        phi.add_incoming(f, else_block)
        return phi
