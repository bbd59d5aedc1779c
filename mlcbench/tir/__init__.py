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
                 nearbyint, pow, round, rsqrt, sigmoid, sin, sqrt, tan, tanh, trunc, truncdiv,
                 truncmod, tvm_storage_sync)
from .stmt import (Allocate, AssertStmt, Block, BlockRealize, BufferStore, DeclBuffer,
                   Evaluate, For, ForKind, IfThenElse, IterType, IterVar, LetStmt, SeqStmt,
                   Stmt, seq)
from ..ir.errors import ScheduleError
from . import analysis
from .schedule import BlockRV, ExprRV, Instruction, LoopRV, Schedule, Trace
from .schedule.primitives.index_map import IndexMap
from .tensor_intrin import TensorIntrin

# The older tutorials' names for index arithmetic; indices are non-negative, where TVM
# defines them as floor division and modulo.
indexdiv, indexmod = floordiv, floormod
