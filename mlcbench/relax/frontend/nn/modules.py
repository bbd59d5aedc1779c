"""Layers: ``Linear``, ``Conv2D``, ``ReLU``, ``MaxPool2d``, ``Sequential``.

Weights follow the course (and PyTorch): ``Linear`` holds ``weight (out, in)`` and
computes ``x @ weight.T + bias``; ``Conv2D`` holds OIHW ``weight`` and a per-channel
``bias``.

>>> model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
>>> [name for name, _ in model.named_parameters()]
['0.weight', '0.bias', '2.weight', '2.bias']
"""
from __future__ import annotations

from ....ir.errors import IRError
from . import op
from .core import Module, ModuleList, Parameter, Tensor


def _pair(value, what: str) -> tuple[int, int]:
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise IRError(f"{what} is an int or a pair of ints, found {value!r}")
    return value


class Linear(Module):
    """``x @ weight.T + bias`` with ``weight (out_features, in_features)``.

    Exported as ``R.permute_dims`` of the weight, ``R.matmul`` and ``R.add``, as TVM
    exports it.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype: str | None = None, out_dtype: str | None = None):
        self.in_features, self.out_features, self.out_dtype = in_features, out_features, out_dtype
        self.weight = Parameter((out_features, in_features), dtype)
        self.bias = Parameter((out_features,), dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        x = op.matmul(x, op.permute_dims(self.weight), out_dtype=self.out_dtype)
        return x + self.bias if self.bias is not None else x


class Conv2D(Module):
    """2-D convolution of NCHW data: ``weight (out, in // groups, kh, kw)``, ``bias (out,)``."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True,
                 dtype: str | None = None, data_layout: str = "NCHW"):
        if in_channels % groups or out_channels % groups:
            raise IRError(f"Conv2D: in_channels ({in_channels}) and out_channels "
                          f"({out_channels}) must be multiples of groups ({groups})")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _pair(kernel_size, "Conv2D: kernel_size")
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.groups, self.data_layout = groups, data_layout
        self.weight = Parameter((out_channels, in_channels // groups, *self.kernel_size), dtype)
        self.bias = Parameter((out_channels,), dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return op.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                         self.groups, self.data_layout)


class ReLU(Module):
    """``max(x, 0)`` elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return op.relu(x)


class MaxPool2d(Module):
    """Max over windows of NCHW data; ``stride`` defaults to ``kernel_size``."""

    def __init__(self, kernel_size, stride=None, padding=0):
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x: Tensor) -> Tensor:
        return op.max_pool2d(x, self.kernel_size, self.stride, self.padding)


class Sequential(ModuleList):
    """Modules applied in order; parameters are named by position (``0.weight``)."""

    def __init__(self, *modules: Module):
        super().__init__(modules)

    def forward(self, x: Tensor) -> Tensor:
        for module in self.modules:
            x = module(x)
        return x
