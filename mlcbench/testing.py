"""Helpers for tests and notebooks (``tvm.testing.assert_allclose``)."""
from __future__ import annotations

import numpy as np


def _as_numpy(x):
    return x.numpy() if hasattr(x, "numpy") and not isinstance(x, np.ndarray) else np.asarray(x)


def assert_allclose(actual, desired, rtol=1e-7, atol=1e-7):
    """``numpy.testing.assert_allclose`` that also accepts ``mlcbench.nd.NDArray``."""
    np.testing.assert_allclose(_as_numpy(actual), _as_numpy(desired), rtol=rtol, atol=atol,
                               verbose=True)
