"""Ways into Relax from model descriptions: ``relax.frontend.nn`` (PyTorch-like modules).

Import the frontend you use, as in TVM: ``from mlcbench.relax.frontend import nn``
(``onnx``, ``torch``). :func:`detach_params` takes out the weights an importer kept as
parameters, whichever it was.
"""
from .common import detach_params

__all__ = ["detach_params"]
