"""The pieces every model is made of: ``Tensor``, ``Parameter``, ``Module``, ``ModuleList``.

A ``Tensor`` wraps a Relax expression. Nothing computes: while ``export_tvm`` runs a
module's ``forward``, each op emits one binding into the function being built and
returns a ``Tensor`` of the new variable. A ``Parameter`` is a ``Tensor`` whose
expression becomes a function parameter on export, and which can hold trained data.

>>> from mlcbench.relax.frontend import nn
>>> class Net(nn.Module):
...     def __init__(self):
...         self.fc = nn.Linear(4, 2)
...     def forward(self, x):
...         return nn.op.relu(self.fc(x))
>>> [name for name, _ in Net().named_parameters()]
['fc.weight', 'fc.bias']
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from ....ir.errors import IRError
from ....runtime import ndarray
from ...block_builder import BlockBuilder
from ...expr import Expr, Var
from ...struct_info import TensorStructInfo, shape_text

DEFAULT_DTYPE = "float32"


class Tensor:
    """A tensor-valued Relax expression under construction, with operators.

    ``x + y``, ``x * 2.0``, ``x.reshape(1, -1)`` and ``x.permute_dims()`` emit ops
    (see :mod:`~mlcbench.relax.frontend.nn.op`).
    """

    def __init__(self, *, _expr: Expr):
        if not isinstance(_expr, Expr):
            raise IRError(f"nn.Tensor wraps a Relax expression, found {type(_expr).__name__}")
        self._expr = _expr

    @property
    def struct_info(self) -> TensorStructInfo:
        sinfo = self._expr.struct_info
        if not isinstance(sinfo, TensorStructInfo):
            raise IRError(f"nn.Tensor: expected a tensor-valued expression, found {sinfo}")
        return sinfo

    @property
    def shape(self) -> list:
        """Dimensions as ints (symbolic ones as TIR expressions)."""
        dims = self.struct_info.dims
        if dims is None:
            raise IRError(f"nn.Tensor: the shape of {self!r} is unknown")
        return [d.value if hasattr(d, "value") else d for d in dims]

    @property
    def ndim(self) -> int:
        return self.struct_info.ndim

    @property
    def dtype(self) -> str:
        return self.struct_info.dtype

    def __repr__(self) -> str:
        sinfo = self.struct_info
        shape = shape_text(sinfo.dims) if sinfo.dims is not None else f"ndim={sinfo.ndim}"
        return f'{type(self).__name__}({shape}, "{sinfo.dtype}")'

    # -- operators (each emits one binding) ---------------------------------------------
    def __add__(self, other):
        return _op().add(self, other)

    def __radd__(self, other):
        return _op().add(other, self)

    def __sub__(self, other):
        return _op().subtract(self, other)

    def __rsub__(self, other):
        return _op().subtract(other, self)

    def __mul__(self, other):
        return _op().multiply(self, other)

    def __rmul__(self, other):
        return _op().multiply(other, self)

    def __truediv__(self, other):
        return _op().divide(self, other)

    def permute_dims(self, axes=None) -> "Tensor":
        return _op().permute_dims(self, axes)

    def reshape(self, *shape) -> "Tensor":
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else shape
        return _op().reshape(self, shape)

    def astype(self, dtype: str) -> "Tensor":
        return _op().astype(self, dtype)


def _op():
    # op builds on Tensor, so Tensor reaches op only when an operator is used.
    from . import op
    return op


class Parameter(Tensor):
    """A weight of a module: a function parameter once exported, optionally with data.

    >>> w = Parameter((128, 784))
    >>> w.data = np.zeros((128, 784), "float32")     # checked against shape and dtype
    """

    def __init__(self, shape, dtype: str | None = None):
        shape = tuple(int(d) for d in shape)
        # A placeholder until export binds the parameter to a variable of its function.
        super().__init__(_expr=Var("param", TensorStructInfo(shape, dtype or DEFAULT_DTYPE)))
        self._data = None

    @property
    def data(self):
        """The parameter's value as an ``NDArray``, or None when not loaded."""
        return self._data

    @data.setter
    def data(self, value) -> None:
        if value is None:
            self._data = None
            return
        array = value.numpy() if isinstance(value, ndarray.NDArray) else np.asarray(value)
        if tuple(array.shape) != tuple(self.shape) or str(array.dtype) != self.dtype:
            raise IRError(f"Parameter{self._describe()}: expected data of shape "
                          f"{tuple(self.shape)} and dtype {self.dtype}, found shape "
                          f"{tuple(array.shape)} and dtype {array.dtype}")
        self._data = ndarray.array(np.ascontiguousarray(array))

    def to(self, dtype: str | None = None) -> "Parameter":
        """Change the dtype in place (data, if loaded, is cast); returns the parameter."""
        if dtype is not None and dtype != self.dtype:
            data = None if self._data is None else self._data.numpy().astype(dtype)
            self._expr = Var("param", TensorStructInfo(tuple(self.shape), dtype))
            self._data = None
            self.data = data
        return self

    def _describe(self) -> str:
        return f"({tuple(self.shape)}, {self.dtype!r})"


class Module:
    """Base of models. Parameters and submodules are found among the attributes.

    Subclasses set attributes in ``__init__`` (calling ``super().__init__()`` is optional)
    and define ``forward``; ``model(x)`` calls ``forward`` while a module is exported.
    """

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise IRError(f"{type(self).__name__} has no forward(...): define one to export it")

    # -- parameters -----------------------------------------------------------------------
    def named_children(self) -> Iterator[tuple[str, object]]:
        """Attributes that are parameters or modules, in the order they were set."""
        for name, value in vars(self).items():
            if isinstance(value, (Parameter, Module)):
                yield name, value

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """``("fc1.weight", Parameter)`` pairs, depth first; a shared parameter once."""
        seen: set[int] = set()
        for name, param in self._walk_parameters(prefix):
            if id(param) not in seen:
                seen.add(id(param))
                yield name, param

    def _walk_parameters(self, prefix: str):
        for name, child in self.named_children():
            if isinstance(child, Parameter):
                yield prefix + name, child
            else:
                yield from child._walk_parameters(f"{prefix}{name}.")

    def parameters(self) -> Iterator[Parameter]:
        for _, param in self.named_parameters():
            yield param

    def state_dict(self) -> dict[str, Parameter]:
        """Parameters by name, as ``named_parameters`` orders them."""
        return dict(self.named_parameters())

    def load_state_dict(self, state_dict: dict, strict: bool = True):
        """Set each parameter's data from ``{name: array}``; returns (missing, unexpected).

        >>> model.load_state_dict({"fc.weight": w, "fc.bias": b})
        ([], [])
        """
        params = self.state_dict()
        missing = [name for name in params if name not in state_dict]
        unexpected = [name for name in state_dict if name not in params]
        if strict and (missing or unexpected):
            raise IRError(f"{type(self).__name__}.load_state_dict: expected the names "
                          f"{list(params)}; missing {missing}, unexpected {unexpected}")
        for name, value in state_dict.items():
            if name in params:
                params[name].data = value.data if isinstance(value, Parameter) else value
        return missing, unexpected

    def to(self, dtype: str | None = None) -> "Module":
        """Convert every parameter to ``dtype`` in place; returns the module."""
        for param in self.parameters():
            param.to(dtype)
        return self

    def export_tvm(self, spec: dict):
        """The module as a Relax ``IRModule`` and its parameters.

        ``spec`` maps each method to export to its inputs, in the method's order::

            mod, params = model.export_tvm(
                spec={"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})

        Each function takes its inputs, then every parameter (attribute ``num_input``
        counts the inputs); ``params`` lists ``(name, Parameter)`` in that order.
        """
        from .exporter import export
        return export(self, spec)


class ModuleList(Module):
    """A list of modules; their parameters are named by position: ``layers.0.weight``."""

    def __init__(self, modules=()):
        self.modules = list(modules)
        for k, module in enumerate(self.modules):
            if not isinstance(module, Module):
                raise IRError(f"{type(self).__name__}: item {k} is a "
                              f"{type(module).__name__}, expected an nn.Module")

    def named_children(self):
        for k, module in enumerate(self.modules):
            yield str(k), module

    def __iter__(self):
        return iter(self.modules)

    def __getitem__(self, index: int) -> Module:
        return self.modules[index]

    def __len__(self) -> int:
        return len(self.modules)

    def append(self, module: Module) -> None:
        self.modules.append(module)


def emit(expr: Expr, name: str) -> Tensor:
    """Bind ``expr`` to a variable named ``name`` in the function being exported."""
    builder = BlockBuilder.current()
    if builder is None:
        raise IRError(f"nn.op.{name}: ops build IR while a module is exported "
                      f"(model.export_tvm(spec=...)); found no function being built")
    return Tensor(_expr=builder.emit(expr, name))


def expr_of(value, where: str) -> Expr:
    """The Relax expression of an ``nn.Tensor`` argument."""
    if isinstance(value, Tensor):
        return value._expr
    raise IRError(f"{where}: expected an nn.Tensor, found {type(value).__name__}: {value!r}")
