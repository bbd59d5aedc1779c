"""Fixtures for a small matmul task and a measurer that builds and runs nothing."""
import pytest
from helpers.autotvm_testing import FakeBuilder, FakeRunner

from mlcbench import autotvm


@pytest.fixture
def task():
    return autotvm.task.create("test/matmul", args=(32, 32, 32, "float32"), target="llvm")


@pytest.fixture
def fake_option():
    return {"builder": FakeBuilder(), "runner": FakeRunner()}
