"""Train the course-style CNN on digits and write ``cnn_digits.npz``.

conv2d(1 -> 8 channels, 3x3, padding 1) -> relu -> max_pool2d 2x2 -> flatten (128)
-> linear 128 -> 64 -> relu -> linear 64 -> 10 -> softmax; numpy only, seeded, about
fifteen seconds on two cores. The hidden layer has 64 units rather than 128 so that no
weight is square: a transposed weight then fails loudly on shapes instead of silently
computing something else. Names match ``nn.Module.named_parameters()`` of the model
in the tests (``conv.weight``, ``fc1.bias`` ...). The model itself is
``mlcbench.datasets.cnn_forward``::

    python datasets/train_cnn.py
"""
import pathlib

import numpy as np

from _training import accuracy, cross_entropy_grad, he_normal, train
from mlcbench.datasets import cnn_forward, load_digits

SEED = 0
CHANNELS, HIDDEN = 8, 64
OUT = pathlib.Path(__file__).resolve().parent / "cnn_digits.npz"


def init_params(rng) -> dict:
    features = CHANNELS * 4 * 4
    return {"conv.weight": he_normal(rng, (CHANNELS, 1, 3, 3), 9),
            "conv.bias": np.zeros(CHANNELS, np.float32),
            "fc1.weight": he_normal(rng, (HIDDEN, features), features),
            "fc1.bias": np.zeros(HIDDEN, np.float32),
            "fc2.weight": he_normal(rng, (10, HIDDEN), HIDDEN),
            "fc2.bias": np.zeros(10, np.float32)}


def im2col_3x3(x):
    """(N, C, H, W) -> (N, C*9, H*W): the padded 3x3 neighbourhood of every pixel."""
    n, c, h, w = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = [padded[:, :, i:i + h, j:j + w] for i in range(3) for j in range(3)]
    return np.stack(cols, axis=2).reshape(n, c * 9, h * w)


def conv_pool_forward(p, x):
    n, _, h, w = x.shape
    cols = im2col_3x3(x)
    kernel = p["conv.weight"].reshape(CHANNELS, -1)
    pre = (np.einsum("ok,nkp->nop", kernel, cols).reshape(n, CHANNELS, h, w)
           + p["conv.bias"].reshape(1, -1, 1, 1))
    act = np.maximum(pre, 0)
    windows = act.reshape(n, CHANNELS, h // 2, 2, w // 2, 2)
    pooled = windows.max(axis=(3, 5))
    # The gradient of a max goes to the element that was the max (ties share it).
    mask = windows == pooled[:, :, :, None, :, None]
    return cols, pre, mask, pooled


def loss_and_grads(p, x, y):
    n = len(x)
    cols, pre, mask, pooled = conv_pool_forward(p, x)
    features = pooled.reshape(n, -1)
    pre1 = features @ p["fc1.weight"].T + p["fc1.bias"]
    hidden = np.maximum(pre1, 0)
    loss, d_logits = cross_entropy_grad(hidden @ p["fc2.weight"].T + p["fc2.bias"], y)
    d_pre1 = (d_logits @ p["fc2.weight"]) * (pre1 > 0)
    d_pooled = (d_pre1 @ p["fc1.weight"]).reshape(pooled.shape)
    d_act = (mask * d_pooled[:, :, :, None, :, None]).reshape(pre.shape)
    d_pre = (d_act * (pre > 0)).reshape(n, CHANNELS, -1)
    return loss, {
        "fc2.weight": d_logits.T @ hidden, "fc2.bias": d_logits.sum(0),
        "fc1.weight": d_pre1.T @ features, "fc1.bias": d_pre1.sum(0),
        "conv.weight": np.einsum("nop,nkp->ok", d_pre, cols).reshape(p["conv.weight"].shape),
        "conv.bias": d_pre.sum(axis=(0, 2))}


def main() -> None:
    x_train, y_train, x_test, y_test = load_digits()
    params = init_params(np.random.default_rng(SEED))
    train(params, loss_and_grads, x_train, y_train, epochs=60, batch_size=32, lr=2e-3,
          seed=SEED, weight_decay=1e-4)
    np.savez_compressed(OUT, **params)
    print(f"train accuracy {accuracy(cnn_forward(x_train, params), y_train):.4f}, "
          f"test accuracy {accuracy(cnn_forward(x_test, params), y_test):.4f}")


if __name__ == "__main__":
    main()
