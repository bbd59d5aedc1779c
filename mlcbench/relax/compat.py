"""Spellings of the 2022 MLC course (chapter 9) kept as aliases of today's names.

The course's Relax chapter writes, inside ``@tvm.script.ir_module``::

    @R.function
    def main(x: Tensor((3, 4), "float32"), y: Tensor((3, 4), "float32")):
        with relax.dataflow():
            lv0 = relax.multiply(x, y)
            gv0 = relax.add(lv0, y)
            relax.output(gv0)
        return gv0

``relax.dataflow`` / ``relax.output`` are ``R.dataflow`` / ``R.output``, the element-wise
ops are ``relax.op``'s, ``Tensor`` is ``R.Tensor`` (the parser resolves the bare name)
and ``relax.DynTensorType(ndim, dtype)`` is ``TensorStructInfo(ndim=ndim, dtype=dtype)``.
"""
from __future__ import annotations

from .op import add, divide, multiply, subtract  # noqa: F401  (relax.add, relax.multiply ...)
from .struct_info import TensorStructInfo
from .tvmscript.namespace import dataflow, output  # noqa: F401


def DynTensorType(ndim: int = -1, dtype: str = "float32") -> TensorStructInfo:  # noqa: N802
    """The 2022 type of a tensor of ``ndim`` dimensions (extents unknown)."""
    return TensorStructInfo(dtype=dtype, ndim=ndim)


def _alias_op_names() -> None:
    """``relax.op.linear`` (course chapter 6) is TVM's name for ``relax.op.nn.linear``;
    chapter 9 writes ``relax.op.dense`` and ``relax.op.relu`` (the ops ``relax.nn.dense``
    and ``relax.nn.relu``)."""
    from . import op
    for name in ("linear", "dense", "relu"):
        if not hasattr(op, name):
            setattr(op, name, getattr(op.nn, name))


_alias_op_names()
