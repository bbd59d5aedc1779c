"""Out-of-bounds accesses in blocks the tracer does not sample are caught by the checks
compiled into the simulator's CPU code: an error naming buffer, block, thread and
statement, the access skipped, the process alive."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlcbench
from mlcbench.codegen.gpu import GPUSimulationError, build_gpu
from mlcbench.ir.module import IRModule
from mlcbench.script import from_source

BLOCKS, THREADS, N = 8, 32, 256

# B[i] = A[idx[i]]: the indices are data, so only the call can tell whether they fit.
GATHER = '''
from mlcbench.script import tir as T

@T.prim_func
def main_kernel0(A: T.Buffer((256,), "float32"), idx: T.Buffer((256,), "int32"),
                 B: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            B[bx * 32 + tx] = A[idx[bx * 32 + tx]]
'''

# B[idx[i]] = A[i]: the store is the access that may leave the buffer.
SCATTER = GATHER.replace("B[bx * 32 + tx] = A[idx[bx * 32 + tx]]",
                         "B[idx[bx * 32 + tx]] = A[bx * 32 + tx]")

# The gathered load sits in a condition: checked before the if, clamped inside it.
GATHER_IN_CONDITION = GATHER.replace(
    "B[bx * 32 + tx] = A[idx[bx * 32 + tx]]",
    "if A[idx[bx * 32 + tx]] > T.float32(0.5):\n"
    "                B[bx * 32 + tx] = T.float32(1)")

# A gather guarded by if_then_else: indices past the end are never loaded, no error.
GUARDED_GATHER = GATHER.replace(
    "A[idx[bx * 32 + tx]]",
    "T.if_then_else(idx[bx * 32 + tx] < 256, A[idx[bx * 32 + tx]], T.float32(-1))")

# The condition's fact about idx[i] is stale after the store: the load stays checked.
STALE_CONDITION = GATHER.replace(
    "B[bx * 32 + tx] = A[idx[bx * 32 + tx]]",
    "if idx[bx * 32 + tx] >= 0 and idx[bx * 32 + tx] < 256:\n"
    "                idx[bx * 32 + tx] = idx[bx * 32 + tx] * 1000\n"
    "                B[bx * 32 + tx] = A[idx[bx * 32 + tx]]")

UNSAMPLED_BLOCK, THREAD = 2, 5          # the tracer samples blocks 0, 4 and 7
BAD = UNSAMPLED_BLOCK * THREADS + THREAD


def build(text):
    return build_gpu(IRModule({"main_kernel0": from_source(text)}), "cuda")


def arrays(idx_np, seed=0):
    rng = np.random.default_rng(seed)
    a_np = rng.random(N, dtype=np.float32)
    dev = mlcbench.cuda(0)
    return (a_np, mlcbench.nd.array(a_np, dev), mlcbench.nd.array(idx_np, dev),
            mlcbench.nd.array(np.full(N, -7, "float32"), dev))


def traced_gather():
    """The gather built and called once on good indices (so traced and counted)."""
    rt_mod = build(GATHER)
    _, a, idx, b = arrays(np.arange(N, dtype="int32"))
    rt_mod["main_kernel0"](a, idx, b)
    return rt_mod


@pytest.mark.parametrize("bad_index", [N, -1, 1 << 28])
def test_gather_out_of_bounds_in_unsampled_block(bad_index):
    rt_mod = traced_gather()
    idx_np = np.arange(N, dtype="int32")[::-1].copy()
    idx_np[BAD] = bad_index
    a_np, a, idx, b = arrays(idx_np)
    with pytest.raises(GPUSimulationError) as info:
        rt_mod["main_kernel0"](a, idx, b)
    message = str(info.value)
    assert "'A'" in message and f"index {bad_index} " in message
    assert f"blockIdx.x={UNSAMPLED_BLOCK}" in message and f"threadIdx.x={THREAD}" in message
    assert "B[bx * 32 + tx] = A[idx[bx * 32 + tx]]" in message
    # The failing statement was skipped; every other thread wrote its element.
    want = a_np[np.clip(idx_np, 0, N - 1)]
    want[BAD] = -7
    np.testing.assert_array_equal(b.numpy(), want)
    np.testing.assert_array_equal(a.numpy(), a_np)
    np.testing.assert_array_equal(idx.numpy(), idx_np)


def test_module_runs_again_after_the_error():
    rt_mod = traced_gather()
    idx_np = np.arange(N, dtype="int32")
    idx_np[BAD] = N + 3
    _, a, idx, b = arrays(idx_np)
    with pytest.raises(GPUSimulationError):
        rt_mod["main_kernel0"](a, idx, b)
    good = np.roll(np.arange(N, dtype="int32"), 3)
    a_np, a, idx, b = arrays(good, seed=1)
    rt_mod["main_kernel0"](a, idx, b)
    np.testing.assert_array_equal(b.numpy(), a_np[good])


def test_scatter_out_of_bounds_store_is_skipped():
    rt_mod = build(SCATTER)
    rt_mod["main_kernel0"](*arrays(np.arange(N, dtype="int32"))[1:])
    idx_np = np.arange(N, dtype="int32")
    idx_np[BAD] = 1 << 27
    a_np, a, idx, b = arrays(idx_np)
    with pytest.raises(GPUSimulationError, match=r"'B'.*threadIdx.x=5\) of block \(blockIdx.x=2"):
        rt_mod["main_kernel0"](a, idx, b)
    want = a_np.copy()
    want[BAD] = -7
    np.testing.assert_array_equal(b.numpy(), want)


def test_gathered_load_in_a_condition():
    rt_mod = build(GATHER_IN_CONDITION)
    rt_mod["main_kernel0"](*arrays(np.arange(N, dtype="int32"))[1:])
    idx_np = np.arange(N, dtype="int32")
    idx_np[BAD] = -(1 << 27)
    _, a, idx, b = arrays(idx_np)
    where = r"'A'.*threadIdx.x=5\) of block \(blockIdx.x=2\) in `if"
    with pytest.raises(GPUSimulationError, match=where):
        rt_mod["main_kernel0"](a, idx, b)


def test_a_condition_on_loaded_data_proves_nothing_after_a_store():
    rt_mod = build(STALE_CONDITION)
    rt_mod["main_kernel0"](*arrays(np.zeros(N, dtype="int32"))[1:])
    idx_np = np.zeros(N, dtype="int32")
    idx_np[BAD] = 1
    _, a, idx, b = arrays(idx_np)
    with pytest.raises(GPUSimulationError, match=r"index 1000 .*threadIdx.x=5\) of block"):
        rt_mod["main_kernel0"](a, idx, b)


def test_guarded_gather_is_no_error():
    rt_mod = build(GUARDED_GATHER)
    idx_np = np.arange(N, dtype="int32")
    idx_np[BAD] = 1 << 28
    a_np, a, idx, b = arrays(idx_np)
    rt_mod["main_kernel0"](a, idx, b)
    want = np.where(idx_np < N, a_np[np.clip(idx_np, 0, N - 1)], np.float32(-1))
    np.testing.assert_array_equal(b.numpy(), want)


def test_affine_accesses_need_no_runtime_check():
    """Indices affine in the thread and loop indices are proven inside at build time."""
    rt_mod = build(GATHER)
    kernel = rt_mod.get_function("main_kernel0").host.kernels["main_kernel0"]
    assert [(a.buffer, a.index) for a in kernel.accesses] == [("A", "idx[bx * 32 + tx]")]


_RT_MOD = {}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-N, 2 * N - 1), min_size=N, max_size=N))
def test_gather_error_iff_an_index_is_outside(indices):
    if not _RT_MOD:
        _RT_MOD["gather"] = traced_gather()
    idx_np = np.array(indices, dtype="int32")
    a_np, a, idx, b = arrays(idx_np)
    bad = np.flatnonzero((idx_np < 0) | (idx_np >= N))
    want = a_np[np.clip(idx_np, 0, N - 1)]
    want[bad] = -7
    if bad.size:
        block, thread = divmod(int(bad[0]), THREADS)      # the lowest block's first thread
        with pytest.raises(GPUSimulationError, match=rf"thread \(threadIdx.x={thread}\) "
                                                     rf"of block \(blockIdx.x={block}\)"):
            _RT_MOD["gather"]["main_kernel0"](a, idx, b)
    else:
        _RT_MOD["gather"]["main_kernel0"](a, idx, b)
    np.testing.assert_array_equal(b.numpy(), want)
