"""Make ``autotvm_testing`` importable; fixtures for a small matmul task."""
import os
import sys

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from autotvm_testing import FakeBuilder, FakeRunner  # noqa: E402

from mlcbench import autotvm  # noqa: E402


@pytest.fixture
def task():
    return autotvm.task.create("test/matmul", args=(32, 32, 32, "float32"), target="llvm")


@pytest.fixture
def fake_option():
    return {"builder": FakeBuilder(), "runner": FakeRunner()}
