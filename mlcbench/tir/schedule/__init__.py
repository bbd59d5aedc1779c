"""The TensorIR Schedule: pure primitives behind a recording, transactional facade."""
from ...ir.errors import ScheduleError
from .schedule import Schedule
from .state import ScheduleState
from .trace import BlockRV, ExprRV, Instruction, LoopRV, Trace
