"""The CUDA driver layer (mlcbench.runtime.cuda_driver) over the fake driver of
tests/helpers: what probe reports missing, CUresults checked and named."""
import sys

import pytest
from helpers.fake_cuda_driver import FakeCUDADriver

from mlcbench.ir.errors import RuntimeError_
from mlcbench.runtime import cuda_driver


@pytest.fixture
def use_fake():
    def install(**options):
        fake = FakeCUDADriver(**options)
        cuda_driver.use_driver(fake)
        return fake
    yield install
    cuda_driver.use_driver(None)


def test_probe_without_cuda_bindings(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)       # import fails
    assert cuda_driver.probe() == ('cuda-bindings is not installed '
                                   '(pip install "mlcbench[cuda]")')


@pytest.mark.parametrize("options, missing", [
    ({}, ""),
    ({"libcuda": False}, "no CUDA driver: libcuda.so.1 was not found"),
    ({"devices": 0}, "the CUDA driver reports no device"),
])
def test_probe_names_what_is_missing(use_fake, options, missing):
    use_fake(**options)
    assert cuda_driver.probe().startswith(missing) and bool(cuda_driver.probe()) == bool(missing)


def test_context_reads_the_device(use_fake):
    use_fake(compute_capability=(9, 0))
    context = cuda_driver.context()
    assert context.arch == "sm_90" and context.name == "Fake CUDA device"
    assert cuda_driver.context() is context


def test_failed_calls_name_the_call_and_the_error(use_fake):
    use_fake(memory_limit=64)
    with pytest.raises(RuntimeError_, match="^cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY$"):
        cuda_driver.mem_alloc(65)
    with pytest.raises(RuntimeError_, match="^cuModuleGetFunction failed: "
                                            "CUDA_ERROR_INVALID_HANDLE$"):
        cuda_driver.get_function(7, "main_kernel0")
    assert cuda_driver.error_name(999) == "CUresult 999"     # a code the driver cannot name


def test_a_missing_libcuda_inside_a_call_is_a_driver_error(use_fake):
    use_fake(libcuda=False)
    with pytest.raises(cuda_driver.CUDADriverError, match="^cuInit failed: .*NVIDIA driver"):
        cuda_driver.context()


def test_copies_round_trip_and_the_ptx_is_loaded_nul_terminated(use_fake):
    import numpy as np
    from mlcbench.runtime.ndarray import address_of
    fake = use_fake()
    x = np.arange(10, dtype="float32")
    address = cuda_driver.mem_alloc(x.nbytes)
    cuda_driver.copy_to_device(address, address_of(x), x.nbytes)
    y = np.zeros_like(x)
    cuda_driver.copy_to_host(address_of(y), address, x.nbytes)
    np.testing.assert_array_equal(x, y)
    module = cuda_driver.load_module(".version 7.0\n.target sm_80\n.entry k(\n)\n{\n}\n")
    assert list(fake.modules[module]) == ["k"]
    assert cuda_driver.time_calls(lambda: None, 3) >= 0
