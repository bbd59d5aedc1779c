"""Foundation of the IR: nodes, dtypes, modules, structural equality, passes, errors."""
from .dtype import DataType, dtype
from .errors import (CodegenError, InvalidTypeError, InvalidValueError, IRError, MLCBenchError,
                     ParseError, RuntimeError_, ScheduleError, StructuralMismatch, TuningError)
from .module import GlobalVar, IRModule
from .op import Op
from .node import Node, node
from .span import Span
from .structural import assert_structural_equal, structural_equal, structural_hash
from . import instrument, transform
