"""Scalar TIR expressions as C, parenthesised as TVM prints them.

Every binary operation is wrapped in parentheses (``((i * 4) + j)``), thread
variables read ``((int)threadIdx.x)``, and casts ``((float)x)``: the text learners
see in the course's printed CUDA source.
"""
from __future__ import annotations

from ...ir.errors import CodegenError
from ...tir import expr as E

_INFIX = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "Mod": "%", "EQ": "==", "NE": "!=",
          "LT": "<", "LE": "<=", "GT": ">", "GE": ">=", "And": "&&", "Or": "||"}
_BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "shift_left": "<<",
            "shift_right": ">>"}
# Math calls whose C name is the TIR name (plus "f" for float32 in CUDA).
_SAME_NAME = {"exp", "exp2", "log", "log2", "log10", "sqrt", "fabs", "floor", "ceil", "trunc",
              "sin", "cos", "tan", "tanh", "pow", "fma", "erf", "nearbyint", "rsqrt"}
_RENAMED = {"round": "rint"}


class ExprPrinter:
    """Mixin: needs ``self.dialect``, ``self.names`` ({Var: str}), ``self.buffer_name(buffer)``,
    ``self.fresh_name(hint)``, ``self.line(text)``, ``self.analyzer`` (an Analyzer that
    knows the loop ranges, for signed division) and ``self.guard_depth`` (0 outside the
    branches of an ``if_then_else``)."""

    def expr(self, node) -> str:
        if node.dtype.lanes > 1 and not isinstance(node, E.StringImm):
            return self.vector_expr(node)
        method = getattr(self, "_expr_" + type(node).__name__, None)
        if method is None:
            raise CodegenError(f"{self.dialect.name} source: cannot print expression "
                               f"{type(node).__name__} `{node.script()}`")
        return method(node)

    def _expr_IntImm(self, node):
        if node.dtype.is_bool:
            return "true" if node.value else "false"
        # A cast keeps a 64-bit constant 64-bit in C, whatever its value.
        if node.dtype.bits == 64:
            return f"(({self.dialect.c_type(node.dtype)}){node.value})"
        return str(node.value)

    def _expr_FloatImm(self, node):
        return self.dialect.float_literal(node.value, node.dtype)

    def _expr_Var(self, node):
        name = self.names.get(node)
        if name is None:
            raise CodegenError(f"{self.dialect.name} source: variable {node.name!r} is used "
                               "but not bound in the kernel (not a parameter, loop or let)")
        return name

    _expr_SizeVar = _expr_Var

    def _infix(self, node):
        return f"({self.expr(node.a)} {_INFIX[type(node).__name__]} {self.expr(node.b)})"

    _expr_Add = _expr_Sub = _expr_Mul = _expr_EQ = _expr_NE = _infix
    _expr_LT = _expr_LE = _expr_GT = _expr_GE = _expr_And = _expr_Or = _infix

    def _expr_Div(self, node):
        return self._infix(node)

    def _expr_Mod(self, node):
        if node.dtype.is_float:
            fmod = self.dialect.math("fmod", node.dtype)
            return f"{fmod}({self.expr(node.a)}, {self.expr(node.b)})"
        return self._infix(node)

    def _expr_FloorDiv(self, node):
        a, b = self.expr(node.a), self.expr(node.b)
        if node.dtype.is_float:
            return f"{self.dialect.math('floor', node.dtype)}(({a} / {b}))"
        shift = _log2(node.b)
        if shift is not None:                 # an arithmetic shift floors, as TVM prints it
            return f"({a} >> {shift})"
        if self._non_negative(node.a) and self._non_negative(node.b):
            # For non-negative operands C's truncating / is already floor division.
            return f"({a} / {b})"
        # floor(a / b) = a / b - 1 when the remainder is nonzero and the signs differ
        return f"(({a} / {b}) - ((({a} % {b}) != 0) && ((({a} % {b}) < 0) != ({b} < 0))))"

    def _expr_FloorMod(self, node):
        a, b = self.expr(node.a), self.expr(node.b)
        if node.dtype.is_float:
            return f"({a} - ({self.dialect.math('floor', node.dtype)}(({a} / {b})) * {b}))"
        shift = _log2(node.b)
        if shift is not None:
            # A power-of-two floor modulo is a mask, also for negative a (two's complement).
            return f"({a} & {(1 << shift) - 1})"
        if self._non_negative(node.a) and self._non_negative(node.b):
            return f"({a} % {b})"
        return f"((({a} % {b}) + {b}) % {b})"

    def _non_negative(self, node) -> bool:
        return self.analyzer.can_prove_greater_equal(node, 0)

    def _expr_Min(self, node):
        return self._min_max(node, "min")

    def _expr_Max(self, node):
        return self._min_max(node, "max")

    def _min_max(self, node, name: str):
        if node.dtype.is_float:
            name = self.dialect.math("f" + name, node.dtype)
        return f"{name}({self.expr(node.a)}, {self.expr(node.b)})"

    def _expr_Not(self, node):
        return f"(!{self.expr(node.a)})"

    def _expr_Select(self, node):
        return (f"({self.expr(node.condition)} ? {self.expr(node.true_value)} : "
                f"{self.expr(node.false_value)})")

    def _expr_Cast(self, node):
        return f"(({self.dialect.c_type(node.dtype)}){self.expr(node.value)})"

    def _expr_Let(self, node):
        """C has no let-expression: the binding becomes a local variable declared on the
        line before the statement being printed (TIR values have no side effects)."""
        if self.guard_depth:
            raise CodegenError(f"{self.dialect.name} source: a Let inside a branch of "
                               f"if_then_else `{node.script()}` would be computed before "
                               "its guard; bind it outside the branch")
        name = self.fresh_name(node.var.name)
        self.line(f"{self.dialect.c_type(node.var.dtype)} {name} = {self.expr(node.value)};")
        self.names[node.var] = name
        return self.expr(node.body)

    def _expr_BufferLoad(self, node):
        return f"{self.buffer_name(node.buffer)}[{self.expr(self.flat_index(node))}]"

    def _expr_Call(self, node):
        name = node.op[4:] if node.op.startswith("tir.") else node.op
        if name in ("call_extern", "call_pure_extern"):
            return f"{node.args[0].value}({', '.join(self.expr(a) for a in node.args[1:])})"
        if name == "if_then_else":
            condition = self.expr(node.args[0])
            self.guard_depth += 1
            try:
                taken, other = self.expr(node.args[1]), self.expr(node.args[2])
            finally:
                self.guard_depth -= 1
            return f"({condition} ? {taken} : {other})"
        if name == "likely":
            return self.expr(node.args[0])
        if name in _BITWISE:
            return f"({self.expr(node.args[0])} {_BITWISE[name]} {self.expr(node.args[1])})"
        if name == "bitwise_not":
            return f"(~{self.expr(node.args[0])})"
        if name == "tvm_access_ptr":
            return f"({self.expr(node.args[1])} + {self.expr(node.args[2])})"
        if name == "tvm_warp_shuffle":
            return self._warp_shuffle(node)
        return self._math_call(node, name)

    def _warp_shuffle(self, node) -> str:
        """``tvm_warp_shuffle(mask, value, lane, width, warp_size)`` (LowerWarpMemory)."""
        if self.dialect.name != "cuda":
            raise CodegenError(f"{self.dialect.name} source: a warp shuffle (from a 'warp' "
                               "buffer) prints only as CUDA's __shfl_sync; use 'shared' "
                               "memory for OpenCL")
        mask, value, lane, width = node.args[:4]
        # The mask in hex, as CUDA code writes it (its decimal would be a long constant).
        mask_text = f"{mask.value:#x}" if hasattr(mask, "value") else self.expr(mask)
        return (f"__shfl_sync({mask_text}, {self.expr(value)}, {self.expr(lane)}, "
                f"{self.expr(width)})")

    def _math_call(self, node, name: str) -> str:
        args = [self.expr(a) for a in node.args]
        dtype = node.args[0].dtype if node.args else node.dtype
        if name in _SAME_NAME or name in _RENAMED:
            return f"{self.dialect.math(_RENAMED.get(name, name), dtype)}({', '.join(args)})"
        if name == "sigmoid":
            one = self.dialect.float_literal(1.0, dtype)
            exp = self.dialect.math("exp", dtype)
            return f"({one} / ({one} + {exp}((-{args[0]}))))"
        if name == "abs":
            return f"{self.dialect.math('fabs', dtype) if dtype.is_float else 'abs'}({args[0]})"
        if name == "isnan":
            return f"isnan({args[0]})"
        raise CodegenError(f"{self.dialect.name} source: no C spelling for the intrinsic "
                           f"{node.op!r} in `{node.script()}`")

    def flat_index(self, load_or_store):
        indices, buffer = load_or_store.indices, load_or_store.buffer
        if len(indices) != 1:
            return buffer.offset_of(indices)
        offset = buffer.elem_offset
        if isinstance(offset, E.IntImm) and offset.value == 0:
            return indices[0]
        return offset + indices[0]


def _log2(node) -> int | None:
    """k when ``node`` is the constant 2**k (k >= 0), else None."""
    if isinstance(node, E.IntImm) and node.value > 0 and node.value & (node.value - 1) == 0:
        return node.value.bit_length() - 1
    return None
