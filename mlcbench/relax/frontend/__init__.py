"""Ways into Relax from model descriptions: ``relax.frontend.nn`` (PyTorch-like modules).

Import the frontend you use, as in TVM: ``from mlcbench.relax.frontend import nn``
(``onnx``, ``torch``). :func:`detach_params` takes out the weights an importer kept as
parameters, whichever it was.
"""
from .common import detach_params

__all__ = ["detach_params"]

_FRONTENDS = ("nn", "onnx", "torch")


def __getattr__(name):
    """``relax.frontend.onnx`` (``nn``, ``torch``) without an import of its own; the
    ONNX and PyTorch importers load their framework only then."""
    if name in _FRONTENDS:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
