"""The GPU model's occupancy and roofline time, on figures worked out by hand."""
import pytest

from mlcbench.codegen.gpu import GPUSimulationError, GPUSpec
from mlcbench.codegen.gpu.model import LAUNCH_SECONDS, modeled_time, occupancy
from mlcbench.target import Target

RTX_2080_TI = GPUSpec.from_target(Target("nvidia/geforce-rtx-2080-ti"))
A100 = GPUSpec.from_target(Target("nvidia/nvidia-a100"))


@pytest.mark.parametrize("spec, threads, shared, registers, blocks, limiter", [
    (RTX_2080_TI, 64, 0, 16, 16, "blocks"),          # at most 16 blocks per SM
    (RTX_2080_TI, 256, 0, 16, 4, "threads"),         # 1024 threads per SM
    (RTX_2080_TI, 64, 16384, 16, 4, "shared memory"),  # 64 KiB per SM / 16 KiB
    (RTX_2080_TI, 256, 0, 128, 2, "registers"),      # 65536 / (128 * 256)
    (A100, 256, 0, 16, 8, "threads"),                # 2048 threads per SM
])
def test_occupancy_from_the_target_limits(spec, threads, shared, registers, blocks, limiter):
    occ = occupancy(spec, "k", threads, shared, registers)
    assert (occ.blocks_per_sm, occ.limiter) == (blocks, limiter)
    assert occ.warps_per_sm == min(blocks * threads // 32, occ.max_warps_per_sm)


def test_a_block_over_the_limits_is_an_error_naming_the_limit():
    with pytest.raises(GPUSimulationError, match="2048 threads per block exceed "
                                                 "max_threads_per_block=1024"):
        occupancy(RTX_2080_TI, "k", 2048, 0, 16)
    with pytest.raises(GPUSimulationError, match="max_shared_memory_per_block=49152"):
        occupancy(RTX_2080_TI, "k", 64, 65536, 16)


def test_roofline_time_takes_the_slowest_term():
    occ = occupancy(RTX_2080_TI, "k", 256, 0, 16)          # full occupancy
    blocks = 68 * 4                                          # every SM busy, one round
    memory_bound = modeled_time(RTX_2080_TI, occ, blocks, global_sectors=616e6 / 32,
                                shared_wavefronts=0, flops=1e6)
    assert memory_bound.bound == "memory"
    assert memory_bound.seconds == pytest.approx(1e-3 + LAUNCH_SECONDS)   # 616 MB at 616 GB/s
    compute_bound = modeled_time(RTX_2080_TI, occ, blocks, 1, 0, flops=13448e6)
    assert compute_bound.seconds == pytest.approx(1e-3 + LAUNCH_SECONDS)
    # a grid of 34 blocks leaves half the SMs idle: twice the time
    half = modeled_time(RTX_2080_TI, occ, 34, 616e6 / 32, 0, 1e6)
    assert half.fill == pytest.approx(0.5)
    assert half.seconds > 2 * (memory_bound.seconds - LAUNCH_SECONDS)
