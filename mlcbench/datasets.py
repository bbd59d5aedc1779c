"""The small real data set and trained weights that notebooks and tests use.

The files live in the repository's ``datasets/`` folder (see its README for provenance):
``digits.npz`` (8x8 hand-written digits, a fixed 1437/360 split), ``mlp_digits.npz`` and
``cnn_digits.npz`` (models trained on it with numpy). They are found next to the
package, which works for a checkout and for ``pip install -e .``; elsewhere, point the
``MLCBENCH_DATASETS`` environment variable at a copy of the folder.

>>> from mlcbench.datasets import load_digits, load_mlp_params, mlp_forward
>>> x_train, y_train, x_test, y_test = load_digits(flat=True)
>>> x_test.shape, x_test.dtype
((360, 64), dtype('float32'))
>>> accuracy = (mlp_forward(x_test, load_mlp_params()).argmax(1) == y_test).mean()

The numpy forward functions here are the reference the compiled models are checked
against, and the definition the training scripts in ``datasets/`` train.
"""
from __future__ import annotations

import os
import pathlib

import numpy as np

from .ir.errors import MLCBenchError

ENV_VAR = "MLCBENCH_DATASETS"
# Digits pixels are integers 0..16; dividing by this scales them to [0, 1].
DIGITS_MAX_PIXEL = 16.0


class DatasetNotFound(MLCBenchError, FileNotFoundError):
    """A data file of ``datasets/`` is not where mlcbench looked for it."""


def datasets_dir() -> pathlib.Path:
    """The folder holding the ``.npz`` files: ``$MLCBENCH_DATASETS`` or the checkout's."""
    override = os.environ.get(ENV_VAR)
    if override:
        return pathlib.Path(override)
    return pathlib.Path(__file__).resolve().parent.parent / "datasets"


def _load_npz(name: str) -> dict[str, np.ndarray]:
    path = datasets_dir() / name
    if not path.is_file():
        raise DatasetNotFound(
            f"expected the data file {name} at {path}, found nothing there; mlcbench "
            f"looks in the repository's datasets/ folder (a checkout or `pip install -e .`) "
            f"or in ${ENV_VAR} when set")
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def load_digits(flat: bool = False):
    """The digits split as ``(x_train, y_train, x_test, y_test)``.

    Images are float32 in [0, 1], NCHW ``(N, 1, 8, 8)`` as the course's models take
    them, or ``(N, 64)`` rows with ``flat=True``; labels are int64 in 0..9.

    >>> x_train, y_train, x_test, y_test = load_digits()
    >>> x_train.shape, y_test.shape
    ((1437, 1, 8, 8), (360,))
    """
    data = _load_npz("digits.npz")
    arrays = []
    for split in ("train", "test"):
        images = data[f"x_{split}"].astype(np.float32) / np.float32(DIGITS_MAX_PIXEL)
        arrays += [images.reshape(len(images), -1) if flat else images, data[f"y_{split}"]]
    return tuple(arrays)


def load_mlp_params() -> dict[str, np.ndarray]:
    """The trained MLP 64 -> 128 -> 10: ``w0 (128, 64), b0, w1 (10, 128), b1`` (float32).

    >>> sorted(load_mlp_params())
    ['b0', 'b1', 'w0', 'w1']
    """
    return _load_npz("mlp_digits.npz")


def load_cnn_params() -> dict[str, np.ndarray]:
    """The trained CNN, named as ``nn.Module.named_parameters()`` names them.

    ``conv.weight (8, 1, 3, 3)``, ``conv.bias (8,)``, ``fc1.weight (64, 128)``,
    ``fc1.bias (64,)``, ``fc2.weight (10, 64)``, ``fc2.bias (10,)``, all float32.
    """
    return _load_npz("cnn_digits.npz")


# -- numpy references ------------------------------------------------------------------

def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0)


def linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """``x @ weight.T + bias``: weights are (out_features, in_features) as in the course."""
    return x @ weight.T + bias


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = np.exp(x - x.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


def conv2d_same_3x3(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """NCHW/OIHW convolution with a 3x3 kernel, stride 1 and padding 1 (im2col)."""
    n, c, h, w = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    # columns[n, c, i, j, y, x] = padded[n, c, y + i, x + j]
    columns = np.stack([np.stack([padded[:, :, i:i + h, j:j + w] for j in range(3)], 2)
                        for i in range(3)], 2)
    out = np.einsum("ncijyx,ocij->noyx", columns, weight)
    return out + bias.reshape(1, -1, 1, 1)


def max_pool_2x2(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def mlp_forward(x: np.ndarray, params: dict) -> np.ndarray:
    """Logits of the MLP for ``x`` of shape (N, 64)."""
    hidden = relu(linear(x, params["w0"], params["b0"]))
    return linear(hidden, params["w1"], params["b1"])


def cnn_forward(x: np.ndarray, params: dict) -> np.ndarray:
    """Class probabilities of the CNN for NCHW ``x`` of shape (N, 1, 8, 8).

    conv2d 3x3 (padding 1) -> relu -> max_pool2d 2x2 -> flatten -> linear -> relu
    -> linear -> softmax.
    """
    features = max_pool_2x2(relu(conv2d_same_3x3(x, params["conv.weight"],
                                                 params["conv.bias"])))
    hidden = relu(linear(features.reshape(len(x), -1), params["fc1.weight"],
                         params["fc1.bias"]))
    return softmax(linear(hidden, params["fc2.weight"], params["fc2.bias"]))
