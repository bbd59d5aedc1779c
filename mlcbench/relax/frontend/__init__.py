"""Ways into Relax from model descriptions: ``relax.frontend.nn`` (PyTorch-like modules).

Import the frontend you use, as in TVM: ``from mlcbench.relax.frontend import nn``.
"""
