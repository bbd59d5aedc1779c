"""What a method to export takes: ``spec.Tensor(shape, dtype)`` per input.

>>> spec.Tensor((1, 784), "float32")
spec.Tensor((1, 784), "float32")

A string in a shape is a symbolic dimension, shared by name within one function:
``spec.Tensor(("n", 784), "float32")`` exports ``x: R.Tensor(("n", 784), ...)``.
"""
from __future__ import annotations

from ....ir.errors import IRError
from ....tir.expr import Var as TIRVar
from ...expr import Var
from ...struct_info import TensorStructInfo


class Tensor:
    """An input tensor of a method: its shape (ints or symbolic names) and dtype."""

    def __init__(self, shape, dtype: str = "float32"):
        shape = tuple(shape)
        for dim in shape:
            if isinstance(dim, bool) or not isinstance(dim, (int, str)):
                raise IRError(f"spec.Tensor: a dimension is an int or a name (str), found "
                              f"{dim!r} in shape {shape!r}")
        self.shape, self.dtype = shape, dtype

    def as_var(self, name: str, symbols: dict) -> Var:
        """A Relax parameter named ``name``; ``symbols`` shares dimension variables by name."""
        dims = [symbols.setdefault(d, TIRVar(d, "int64")) if isinstance(d, str) else d
                for d in self.shape]
        return Var(name, TensorStructInfo(dims, self.dtype))

    def __repr__(self) -> str:
        shape = ", ".join(repr(d) for d in self.shape)
        shape = f"({shape},)" if len(self.shape) == 1 else f"({shape})"
        return f'spec.Tensor({shape}, "{self.dtype}")'
