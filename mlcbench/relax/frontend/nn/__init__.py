"""Build Relax models as PyTorch-like modules, as the MLC course does with TVM::

    from mlcbench.relax.frontend import nn

    class MLPModel(nn.Module):
        def __init__(self):
            self.fc1 = nn.Linear(784, 256)
            self.relu1 = nn.ReLU()
            self.fc2 = nn.Linear(256, 10)

        def forward(self, x):
            return self.fc2(self.relu1(self.fc1(x)))

    mod, param_spec = MLPModel().export_tvm(
        spec={"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    mod.show()       # forward(x, fc1_weight, fc1_bias, fc2_weight, fc2_bias)

``param_spec`` lists ``(name, Parameter)`` in the order the function takes them;
``model.load_state_dict({name: array})`` gives parameters data.
"""
from . import op, spec
from .core import Module, ModuleList, Parameter, Tensor
from .modules import Conv2D, Linear, MaxPool2d, ReLU, Sequential

__all__ = ["Conv2D", "Linear", "MaxPool2d", "Module", "ModuleList", "Parameter", "ReLU",
           "Sequential", "Tensor", "op", "spec"]
