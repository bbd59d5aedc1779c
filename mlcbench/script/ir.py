"""The ``I`` namespace of TVMScript (``@I.ir_module``)."""
from .parser import ir_module  # noqa: F401
