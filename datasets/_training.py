"""Numpy pieces shared by train_mlp.py and train_cnn.py: minibatches, Adam, cross-entropy.

Training stays in numpy (no torch) so the committed weights can be reproduced with
what mlcbench already installs: ``python datasets/train_mlp.py``.
"""
import numpy as np

from mlcbench.datasets import softmax


def he_normal(rng, shape, fan_in):
    """He initialization, suited to layers followed by relu."""
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def cross_entropy_grad(logits, labels):
    """Mean cross-entropy of softmax(logits) and its gradient with respect to logits."""
    probs = softmax(logits)
    rows = np.arange(len(labels))
    loss = -np.log(probs[rows, labels] + 1e-12).mean()
    grad = probs.copy()
    grad[rows, labels] -= 1
    return loss, grad / len(labels)


class Adam:
    """Adam (Kingma and Ba) over a dict of float32 arrays, updated in place."""

    def __init__(self, params, lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0):
        self.params, self.lr, self.eps, self.decay = params, lr, eps, weight_decay
        self.beta1, self.beta2, self.steps = beta1, beta2, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, grads):
        self.steps += 1
        b1, b2 = self.beta1, self.beta2
        for key, grad in grads.items():
            if self.decay and self.params[key].ndim > 1:     # decay weights, not biases
                grad = grad + self.decay * self.params[key]
            self.m[key] = b1 * self.m[key] + (1 - b1) * grad
            self.v[key] = b2 * self.v[key] + (1 - b2) * grad * grad
            m_hat = self.m[key] / (1 - b1 ** self.steps)
            v_hat = self.v[key] / (1 - b2 ** self.steps)
            update = self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
            self.params[key] -= update.astype(np.float32)


def train(params, loss_and_grads, x, y, *, epochs, batch_size, lr, seed, weight_decay=0.0):
    """Minibatch Adam; ``loss_and_grads(params, xb, yb) -> (loss, grads)``."""
    rng = np.random.default_rng(seed)
    optimizer = Adam(params, lr, weight_decay=weight_decay)
    for epoch in range(epochs):
        order = rng.permutation(len(y))
        losses = []
        for start in range(0, len(y), batch_size):
            batch = order[start:start + batch_size]
            loss, grads = loss_and_grads(params, x[batch], y[batch])
            optimizer.step(grads)
            losses.append(loss)
        if (epoch + 1) % 10 == 0:
            print(f"epoch {epoch + 1:3d}: mean loss {np.mean(losses):.4f}")
    return params


def accuracy(scores, labels) -> float:
    return float((scores.argmax(axis=1) == labels).mean())
