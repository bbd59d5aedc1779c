"""Compilation targets: ``Target("llvm")`` for the host CPU, GPUs by tag
(``Target("nvidia/nvidia-a100")``, :mod:`.tags`), ``Target.current()``."""
from .tags import DEFAULT_CUDA_TAG, list_tags
from .target import Target, TargetError, TargetKind, host_cpu_features, host_cpu_name


def create(target) -> Target:
    """TVM's ``tvm.target.create``: a Target from a string (or a Target)."""
    return target if isinstance(target, Target) else Target(target)
