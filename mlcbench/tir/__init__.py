"""TensorIR: loops, blocks and buffers -- the level where schedules act."""
from .buffer import Buffer, BufferRegion, MatchBufferRegion, decl_buffer
from .expr import (EQ, GE, GT, LE, LT, NE, Add, And, BinaryOp, Broadcast, BufferLoad, Call,
                   Cast, Div, FloatImm, FloorDiv, FloorMod, IntImm, Let, Max, Min, Mod, Mul,
                   Not, Or, PrimExpr, Ramp, Range, Select, SizeVar, StringImm, Sub, Var, cast,
                   const, convert)
from .function import PrimFunc
from .functor import StmtExprMutator, StmtExprVisitor, post_order_visit, substitute
from . import stmt_functor
from .op import (abs, call_extern, ceil, cos, erf, exp, exp2, floor, floordiv, floormod, fma,
                 if_then_else, isnan, log, log2, log10, max, max_value, min, min_value,
                 nearbyint, pow, reinterpret, round, rsqrt, shift_left, shift_right, sigmoid,
                 sin, sqrt, tan, tanh, trunc, truncdiv, truncmod, tvm_storage_sync)
from .stmt import (Allocate, AssertStmt, Block, BlockRealize, BufferStore, DeclBuffer,
                   Evaluate, For, ForKind, IfThenElse, IterType, IterVar, LetStmt, SeqStmt,
                   Stmt, seq)
from ..ir.errors import ScheduleError

# The nodes above are what lower layers (arith, codegen, the script printer) import
# through this package; the schedule, analyses and passes sit above them and import
# arith, so they load on first use and importing a node never runs them.
_LAZY = {
    "BlockRV": ".schedule", "ExprRV": ".schedule", "Instruction": ".schedule",
    "LoopRV": ".schedule", "Schedule": ".schedule", "Trace": ".schedule",
    "IndexMap": ".schedule.primitives.index_map", "TensorIntrin": ".tensor_intrin",
}
_LAZY_SUBMODULES = ("analysis", "schedule", "tensor_intrin", "transform", "build")

# The older tutorials' names for index arithmetic; indices are non-negative, where TVM
# defines them as floor division and modulo.
indexdiv, indexmod = floordiv, floormod


def __getattr__(name):
    import importlib
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
