"""GPU tuning on the simulated GPU where cuda(0) is a real device (the fake CUDA driver
stands in for one), chosen with SimulatedGPUBuilder / SimulatedGPURunner: candidates
are built and modeled on the simulator, in the builder's workers and in check_best, and
nothing touches the device. (tune_tir's default there times on the device:
test_cuda_measure.py.)"""

import pytest
from helpers.fake_cuda_driver import FakeCUDADriver, as_cuda_device
from helpers.tuning_testing import matmul_module, thread_bound

import mlcbench
from mlcbench import meta_schedule as ms
from mlcbench.codegen.gpu.cuda_module import CUDAModule
from mlcbench.meta_schedule.gpu_measure import build_and_model, device_inputs
from mlcbench.runtime.cuda_ndarray import CUDANDArray

TARGET = "nvidia/geforce-rtx-2080-ti"


@pytest.fixture
def real_gpu_host(monkeypatch):
    """This process sees a CUDA device (the fake driver); worker processes, started
    with the same MLCBENCH_GPU=cuda but without the fake, would fail to find one."""
    with as_cuda_device(FakeCUDADriver(), monkeypatch) as fake:
        yield fake


def test_a_candidate_is_modeled_on_the_simulator_not_run_on_the_device(real_gpu_host):
    mod = thread_bound(matmul_module(32))
    assert isinstance(mlcbench.build(mod, target=TARGET), CUDAModule)   # the host's default
    _, args = device_inputs(mod)
    assert not any(isinstance(a, CUDANDArray) for a in args)
    assert all(a.device == mlcbench.cuda(0) for a in args)
    result = build_and_model(mod, TARGET)
    assert 1e-7 < result["seconds"] < 1e-2 and "main_kernel0" in result["profile"]
    assert real_gpu_host.memory == {} and real_gpu_host.launches == []
    assert "cuModuleLoadData" not in real_gpu_host.calls


def test_the_simulator_chosen_on_a_gpu_host_models_in_the_workers_and_checks_there(
        real_gpu_host, tmp_path):
    mod = matmul_module(32)
    strategy = ms.search_strategy.EvolutionarySearch(
        population_size=4, init_min_unmeasured=1, genetic_num_iters=1)
    database = ms.tune_tir(mod, TARGET, str(tmp_path), max_trials_global=1,
                           num_trials_per_iter=1, strategy=strategy, seed=0,
                           builder=ms.SimulatedGPUBuilder(), runner=ms.SimulatedGPURunner(),
                           progress_bar=False)
    records = database.get_all_tuning_records()
    assert records and all(r.is_valid for r in records), [r.error_msg for r in records]
    assert all(1e-7 < r.mean_run_secs < 1e-2 for r in records)
    # check_best ran the winner on the simulator: the device saw no module and no launch
    assert real_gpu_host.launches == [] and real_gpu_host.memory == {}
    assert ms.tir_integration.compile_tir(database, mod, TARGET) is not None
