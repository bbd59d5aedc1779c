"""GPU tuning timed on a real device (cuda_measure): candidates built in the builder's
workers, sent to the runner as TVMScript text, built again and timed on cuda(0). The
fake CUDA driver stands in for the device (tests/helpers/fake_cuda_driver.py);
test_cuda_device.py covers real hardware where there is some."""
import contextlib
import json

import pytest
from helpers.fake_cuda_driver import FakeCUDADriver, as_cuda_device, simulated_kernels
from helpers.tuning_testing import matmul_module, thread_bound

import mlcbench
from mlcbench import meta_schedule as ms
from mlcbench.codegen.gpu import build_gpu
from mlcbench.ir.structural import structural_equal
from mlcbench.meta_schedule.arg_info import ArgInfo
from mlcbench.meta_schedule.cuda_measure import build_for_device
from mlcbench.meta_schedule.gpu_measure import export_model
from mlcbench.tir.transform.lower_gpu import lower_gpu

TARGET = "nvidia/geforce-rtx-2080-ti"          # sm_75: the fake device (8.0) runs it


@pytest.fixture
def gpu_host(monkeypatch):
    """``install(fake)`` makes ``cuda(0)`` a real device driven by ``fake``."""
    with contextlib.ExitStack() as stack:
        yield lambda fake: stack.enter_context(as_cuda_device(fake, monkeypatch))


def _artifact(mod, target=TARGET) -> str:
    return export_model(build_for_device(mod, target))


def test_the_artifact_is_the_candidate_as_text_and_parses_back_to_it():
    mod = thread_bound(matmul_module(32))
    candidate = build_for_device(mod, TARGET)
    assert candidate["target"] == TARGET
    assert 'T.thread_binding(32, thread="threadIdx.x")' in candidate["script"]
    assert structural_equal(mlcbench.script.from_source(candidate["script"]), mod)


def test_a_schedule_over_the_launch_limits_fails_in_the_builder():
    sch = mlcbench.tir.Schedule(matmul_module(2048, 2048, 4))
    i, j, _ = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")                   # 2048 threads per block
    (result,) = ms.CUDABuilder(max_workers=1).build([ms.BuilderInput(sch.mod, TARGET)])
    assert result.artifact_path is None and "2048" in result.error_msg


def test_the_runner_times_a_candidate_on_the_device(gpu_host, tmp_path):
    mod = thread_bound(matmul_module(32))
    lowered = lower_gpu(mod, mlcbench.target.Target(TARGET))
    fake = gpu_host(FakeCUDADriver(simulated_kernels(build_gpu(lowered, TARGET, backend="sim"))))
    runner = ms.CUDARunner(ms.EvaluatorConfig(number=2, repeat=3, min_repeat_ms=0))
    path = _artifact(mod)
    (future,) = runner.run([ms.RunnerInput(path, "cuda", ArgInfo.from_entry_func(mod))])
    result = future.result()
    assert result.error_msg is None and len(result.run_secs) == 3
    assert all(s > 0 for s in result.run_secs)
    # one call to load and compute, then 3 repeats of 2 timed calls
    assert [name for name, *_ in fake.launches] == ["main_kernel0"] * 7
    assert fake.launches[0][1:] == ((32, 1, 1), (32, 1, 1))
    assert result.cpu == "Fake CUDA device" and result.host == "cuda(0)"


def test_a_kernel_newer_than_the_device_is_that_candidates_error(gpu_host):
    mod = thread_bound(matmul_module(32))
    gpu_host(FakeCUDADriver(run_kernels=False, compute_capability=(7, 5)))
    runner = ms.CUDARunner()
    path = _artifact(mod, "nvidia/nvidia-a100")          # sm_80 on a 7.5 device
    (future,) = runner.run([ms.RunnerInput(path, "cuda", ArgInfo.from_entry_func(mod))])
    result = future.result()
    assert result.run_secs is None
    assert "sm_80" in result.error_msg and "sm_75" in result.error_msg


@pytest.mark.parametrize("content, says", [
    (None, "No such file"),
    ("[1, 2]", "'script' and 'target'"),
    (json.dumps({"script": "import os\nos.system('true')", "target": TARGET}), "import of 'os'"),
])
def test_an_artifact_that_is_not_a_candidate_is_an_error_not_a_crash(gpu_host, tmp_path,
                                                                     content, says):
    gpu_host(FakeCUDADriver(run_kernels=False))
    path = tmp_path / "candidate.json"
    if content is not None:
        path.write_text(content)
    (future,) = ms.CUDARunner(cleanup=False).run([ms.RunnerInput(str(path), "cuda", [])])
    result = future.result()
    assert result.run_secs is None and says in result.error_msg


def test_tune_tir_on_a_gpu_host_times_candidates_on_the_device(gpu_host, tmp_path):
    fake = gpu_host(FakeCUDADriver(run_kernels=False))
    mod = matmul_module(32)
    strategy = ms.search_strategy.EvolutionarySearch(
        population_size=4, init_min_unmeasured=2, genetic_num_iters=1)
    database = ms.tune_tir(mod, TARGET, str(tmp_path), max_trials_global=2,
                           num_trials_per_iter=2, strategy=strategy, seed=0,
                           progress_bar=False)
    records = database.get_all_tuning_records()
    assert records and all(r.is_valid for r in records), [r.error_msg for r in records]
    # every candidate's PTX was loaded and its kernels launched on the device
    assert len(fake.modules) == len(records)
    assert {name for name, *_ in fake.launches} == {"main_kernel0"}
    # the winner was then run on the simulator, checked against numpy, and compiles
    sch = ms.tir_integration.compile_tir(database, mod, TARGET)
    assert sch is not None and "blockIdx.x" in sch.mod.script()
