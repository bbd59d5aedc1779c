"""The ``I`` namespace of TVMScript: ``@I.ir_module`` classes of functions.

>>> from mlcbench.script import ir as I, tir as T
>>> @I.ir_module
... class Module:
...     @T.prim_func
...     def main(A: T.Buffer((4,), "float32")): ...
"""
from ..ir.module import GlobalVar  # noqa: F401 -- printed as I.GlobalVar("f")
from .parser import ir_module, module_attrs  # noqa: F401
