"""``run_te``: build tensors with ``create_prim_func`` + ``mlcbench.build`` and run them."""
import numpy as np
import pytest

import mlcbench
from mlcbench import te


def _run(inputs, outputs, arrays):
    """Build ``inputs + outputs`` as one function, feed ``arrays``, return the outputs."""
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    func = te.create_prim_func(list(inputs) + outputs)
    lib = mlcbench.build(func, target="llvm")
    nd_in = [mlcbench.nd.array(np.ascontiguousarray(a)) for a in arrays]
    nd_out = [mlcbench.nd.array(np.zeros([int(s) for s in t.shape], dtype=t.dtype))
              for t in outputs]
    lib["main"](*nd_in, *nd_out)
    results = [o.numpy() for o in nd_out]
    return results[0] if len(results) == 1 else results


@pytest.fixture(scope="session")
def run_te():
    return _run


@pytest.fixture(scope="session")
def rng():  # one stream for the session; tests draw fresh values from it
    return np.random.default_rng(0)
