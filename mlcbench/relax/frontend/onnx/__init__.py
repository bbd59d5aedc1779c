"""ONNX import: ``from_onnx(model, shape_dict=None, keep_params_in_input=False)``.

>>> import onnx
>>> from mlcbench import relax
>>> from mlcbench.relax.frontend.onnx import from_onnx
>>> mod = from_onnx(onnx.load("squeezenet.onnx"), {"data_0": (1, 3, 224, 224)})
>>> vm = relax.VirtualMachine(relax.build(mod, "llvm"), mlcbench.cpu())

The ``onnx`` package is needed only here (``pip install mlcbench[onnx]``); importing
mlcbench does not import it. Operators and opsets: :func:`supported_operators`.
"""
from __future__ import annotations

from .common import OnnxImportError
from .table import supported_operators


def from_onnx(model, shape_dict=None, keep_params_in_input: bool = False):
    """Translate an ONNX model into an IRModule whose ``main`` Relax function takes the
    graph's inputs and returns its outputs (a tuple when there are several).

    Parameters
    ----------
    model : onnx.ModelProto, a path to a ``.onnx`` file, or its bytes.
    shape_dict : dict, optional
        Input name -> static shape; needed for inputs whose shape in the model is symbolic,
        and overriding the model's shape otherwise (say, another batch size).
    keep_params_in_input : bool
        False: initializers become constants of the function. True: float initializers
        become trailing parameters of ``main`` and their values are in
        ``mod["main"].attrs["params"]`` (in parameter order), as in TVM.
    """
    try:
        import onnx  # noqa: F401
    except ImportError as err:
        raise OnnxImportError("from_onnx needs the onnx package: pip install "
                              "mlcbench[onnx] (or pip install onnx)") from err
    from .importer import GraphImporter, load_model
    if shape_dict is not None and not hasattr(shape_dict, "items"):
        raise OnnxImportError(f"shape_dict maps input names to shapes, found "
                              f"{type(shape_dict).__name__}")
    return GraphImporter(load_model(model), shape_dict, keep_params_in_input).run()


__all__ = ["OnnxImportError", "from_onnx", "supported_operators"]
