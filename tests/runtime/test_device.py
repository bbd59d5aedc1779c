import importlib
import sys
import warnings

import pytest

import mlcbench.runtime as rt
from mlcbench.ir.errors import RuntimeError_
from mlcbench.runtime import cuda_driver


def test_cpu_repr_equality_and_hash():
    assert repr(rt.cpu()) == "cpu(0)" and str(rt.cpu(1)) == "cpu(1)"
    assert rt.cpu() == rt.Device(rt.kDLCPU, 0)
    assert rt.cpu() != rt.cpu(1) and rt.cpu() != rt.cuda()
    assert len({rt.cpu(), rt.device("llvm"), rt.device(1, 0)}) == 1


@pytest.mark.parametrize("name, expected", [
    ("llvm", "cpu(0)"), ("cpu", "cpu(0)"), ("cuda", "cuda(0)"), ("gpu", "cuda(0)"),
    ("llvm -mcpu=znver4", "cpu(0)"), (1, "cpu(0)"), (2, "cuda(0)"),
])
def test_device_from_name_or_dlpack_type(name, expected):
    assert repr(rt.device(name)) == expected


def test_device_id_is_kept():
    assert rt.device("cuda", 3).device_id == 3
    assert rt.device("llvm", 0).device_type == rt.kDLCPU


# The module, not the function mlcbench.runtime.device that shares its name.
device_module = importlib.import_module("mlcbench.runtime.device")


@pytest.fixture
def gpu_choice(monkeypatch):
    """Decide the GPU backend afresh under a given MLCBENCH_GPU, then restore it."""
    saved = list(device_module._backend)

    def choose(value):
        device_module._backend.clear()
        if value is None:
            monkeypatch.delenv("MLCBENCH_GPU", raising=False)
        else:
            monkeypatch.setenv("MLCBENCH_GPU", value)
    yield choose
    device_module._backend[:] = saved


def test_cpu_and_the_simulated_gpu_exist_and_sync(gpu_choice):
    gpu_choice("sim")
    assert rt.cpu().exist and rt.cuda().exist and not rt.cuda(1).exist
    rt.cpu().sync()
    rt.cuda().sync()
    with pytest.raises(RuntimeError_, match="cuda.1. does not exist"):
        rt.cuda(1).sync()


def test_simulated_gpu_is_announced_once(gpu_choice):
    gpu_choice(None)
    if not cuda_driver.probe():
        pytest.skip("this machine has a CUDA device: cuda(0) is that device")
    with pytest.warns(device_module.SimulatedGPUWarning, match="simulated GPU"):
        assert rt.cuda().exist
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rt.cuda().exist


def test_mlcbench_gpu_cuda_without_a_device_is_a_clear_error(gpu_choice):
    gpu_choice("cuda")
    if not cuda_driver.probe():
        pytest.skip("this machine has a CUDA device")
    assert not rt.cuda().exist
    missing = "(cuda-bindings is not installed|no CUDA driver|the CUDA driver reports no device)"
    with pytest.raises(RuntimeError_, match=f"^MLCBENCH_GPU=cuda asks for a real CUDA "
                                            f"device, but {missing}[^\n]*$"):
        rt.cuda().sync()


def test_a_device_without_cuda_bindings_is_mentioned(gpu_choice, monkeypatch):
    gpu_choice(None)
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)           # not installed
    monkeypatch.setattr(device_module, "cuda_driver_devices", lambda: 1)
    with pytest.warns(device_module.SimulatedGPUWarning,
                      match='simulated GPU.*has a CUDA device: pip install "mlcbench.cuda."'):
        assert rt.cuda().exist


def test_mlcbench_gpu_unknown_value_is_refused(gpu_choice):
    gpu_choice("tpu")
    with pytest.raises(ValueError, match="MLCBENCH_GPU='tpu': expected 'sim'"):
        rt.cuda().sync()


@pytest.mark.parametrize("bad", ["opencl", 7, 3.5, None])
def test_unknown_device_is_a_value_error(bad):
    with pytest.raises(ValueError):
        rt.device(bad)


def test_negative_device_id_rejected():
    with pytest.raises(ValueError, match="non-negative"):
        rt.cpu(-1)
