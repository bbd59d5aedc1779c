"""Explicit memory: the ops ``StaticPlanBlockMemory`` writes and the VM executes.

``R.memory.alloc_storage`` reserves a block of bytes; ``R.memory.alloc_tensor`` views
part of it as a tensor. Planning lets tensors whose lifetimes do not overlap share one
storage::

    storage = R.memory.alloc_storage(R.shape([512]), virtual_device_index=0,
                                     storage_scope="global", dtype="float32")
    alloc = R.memory.alloc_tensor(storage, R.shape([1, 128]), offset=0, dtype="float32")

The storage shape counts bytes, as in TVM; ``dtype`` names what the planner reserved it
for (storages are shared only between tensors of one dtype).
"""
from __future__ import annotations

from ..expr import ShapeExpr
from ..struct_info import ObjectStructInfo, TensorStructInfo
from .registry import make_call, register_op


def _alloc_tensor_infer(call):
    shape = call.args[1]
    return TensorStructInfo(shape.values if hasattr(shape, "values") else None,
                            call.attrs.dtype)


register_op("relax.memory.alloc_storage", lambda call: ObjectStructInfo(), "opaque",
            doc="reserve a block of bytes: alloc_storage(R.shape([nbytes]), ...)")
register_op("relax.memory.alloc_tensor", _alloc_tensor_infer, "opaque",
            doc="a tensor viewing a storage: alloc_tensor(storage, R.shape([...]), ...)")


def alloc_storage(size, virtual_device_index: int = 0, storage_scope: str = "global",
                  dtype: str = "float32"):
    """A storage of ``size`` bytes (``R.shape([nbytes])``, or a list of one int).

    >>> alloc_storage([512], dtype="float32").struct_info
    R.Object
    """
    size = size if isinstance(size, ShapeExpr) else ShapeExpr(size)
    return make_call("relax.memory.alloc_storage", (size,),
                     {"virtual_device_index": int(virtual_device_index),
                      "storage_scope": str(storage_scope), "dtype": str(dtype)})


def alloc_tensor(storage, shape, offset: int = 0, dtype: str = "float32"):
    """A tensor of ``shape`` and ``dtype`` that lives in ``storage`` from byte ``offset``."""
    shape = shape if isinstance(shape, ShapeExpr) else ShapeExpr(shape)
    return make_call("relax.memory.alloc_tensor", (storage, shape),
                     {"offset": int(offset), "dtype": str(dtype)})


__all__ = ["alloc_storage", "alloc_tensor"]
