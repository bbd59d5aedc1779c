"""Parameter dicts as bytes: ``save_param_dict`` / ``load_param_dict``.

The older TVM tutorials write the weights of a compiled model next to its library::

    with open("deploy.params", "wb") as f:
        f.write(relay.save_param_dict(params))
    module.load_params(bytearray(open("deploy.params", "rb").read()))

mlcbench stores the dict as a numpy ``.npz`` archive (uncompressed): one ``.npy``
member per name, readable with ``numpy.load(path)`` by anyone. Reading never unpickles:
object arrays are refused on both sides, so a parameter file is data, never code.

>>> blob = save_param_dict({"w": np.ones((2, 2), "float32")})
>>> load_param_dict(blob)["w"].shape
(2, 2)
"""
from __future__ import annotations

import io
import zipfile

import numpy as np

from .errors import ArgumentTypeError, ArgumentValueError


def _as_numpy(name, value) -> np.ndarray:
    array = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
    if array.dtype.hasobject:
        raise ArgumentTypeError(f"save_param_dict: parameter {name!r} holds Python objects "
                                f"({type(value).__name__}); only numeric arrays are saved")
    return array


def save_param_dict(params: dict) -> bytes:
    """The bytes of ``params`` (name -> NDArray or numpy array), as an ``.npz`` archive."""
    if not hasattr(params, "items"):
        raise ArgumentTypeError(f"save_param_dict: expected a dict of name -> array, found "
                                f"{type(params).__name__}")
    arrays = {}
    for name, value in params.items():
        if not isinstance(name, str) or not name:
            raise ArgumentValueError(f"save_param_dict: parameter names are non-empty "
                                     f"strings, found {name!r}")
        arrays[name] = _as_numpy(name, value)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def load_param_dict(param_bytes) -> dict:
    """Inverse of :func:`save_param_dict`: name -> NDArray, in the saved order.

    Accepts the bytes (or ``bytearray``) or a path to a file holding them.
    """
    from . import ndarray as nd
    if isinstance(param_bytes, (bytes, bytearray, memoryview)):
        source = io.BytesIO(bytes(param_bytes))
        where = "the parameter bytes"
    elif isinstance(param_bytes, str) or hasattr(param_bytes, "__fspath__"):
        source = where = str(param_bytes)
    else:
        raise ArgumentTypeError(f"load_param_dict: expected bytes or a path, found "
                                f"{type(param_bytes).__name__}")
    problem = "it is a single array"
    try:
        loaded = np.load(source, allow_pickle=False)
        if isinstance(loaded, np.lib.npyio.NpzFile):
            with loaded as archive:
                return {name: nd.array(archive[name]) for name in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as err:
        problem = str(err)
    raise ArgumentValueError(f"load_param_dict: {where} are not a parameter dict written "
                             f"by save_param_dict (an .npz archive): {problem}")


__all__ = ["load_param_dict", "save_param_dict"]
