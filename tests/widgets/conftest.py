"""Shared programs for the widget tests; matplotlib draws off screen (Agg)."""
import matplotlib
import pytest

from mlcbench.driver.kernels import MM_RELU
from mlcbench.script import from_source, ir as I, tir as T
from mlcbench_widgets import MachinePeaks

matplotlib.use("Agg")


@I.ir_module
class Matmul:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


MMRelu = from_source(MM_RELU)      # the course's mm_relu, as the demo and notebooks use it


@pytest.fixture
def matmul():
    return Matmul


@pytest.fixture
def mm_relu():
    return MMRelu


@pytest.fixture
def peaks():
    """Fixed peaks, so no test waits for the machine measurement it does not check."""
    return MachinePeaks(gflops=100.0, gbytes_per_s=20.0, machine="test")
