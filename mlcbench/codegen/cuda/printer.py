"""One device kernel of the GPU lowered form -> CUDA C (or OpenCL C) text, for reading.

The top nest of thread-bound loops prints no loop: its variables read
``((int)blockIdx.x)`` / ``((int)threadIdx.x)`` and its thread extents become
``__launch_bounds__``. ``Allocate(scope="shared")`` becomes ``__shared__ float
A_shared[130];``, ``scope="local"`` a per-thread array, the barrier
``__syncthreads();``. Vector statements print as one ``float4`` access when it is
contiguous and aligned, otherwise lane by lane (see lanes.py).
"""
from __future__ import annotations

import re

from ...arith import Analyzer
from ...ir.errors import CodegenError
from ...ir.dtype import DataType
from ...tir import expr as E
from ...tir.stmt import ForKind
from ..llvm.function import symbolic_shape_vars
from ..llvm.memory import contiguous_base
from .expr_printer import ExprPrinter
from .lanes import aligned_to, lane_of

_UNROLL_KINDS = (ForKind.UNROLLED,)
# Names a variable or array must not take in the printed C (keywords and built-ins).
_RESERVED = frozenset("""auto bool break case char const continue default do double else enum
extern false float for goto half if inline int long register restrict return short signed
sizeof static struct switch true typedef union unsigned void volatile while threadIdx
blockIdx blockDim gridDim warpSize min max abs kernel global local constant""".split())


def is_barrier(stmt) -> bool:
    value = getattr(stmt, "value", None)
    return isinstance(value, E.Call) and value.op in ("tir.tvm_storage_sync", "tvm_storage_sync")


class KernelPrinter(ExprPrinter):
    """Prints ``func`` (a device kernel PrimFunc) in ``dialect``; ``print_kernel()``."""

    def __init__(self, dialect, func, symbol: str):
        self.dialect, self.func, self.symbol = dialect, func, symbol
        self.names: dict = {}
        self.taken: set = set()
        self.buffer_names: dict = {}       # data Var -> printed array name
        self.buffer_scopes: dict = {}      # data Var -> "global" / "shared" / "local"
        self.vector_arrays: set = set()    # data Vars read or written as float4
        self.threads = {"threadIdx.x": 1, "threadIdx.y": 1, "threadIdx.z": 1}
        self.analyzer = Analyzer()
        self.guard_depth = 0
        self.lines: list = []
        self.depth = 1

    # -- names -------------------------------------------------------------------------
    def fresh_name(self, hint: str) -> str:
        base = re.sub(r"\W", "_", hint or "v")
        # A C identifier cannot start with a digit.
        base = base if not base[0].isdigit() else "v_" + base
        name, k = base, 0
        while name in self.taken or name in _RESERVED:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name

    def buffer_name(self, buffer) -> str:
        name = self.buffer_names.get(buffer.data)
        if name is None:
            raise CodegenError(f"{self.dialect.name} source of {self.symbol}: buffer "
                               f"{buffer.name!r} is accessed but is neither a parameter nor "
                               "allocated in the kernel")
        return name

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    # -- the kernel --------------------------------------------------------------------
    def print_kernel(self) -> str:
        params = [self._param(p) for p in self.func.params]
        params += [self._shape_param(v) for v in symbolic_shape_vars(self.func)]
        self.stmt(self.func.body)
        threads = (self.threads["threadIdx.x"], self.threads["threadIdx.y"],
                   self.threads["threadIdx.z"])
        return "\n".join([self.dialect.signature(self.symbol, params, threads)]
                         + self.lines + ["}"])

    def _param(self, param) -> str:
        name = self.fresh_name(param.name)
        self.names[param] = name
        buffer = self.func.buffer_map.get(param)
        if buffer is None and not param.dtype.is_handle:
            return f"{self.dialect.c_type(param.dtype, f'parameter {param.name}')} {name}"
        if buffer is None:
            annotation = param.type_annotation
            pointee = (self.dialect.c_type(annotation[0]) if isinstance(annotation, tuple)
                       else "void")
            return f"{self.dialect.global_qualifier}{pointee}*{self.dialect.restrict} {name}"
        self.buffer_names[buffer.data] = name
        self.buffer_scopes[buffer.data] = "global"
        c_type = self.dialect.c_type(buffer.dtype, f"parameter {param.name}")
        return f"{self.dialect.global_qualifier}{c_type}*{self.dialect.restrict} {name}"

    def _shape_param(self, var) -> str:
        """A symbolic dimension (``n`` of ``A: T.Buffer((n,))``): after the parameters,
        64 bits wide, as the PTX entry and the launch pass it."""
        name = self.fresh_name(var.name)
        self.names[var] = name
        return f"{self.dialect.c_type(DataType('int64'), f'dimension {var.name}')} {name}"

    # -- statements --------------------------------------------------------------------
    def stmt(self, node) -> None:
        method = getattr(self, "_stmt_" + type(node).__name__, None)
        if method is None:
            raise CodegenError(f"{self.dialect.name} source of {self.symbol}: cannot print "
                               f"{type(node).__name__} (blocks must be lowered first: "
                               "mlcbench.tir.transform.lower_gpu)")
        method(node)

    def _stmt_SeqStmt(self, node):
        for child in node.seq:
            self.stmt(child)

    def _stmt_DeclBuffer(self, node):
        self.stmt(node.body)

    def _stmt_Evaluate(self, node):
        if is_barrier(node):
            self.line(self.dialect.barrier)
        elif not isinstance(node.value, (E.IntImm, E.FloatImm)):
            self.line(self.expr(node.value) + ";")

    def _stmt_LetStmt(self, node):
        name = self.fresh_name(node.var.name)
        self.line(f"{self.dialect.c_type(node.var.dtype)} {name} = {self.expr(node.value)};")
        self.names[node.var] = name
        self.stmt(node.body)

    def _stmt_AssertStmt(self, node):
        self.line(f"assert({self.expr(node.condition)});")
        self.stmt(node.body)

    def _stmt_IfThenElse(self, node):
        self.line(f"if ({_unwrap(self.expr(node.condition))}) {{")
        self._nested(node.then_case)
        if node.else_case is not None:
            self.line("} else {")
            self._nested(node.else_case)
        self.line("}")

    def _nested(self, body) -> None:
        self.depth += 1
        self.stmt(body)
        self.depth -= 1

    def _stmt_For(self, node):
        if node.kind == ForKind.THREAD_BINDING:
            self._thread_loop(node)
            return
        name = self.fresh_name(node.loop_var.name)
        self.names[node.loop_var] = name
        self.analyzer.bind(node.loop_var, E.Range(node.min, node.extent), allow_override=True)
        if node.kind in _UNROLL_KINDS or (node.annotations or {}).get("pragma_unroll"):
            self.line("#pragma unroll")
        begin, extent = self.expr(node.min), self.expr(node.extent)
        # Most loops start at 0; print their bound as the bare extent.
        end = extent if begin == "0" else f"({begin} + {extent})"
        c_type = self.dialect.c_type(node.loop_var.dtype)
        self.line(f"for ({c_type} {name} = {begin}; {name} < {end}; ++{name}) {{")
        self._nested(node.body)
        self.line("}")

    def _thread_loop(self, node) -> None:
        binding = node.thread_binding
        tag = binding.thread_tag if binding is not None else ""
        self.names[node.loop_var] = self.dialect.thread_var(tag)
        # The grid may be computed at launch (from the symbolic dimensions); the
        # threads of a block print as __launch_bounds__.
        if not isinstance(node.extent, E.IntImm) and tag in self.threads:
            raise CodegenError(f"{self.dialect.name} source of {self.symbol}: the {tag} loop "
                               f"{node.loop_var.name!r} needs a constant extent")
        # The outermost loop of a tag gives the block extent for __launch_bounds__.
        if tag in self.threads:
            self.threads[tag] = node.extent.value
        self.analyzer.bind(node.loop_var, E.Range(0, node.extent), allow_override=True)
        self.stmt(node.body)

    def _stmt_Allocate(self, node):
        buffer = node.buffer
        scope = _storage_class(buffer.scope, self.symbol, buffer.name)
        count = 1
        for extent in buffer.shape:
            if not isinstance(extent, E.IntImm):
                raise CodegenError(f"{self.dialect.name} source of {self.symbol}: the "
                                   f"{scope} array {buffer.name!r} needs a constant size")
            count *= extent.value
        name = self.fresh_name(buffer.name)
        self.buffer_names[buffer.data] = name
        self.buffer_scopes[buffer.data] = scope
        # Declared after the body: only then is it known whether float4 reads need alignment.
        declaration = len(self.lines)
        self.stmt(node.body)
        self.lines.insert(declaration, "  " * self.depth + self._declaration(buffer, name,
                                                                            scope, count))

    def _declaration(self, buffer, name: str, scope: str, count: int) -> str:
        """``__shared__ float A_shared[130];``; arrays read as float4 get 16-byte alignment."""
        qualifier = self.dialect.shared_qualifier if scope == "shared" else ""
        c_type = self.dialect.c_type(buffer.dtype)
        if buffer.data not in self.vector_arrays:
            return f"{qualifier}{c_type} {name}[{count}];"
        if self.dialect.name == "opencl":
            return f"{qualifier}{c_type} {name}[{count}] __attribute__((aligned(16)));"
        return f"{qualifier}__align__(16) {c_type} {name}[{count}];"

    def _stmt_BufferStore(self, node):
        index = self.flat_index(node)
        name = self.buffer_name(node.buffer)
        if index.dtype.lanes == 1:
            self.line(f"{name}[{self.expr(index)}] = {self.expr(node.value)};")
            return
        lanes = index.dtype.lanes
        pointer = self._vector_pointer(node.buffer, index)
        if pointer is not None:
            self.line(f"{pointer} = {self.vector_expr(node.value, lanes)};")
            return
        for lane in range(lanes):
            self.line(f"{name}[{self.expr(lane_of(index, lane))}] = "
                      f"{self.expr(lane_of(node.value, lane))};")

    # -- vectors -----------------------------------------------------------------------
    def _vector_pointer(self, buffer, index) -> str | None:
        """``*(float4*)(A + base)`` when ``buffer[index]`` is contiguous, aligned and has
        a C vector type; None otherwise (then it is accessed lane by lane)."""
        lanes = index.dtype.lanes
        vtype = self.dialect.vector_type(buffer.dtype.with_lanes(lanes))
        base = contiguous_base(index)
        if vtype is None or base is None or not aligned_to(base, buffer, lanes):
            return None
        self.vector_arrays.add(buffer.data)
        cast = self.dialect.vector_pointer(vtype, self.buffer_scopes.get(buffer.data, "global"))
        return f"*{cast}({self.buffer_name(buffer)} + {self.expr(base)})"

    def vector_expr(self, node, lanes: int | None = None) -> str:
        """A vector value: an aligned float4 load, or ``make_float4(lane0, lane1, ...)``."""
        lanes = lanes or node.dtype.lanes
        vtype = self.dialect.vector_type(node.dtype.with_lanes(lanes))
        if vtype is None:
            raise CodegenError(f"{self.dialect.name} source of {self.symbol}: no C vector "
                               f"type for {node.dtype.with_lanes(lanes)} in `{node.script()}`")
        if isinstance(node, E.BufferLoad) and node.dtype.lanes == lanes:
            pointer = self._vector_pointer(node.buffer, self.flat_index(node))
            if pointer is not None:
                return pointer
        return self.dialect.make_vector(vtype, [self.expr(lane_of(node, k))
                                                for k in range(lanes)])


def _unwrap(text: str) -> str:
    """``((a < b))`` -> ``(a < b)``: drop one pair of parentheses around the whole text."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for position, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and position < len(text) - 1:
            return text
    return text[1:-1]


def _storage_class(scope: str, symbol: str, name: str) -> str:
    if scope.startswith("shared"):
        return "shared"
    if scope.startswith("local"):
        return "local"
    raise CodegenError(f"device kernel {symbol}: array {name!r} has storage scope {scope!r}; "
                       "a kernel allocates only 'shared' (per block) or 'local' (per thread) "
                       "memory, global intermediates belong to the host function")
