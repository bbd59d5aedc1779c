"""Course chapter 7's kernels on a real CUDA device (the PTX loaded by the driver,
launched, timed with CUDA events). Skipped, saying why, where there is no CUDA driver,
device or cuda-bindings (the ``[cuda]`` extra); test_cuda_module.py checks the same
plumbing everywhere with a fake driver."""
import importlib

import numpy as np
import pytest
from helpers import gpu_course_schedules as course

import mlcbench as tvm
from mlcbench.codegen.gpu.cuda_module import CUDAModule
from mlcbench.runtime import cuda_driver

device_module = importlib.import_module("mlcbench.runtime.device")
MISSING = cuda_driver.probe()
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"no CUDA driver/device: {MISSING}")


@pytest.fixture
def dev(monkeypatch):
    """cuda(0) as the real device (tests/conftest.py asks for the simulator)."""
    saved = list(device_module._backend)
    monkeypatch.setenv("MLCBENCH_GPU", "cuda")
    device_module._backend.clear()
    yield tvm.cuda(0)
    device_module._backend[:] = saved


def _run(mod, dev, inputs, out_shape, target="cuda"):
    rt_mod = tvm.build(mod, target=target)
    assert isinstance(rt_mod, CUDAModule)
    args = [tvm.nd.array(x, dev) for x in inputs] + [tvm.nd.empty(out_shape, "float32", dev)]
    rt_mod["main"](*args)
    return rt_mod, args


def test_vector_add(dev):
    a, b = (np.random.default_rng(i).uniform(size=1024).astype("float32") for i in range(2))
    _, args = _run(course.vector_add(1024), dev, [a, b], (1024,))
    np.testing.assert_allclose(args[-1].numpy(), a + b, rtol=1e-6)


def test_window_sum_with_shared_memory(dev):
    a = np.random.default_rng(0).uniform(size=1027).astype("float32")
    _, args = _run(course.window_sum(1024), dev, [a], (1024,))
    np.testing.assert_allclose(args[-1].numpy(), a[:-3] + a[1:-2] + a[2:-1], rtol=1e-6)


@pytest.mark.parametrize("schedule", [course.matmul_local, course.matmul_shared])
def test_matmul_1024_and_its_time(dev, schedule):
    rng = np.random.default_rng(1)
    a, b = (rng.uniform(size=(1024, 1024)).astype("float32") for _ in range(2))
    rt_mod, args = _run(schedule(1024), dev, [a, b], (1024, 1024))
    np.testing.assert_allclose(args[-1].numpy(), a @ b, rtol=1e-4)
    seconds = rt_mod.time_evaluator("main", dev, number=10)(*args).mean
    print(f"{schedule.__name__}: {2 * 1024 ** 3 / seconds / 1e9:.0f} GFLOPS on "
          f"{cuda_driver.context().name}")
    assert 0 < seconds < 1


def test_build_for_the_devices_own_architecture(dev):
    arch = cuda_driver.context().arch
    tag = {"sm_80": "nvidia/nvidia-a100", "sm_90": "nvidia/nvidia-h100"}.get(arch)
    if tag is None:
        pytest.skip(f"no nvidia/ tag in mlcbench for {arch}")
    a, b = (np.full(1024, i, "float32") for i in (1, 2))
    rt_mod, args = _run(course.vector_add(1024), dev, [a, b], (1024,), target=tag)
    assert f".target {arch}" in rt_mod.get_source("ptx")
    np.testing.assert_array_equal(args[-1].numpy(), np.full(1024, 3, "float32"))


def test_dlpack_to_torch_shares_memory(dev):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    a = tvm.nd.array(np.arange(8, dtype="float32"), dev)
    t = torch.from_dlpack(a)
    assert t.is_cuda and t.data_ptr() == a.handle
    t += 1
    np.testing.assert_array_equal(a.numpy(), np.arange(8, dtype="float32") + 1)
    back = tvm.nd.from_dlpack(t)
    assert back.handle == t.data_ptr()
