"""The ``T`` namespace of TVMScript (``@T.prim_func``, ``T.Buffer``, ``T.grid`` ...)."""
from .parser import prim_func  # noqa: F401
