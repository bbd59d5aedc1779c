"""The digits MLP and CNN as ``nn.Module``s, shared by the demo and the benchmarks.

Their parameters are those trained in ``datasets/`` (see :mod:`mlcbench.datasets`), so a
model exported here computes what ``datasets.mlp_forward`` / ``cnn_forward`` compute::

    >>> from mlcbench.driver.models import export_digits_model
    >>> mod, weights = export_digits_model("mlp", batch=360)
    >>> vm = relax.VirtualMachine(relax.build(mod, "llvm"), mlcbench.cpu())  # doctest: +SKIP
    >>> vm["forward"](x_test, *weights)                                       # doctest: +SKIP
"""
from __future__ import annotations

from .. import datasets
from ..ir.errors import MLCBenchError
from ..relax.frontend import nn


class DigitsMLP(nn.Module):
    """64 -> 128 -> relu -> 10 (logits), as ``datasets.mlp_forward``."""

    def __init__(self):
        self.fc1 = nn.Linear(64, 128)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class DigitsCNN(nn.Module):
    """conv 3x3 -> relu -> max pool -> linear -> relu -> linear -> softmax, as
    ``datasets.cnn_forward``."""

    def __init__(self):
        self.conv = nn.Conv2D(1, 8, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(128, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = self.pool(nn.op.relu(self.conv(x)))
        x = nn.op.relu(self.fc1(x.reshape(x.shape[0], -1)))
        return nn.op.softmax(self.fc2(x))


# The MLP's file names its weights as the course does (w0, b0, w1, b1).
MLP_COURSE_NAMES = {"fc1.weight": "w0", "fc1.bias": "b0", "fc2.weight": "w1", "fc2.bias": "b1"}
INPUT_SHAPES = {"mlp": (64,), "cnn": (1, 8, 8)}


def trained_digits_model(name: str) -> nn.Module:
    """``DigitsMLP`` (``name="mlp"``) or ``DigitsCNN`` (``"cnn"``) with trained weights."""
    if name == "mlp":
        model, saved = DigitsMLP(), datasets.load_mlp_params()
        model.load_state_dict({key: saved[course] for key, course in MLP_COURSE_NAMES.items()})
        return model
    if name == "cnn":
        model = DigitsCNN()
        model.load_state_dict(datasets.load_cnn_params())
        return model
    raise MLCBenchError(f"trained_digits_model: expected 'mlp' or 'cnn', found {name!r}")


def export_digits_model(name: str, batch: int):
    """``(mod, weights)``: the trained model's ``forward`` for ``batch`` images, and its
    parameters as NDArrays in the order ``forward`` takes them after the input."""
    model = trained_digits_model(name)
    spec = {"forward": {"x": nn.spec.Tensor((batch, *INPUT_SHAPES[name]), "float32")}}
    mod, params = model.export_tvm(spec=spec)
    return mod, [param.data for _, param in params]


__all__ = ["DigitsCNN", "DigitsMLP", "export_digits_model", "trained_digits_model"]
