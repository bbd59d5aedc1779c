"""Counters of the simulated GPU on kernels whose answers are known by hand, and the
errors for races and out-of-bounds accesses."""
import numpy as np
import pytest

import mlcbench
from mlcbench.codegen import gpu
from mlcbench.codegen.gpu import GPUSimulationError, build_gpu
from mlcbench.ir.module import IRModule
from mlcbench.script import from_source

_KERNEL = '''
from mlcbench.script import tir as T

@T.prim_func
def main_kernel0(A: T.Buffer(({a},), "float32"), B: T.Buffer(({b},), "float32")):
    T.func_attr({{"global_symbol": "main_kernel0", "calling_conv": "device_kernel"}})
{body}
'''

# A 32x32 tile through shared memory, read back transposed; `row` is the tile's row
# length in words (32: every thread of a warp hits one bank; 33: padded, no conflict).
TRANSPOSE = '''
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        tile_data = T.allocate([{size}], "float32", "shared")
        tile = T.decl_buffer(({size},), "float32", data=tile_data, scope="shared")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            for ty in T.thread_binding(32, thread="threadIdx.y"):
                tile[ty * {row} + tx] = A[ty * 32 + tx]
                {sync}
                B[ty * 32 + tx] = tile[tx * {row} + ty]
'''

COPY = '''
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        B[tx] = A[{index}]
'''


def run(body: str, a_size: int, b_size: int):
    func = from_source(_KERNEL.format(a=a_size, b=b_size, body=body))
    rt_mod = build_gpu(IRModule({"main_kernel0": func}), "cuda")
    dev = mlcbench.cuda(0)
    a_np = np.random.rand(a_size).astype("float32")
    a, b = mlcbench.nd.array(a_np, dev), mlcbench.nd.array(np.zeros(b_size, "float32"), dev)
    return gpu.profile(rt_mod, "main_kernel0", a, b), a_np, b.numpy()


def test_unit_stride_load_coalesces_into_four_sectors():
    prof, a_np, b_np = run(COPY.format(index="tx"), 32, 32)
    load = next(c for c in prof["main_kernel0"].counts if c.buffer == "A")
    assert (load.requests, load.transactions) == (1, 4)
    np.testing.assert_array_equal(b_np, a_np)


def test_strided_load_takes_one_sector_per_thread():
    prof, a_np, b_np = run(COPY.format(index="tx * 32"), 1024, 32)
    kernel = prof["main_kernel0"]
    load = next(c for c in kernel.counts if c.buffer == "A")
    assert (load.requests, load.transactions, load.ideal) == (1, 32, 4)
    assert kernel.global_transactions == 32 + 4       # the store to B coalesces
    np.testing.assert_array_equal(b_np, a_np[::32])


@pytest.mark.parametrize("row, conflicts", [(32, 31 * 32), (33, 0)])
def test_shared_transpose_bank_conflicts_and_padding(row, conflicts):
    body = TRANSPOSE.format(size=32 * row, row=row, sync='T.tvm_storage_sync("shared")')
    prof, a_np, b_np = run(body, 1024, 1024)
    kernel = prof["main_kernel0"]
    # 32 warps read the tile; without padding each read is 32-way (31 extra wavefronts).
    assert kernel.bank_conflicts == conflicts
    np.testing.assert_array_equal(b_np.reshape(32, 32), a_np.reshape(32, 32).T)


def test_exchange_without_barrier_is_a_race_naming_buffer_threads_and_statements():
    body = TRANSPOSE.format(size=32 * 33, row=33, sync="")
    with pytest.raises(GPUSimulationError, match=r"data race on shared buffer 'tile\w*'.*"
                       r"threadIdx\(x=\d+, y=\d+\).*threadIdx\(x=\d+, y=\d+\).*A\[ty \* 32 \+ tx\]"):
        run(body, 1024, 1024)


def test_out_of_bounds_load_names_buffer_thread_and_statement():
    with pytest.raises(GPUSimulationError, match=r"out-of-bounds load of 'A' \(size 32\) at "
                       r"index 32 by thread threadIdx\(x=31\).*B\[tx\] = A\[tx \+ 1\]"):
        run(COPY.format(index="tx + 1"), 32, 32)


def test_flops_and_modeled_time_of_the_matmul_variants_order_as_on_a_gpu():
    from helpers.matmul_kernels import matmul_module
    # At 512 the tiled variants have 64 blocks for 68 SMs, so local blocking does not
    # beat naive yet; benchmarks/gpu_sim.py shows the full order at the course's 1024.
    n = 512
    dev = mlcbench.cuda(0)
    args = [mlcbench.nd.array(np.ones(n * n, "float32"), dev) for _ in range(3)]
    seconds = {}
    for variant in ("naive", "local", "shared"):
        prof = build_gpu(matmul_module(variant, n), "nvidia/geforce-rtx-2080-ti").profile(
            "main_kernel0", *args, run=False)
        assert prof.flops == pytest.approx(2 * n ** 3)
        seconds[variant] = prof.seconds
    assert seconds["shared"] < min(seconds["naive"], seconds["local"])
    # The point a GPU roofline shows: under the roof of the target's figures.
    assert prof.peaks.gflops == 13448 and prof.peaks.gbytes_per_s == 616
    assert 0 < prof.gflops <= prof.peaks.roof(prof.intensity)
    np.testing.assert_array_equal(args[2].numpy(), 1)      # only traced: C untouched
    assert "modeled" in str(prof) and "bank conflicts" in str(prof)
