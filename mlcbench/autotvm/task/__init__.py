"""Tasks, templates, config spaces and dispatch contexts (TVM's ``autotvm.task``)."""
from .dispatcher import (ApplyConfig, ApplyHistoryBest, DispatchContext, FallbackContext,
                         apply_history_best)
from .space import (AnnotateEntity, ConfigEntity, ConfigSpace, FallbackConfigEntity,
                    OtherOptionEntity, ReorderEntity, SplitEntity)
from .task import TASK_TABLE, Task, create, estimate_flop, get_config, template


def __getattr__(name):
    # Extraction from Relax models matches the shipped templates, which themselves
    # import this package: it loads on first use (``mlcbench.autotvm`` loads it too).
    if name == "extract_from_program":
        import importlib
        return importlib.import_module(f"{__name__}.relax_integration").extract_from_program
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
