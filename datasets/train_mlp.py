"""Train the course's MLP (64 -> 128 -> relu -> 10) on digits and write ``mlp_digits.npz``.

numpy only, seeded, about ten seconds on two cores. The weights are named as in the
MLC course: ``w0 (128, 64)``, ``b0 (128,)``, ``w1 (10, 128)``, ``b1 (10,)``; a linear
layer computes ``x @ w.T + b``. The model itself is ``mlcbench.datasets.mlp_forward``::

    python datasets/train_mlp.py
"""
import pathlib

import numpy as np

from _training import accuracy, cross_entropy_grad, he_normal, train
from mlcbench.datasets import load_digits, mlp_forward

SEED = 0
HIDDEN = 128
OUT = pathlib.Path(__file__).resolve().parent / "mlp_digits.npz"


def init_params(rng) -> dict:
    return {"w0": he_normal(rng, (HIDDEN, 64), 64), "b0": np.zeros(HIDDEN, np.float32),
            "w1": he_normal(rng, (10, HIDDEN), HIDDEN), "b1": np.zeros(10, np.float32)}


def loss_and_grads(p, x, y):
    pre = x @ p["w0"].T + p["b0"]
    hidden = np.maximum(pre, 0)
    loss, d_logits = cross_entropy_grad(hidden @ p["w1"].T + p["b1"], y)
    d_pre = (d_logits @ p["w1"]) * (pre > 0)
    return loss, {"w1": d_logits.T @ hidden, "b1": d_logits.sum(0),
                  "w0": d_pre.T @ x, "b0": d_pre.sum(0)}


def main() -> None:
    x_train, y_train, x_test, y_test = load_digits(flat=True)
    params = init_params(np.random.default_rng(SEED))
    train(params, loss_and_grads, x_train, y_train, epochs=60, batch_size=32, lr=1e-3,
          seed=SEED, weight_decay=1e-4)
    np.savez_compressed(OUT, **params)
    print(f"train accuracy {accuracy(mlp_forward(x_train, params), y_train):.4f}, "
          f"test accuracy {accuracy(mlp_forward(x_test, params), y_test):.4f}")


if __name__ == "__main__":
    main()
