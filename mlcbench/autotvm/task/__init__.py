"""Tasks, templates, config spaces and dispatch contexts (TVM's ``autotvm.task``)."""
from .dispatcher import (ApplyConfig, ApplyHistoryBest, DispatchContext, FallbackContext,
                         apply_history_best)
from .space import (AnnotateEntity, ConfigEntity, ConfigSpace, FallbackConfigEntity,
                    OtherOptionEntity, ReorderEntity, SplitEntity)
from .task import TASK_TABLE, Task, create, estimate_flop, get_config, template
from .relax_integration import extract_from_program
