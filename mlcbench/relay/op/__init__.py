"""``relay.op``: the few Relay operators the older tutorials name, as Relax ops.

Each is callable (it builds the Relax call) and carries the Relay name, so that
``autotvm.task.extract_from_program(mod, ops=(relay.op.nn.conv2d,))`` picks the
convolution tasks.
"""
from . import nn

__all__ = ["nn"]
