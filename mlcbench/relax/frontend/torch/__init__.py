"""PyTorch into Relax: ``from_fx`` (torch.fx) and ``from_exported_program`` (torch.export).

torch is optional: it is imported by the caller, never by mlcbench; these functions only
read the objects they are given.

>>> import torch
>>> from mlcbench.relax.frontend.torch import from_fx, from_exported_program
>>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU()).eval()
>>> mod = from_fx(torch.fx.symbolic_trace(model), [((1, 4), "float32")])   # doctest: +SKIP
>>> ep = torch.export.export(model, (torch.randn(1, 4),))                 # doctest: +SKIP
>>> mod = from_exported_program(ep)                                       # doctest: +SKIP

Weights become Relax constants, or parameters of ``main`` after the inputs with
``keep_params_as_input=True`` (then :func:`detach_params` hands them out), as in TVM.
The tables ``fx_translator.TABLE`` and ``exported_program_translator.TABLE`` list every
supported torch function, method, module and ATen operator.
"""
from ..common import detach_params
from .exported_program_translator import from_exported_program
from .fx_translator import from_fx

__all__ = ["detach_params", "from_exported_program", "from_fx"]
