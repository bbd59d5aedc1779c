"""PrimFuncs and IRModules as TVMScript, and fragments (a lone statement or expression).

A PrimFunc prints as::

    @T.prim_func
    def mm(A: T.Buffer((128, 128), "float32"), n: T.int32):
        T.func_attr({"global_symbol": "mm", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        Y = T.alloc_buffer((128, 128))
        ...

A buffer parameter is written as an annotation when it is plain (constant shape, no
strides or offset, global scope, its pointer not shared); otherwise the parameter is a
``T.handle`` and the buffer a ``T.match_buffer`` in the body, after its symbolic shape
variables (``n = T.int64()``). The root block is the comment ``# with T.block("root"):``
when it holds nothing but allocations, as in TVM.
"""
from __future__ import annotations

from collections import Counter

from ...tir import expr as E
from ...tir.stmt import (Allocate, AssertStmt, BlockRealize, DeclBuffer, For, IfThenElse,
                         LetStmt, SeqStmt)
from .block import BlockPrinter
from .expr import dtype_annotation
from .frames import render
from .stmt import is_const

TIR_IMPORT = "# from mlcbench.script import tir as T"
IR_IMPORT = "# from mlcbench.script import ir as I"


class TIRPrinter(BlockPrinter):
    """Prints one PrimFunc or one fragment; create a fresh printer for each."""

    def __init__(self, declare_free: bool = True, depth: int = 0, indent: int = 4):
        super().__init__(declare_free=declare_free, depth=depth)
        self.indent = indent

    def text(self) -> str:
        return render(self.root.lines, self.indent)

    def other_value(self, v) -> str:
        from ...tir.buffer import Buffer
        if isinstance(v, Buffer):
            return self.buffer_text(v)
        return repr(v)

    # -- PrimFunc -----------------------------------------------------------------------
    def prim_func(self, func, name: str, private: bool = False) -> str:
        """The function's text at this printer's depth (the root frame is its body)."""
        frame = self.root
        inlined = self._inlinable_params(func)
        params = []
        for param in func.params:
            if param in inlined:
                buffer = func.buffer_map[param]
                params.append(f"{self.define_buffer(buffer, frame)}: "
                              f"{self.buffer_annotation(buffer)}")
            else:
                params.append(f"{self.define_var(param, frame)}: {_param_annotation(param)}")
        if func.attrs:
            frame.emit(f"T.func_attr({self.dict_value(func.attrs)})")
        for param in func.params:
            buffer = func.buffer_map.get(param)
            if buffer is not None and param not in inlined:
                rhs = self.buffer_call(buffer, "T.match_buffer", (self.var_text(param),), frame)
                frame.emit(f"{self.define_buffer(buffer, frame)} = {rhs}")
        self._function_body(func.body)
        pad = " " * (self.indent * (frame.depth - 1))
        decorator = "@T.prim_func(private=True)" if private else "@T.prim_func"
        header = f"{pad}{decorator}\n{pad}def {name}({', '.join(params)}):\n"
        return header + self.text()

    @staticmethod
    def _inlinable_params(func) -> set:
        pointer_uses = Counter(buffer.data for buffer in func.buffer_map.values())
        return {param for param, buffer in func.buffer_map.items()
                if pointer_uses[buffer.data] == 1 and _is_plain_buffer(buffer)}

    def _function_body(self, body) -> None:
        root_block = implicit_root_block(body)
        if root_block is None:
            self.body(body)
            return
        self.root.emit('# with T.block("root"):')
        for buffer in root_block.alloc_buffers:
            self.emit_alloc_buffer(buffer, self.root)
        self.body(root_block.body)


def _param_annotation(param) -> str:
    return "T.handle" if param.dtype == "handle" else dtype_annotation(param.dtype)


def _is_plain_buffer(buffer) -> bool:
    """TVM's ``IsSimpleBuffer``: what a ``T.Buffer(shape, dtype)`` annotation can say."""
    return (not buffer.strides and all(isinstance(s, E.IntImm) for s in buffer.shape)
            and is_const(buffer.elem_offset, 0) and buffer.scope == "global"
            and not buffer.align and buffer.offset_factor == 1 and not buffer.axis_separators)


def implicit_root_block(body):
    """The root block when it can print as a comment, else None (TVM's rule)."""
    if not isinstance(body, BlockRealize) or body.iter_values or not is_const(body.predicate, 1):
        return None
    block = body.block
    if (block.annotations or block.match_buffers or block.reads or block.writes
            or block.init is not None):
        return None
    inner = block.body
    if isinstance(inner, BlockRealize):
        has_blocks = bool(inner.block.iter_vars)
    else:
        has_blocks = contains_block(inner)
    return block if block.alloc_buffers or has_blocks else None


def contains_block(stmt) -> bool:
    """Is there a BlockRealize anywhere in ``stmt``? (statements only; no expression walk)"""
    stack = [stmt]
    while stack:
        s = stack.pop()
        if isinstance(s, BlockRealize):
            return True
        if isinstance(s, SeqStmt):
            stack.extend(s.seq)
        elif isinstance(s, IfThenElse):
            stack.append(s.then_case)
            if s.else_case is not None:
                stack.append(s.else_case)
        elif isinstance(s, (For, LetStmt, Allocate, DeclBuffer, AssertStmt)):
            stack.append(s.body)
    return False


# -- entry points ---------------------------------------------------------------------------

def format_prim_func(func, name: str | None = None, depth: int = 0, indent: int = 4,
                     in_module: bool = False) -> str:
    """One PrimFunc without import header, starting at indentation ``depth``.

    In a module, a function without ``global_symbol`` is ``@T.prim_func(private=True)``
    (reading it back must not give it one). The Relax printer calls this for the TIR
    functions of a mixed module.
    """
    name = name or func.attrs.get("global_symbol") or "main"
    private = in_module and "global_symbol" not in func.attrs
    return TIRPrinter(depth=depth + 1, indent=indent).prim_func(func, name, private)


def format_fragment(obj, indent: int = 4) -> str:
    """A statement or expression on its own; free variables print by their names."""
    printer = TIRPrinter(declare_free=False, indent=indent)
    if isinstance(obj, E.PrimExpr):
        return printer.expr(obj)
    printer.body(obj)
    return printer.text()
