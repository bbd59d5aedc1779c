"""Compilation targets: ``Target("llvm")`` for the host CPU, ``Target.current()``."""
from .target import Target, TargetError, TargetKind, host_cpu_features, host_cpu_name


def create(target) -> Target:
    """TVM's ``tvm.target.create``: a Target from a string (or a Target)."""
    return target if isinstance(target, Target) else Target(target)
