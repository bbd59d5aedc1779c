"""ThreadSync: barriers where threads exchange data through shared memory, and where not."""
import pytest

from mlcbench.ir import CodegenError, IRModule, assert_structural_equal
from mlcbench.script import tir as T
from mlcbench.tir.transform import ThreadSync
from mlcbench.tir.transform.thread_sync import thread_sync


@T.prim_func
def _raw(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        S = T.allocate([32], "float32", "shared")
        S_1 = T.Buffer((32,), data=S, scope="shared")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            S_1[tx] = A[bx * 32 + tx]
            B[bx * 32 + tx] = S_1[31 - tx]


@T.prim_func
def _raw_synced(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        S = T.allocate([32], "float32", "shared")
        S_1 = T.Buffer((32,), data=S, scope="shared")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            S_1[tx] = A[bx * 32 + tx]
            T.tvm_storage_sync("shared")
            B[bx * 32 + tx] = S_1[31 - tx]


def test_a_read_of_what_other_threads_wrote_waits_for_a_barrier():
    assert_structural_equal(thread_sync(_raw), _raw_synced)


def test_an_existing_barrier_is_kept_and_not_doubled():
    assert_structural_equal(thread_sync(_raw_synced), _raw_synced)


@T.prim_func
def _tiles(A: T.Buffer((1024,), "float32"), B: T.Buffer((32,), "float32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        S = T.allocate([32], "float32", "shared")
        S_1 = T.Buffer((32,), data=S, scope="shared")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            B[tx] = T.float32(0)
            for k in range(32):
                for f in range(2):
                    if f * 32 + tx < 48:
                        S_1[(f * 32 + tx) % 32] = A[k * 32 + (f * 32 + tx) % 32]
                for j in range(32):
                    B[tx] = B[tx] + S_1[j]


@T.prim_func
def _tiles_synced(A: T.Buffer((1024,), "float32"), B: T.Buffer((32,), "float32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        S = T.allocate([32], "float32", "shared")
        S_1 = T.Buffer((32,), data=S, scope="shared")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            B[tx] = T.float32(0)
            for k in range(32):
                for f in range(2):
                    if f * 32 + tx < 48:
                        S_1[(f * 32 + tx) % 32] = A[k * 32 + (f * 32 + tx) % 32]
                T.tvm_storage_sync("shared")
                for j in range(32):
                    B[tx] = B[tx] + S_1[j]
                T.tvm_storage_sync("shared")


def test_a_tile_loop_syncs_before_reading_and_before_the_next_tile_overwrites():
    # The fetch loop's two writes need no barrier between them (no write-after-write
    # ordering); the barrier for the reads goes before the j loop, not into it; the
    # one at the end of k's body keeps step k + 1 from overwriting what k still reads.
    assert_structural_equal(thread_sync(_tiles), _tiles_synced)


@T.prim_func
def _single_step(A: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        S = T.allocate([32], "float32", "shared")
        S_1 = T.Buffer((32,), data=S, scope="shared")
        for k in range(1):
            S_1[tx] = A[tx]
            T.tvm_storage_sync("shared")
            A[tx] = S_1[31 - tx]


def test_a_loop_of_one_iteration_has_no_back_edge_to_guard():
    assert_structural_equal(thread_sync(_single_step), _single_step)


@T.prim_func
def _read_then_write(A: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        S = T.allocate([32], "float32", "shared")
        S_1 = T.Buffer((32,), data=S, scope="shared")
        A[tx] = S_1[31 - tx]
        S_1[tx] = T.float32(0)


def test_a_write_after_others_read_waits_for_a_barrier():
    # The shared allocation sits inside the thread loop, where the kernel was written.
    synced = thread_sync(_read_then_write)
    body = synced.body.body.body.seq
    assert [type(s).__name__ for s in body] == ["BufferStore", "Evaluate", "BufferStore"]
    assert body[1].value.op == "tir.tvm_storage_sync"


@T.prim_func
def _deep_allocation(A: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        for k in range(2):
            S = T.allocate([32], "float32", "shared")
            S_1 = T.Buffer((32,), data=S, scope="shared")
            S_1[tx] = A[tx]
            A[tx] = S_1[31 - tx]


@T.prim_func
def _deep_allocation_synced(A: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        for k in range(2):
            with T.allocate([32], "float32", "shared") as S:
                S_1 = T.Buffer((32,), data=S, scope="shared")
                S_1[tx] = A[tx]
                T.tvm_storage_sync("shared")
                A[tx] = S_1[31 - tx]
            T.tvm_storage_sync("shared")


def test_shared_memory_allocated_deeper_in_the_kernel_is_synced_too():
    assert_structural_equal(thread_sync(_deep_allocation), _deep_allocation_synced)


@T.prim_func
def _uniform_condition(A: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        S = T.allocate([32], "float32", "shared")
        S_1 = T.Buffer((32,), data=S, scope="shared")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            if bx == 0:
                S_1[tx] = T.float32(1)
                A[tx] = S_1[31 - tx]


def test_a_barrier_may_go_under_a_condition_every_thread_of_the_block_agrees_on():
    synced = thread_sync(_uniform_condition)
    branch = synced.body.body.body.body.then_case.seq
    assert [type(s).__name__ for s in branch] == ["BufferStore", "Evaluate", "BufferStore"]


@T.prim_func
def _divergent(A: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        S = T.allocate([32], "float32", "shared")
        S_1 = T.Buffer((32,), data=S, scope="shared")
        if tx < 16:
            S_1[tx] = T.float32(1)
            A[tx] = S_1[15 - tx]


@T.prim_func
def _divergent_loop(A: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        S = T.allocate([32], "float32", "shared")
        S_1 = T.Buffer((32,), data=S, scope="shared")
        for k in range(tx):
            A[tx] = S_1[k]
            S_1[tx] = A[k]


@pytest.mark.parametrize("func,where", [(_divergent, r"`if tx < 16:`"),
                                        (_divergent_loop, r"`for k in range\(tx\):`")])
def test_a_barrier_needed_under_a_thread_dependent_condition_is_an_error(func, where):
    with pytest.raises(CodegenError, match=r"barrier is needed for shared buffer 'S' "
                                           f"inside {where}"):
        thread_sync(func)


@T.prim_func
def _divergent_after_write(A: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        S = T.allocate([32], "float32", "shared")
        S_1 = T.Buffer((32,), data=S, scope="shared")
        S_1[tx] = T.float32(1)
        if tx < 16:
            A[tx] = S_1[15 - tx]


def test_a_barrier_for_a_thread_dependent_branch_goes_before_it():
    synced = thread_sync(_divergent_after_write)
    body = synced.body.body.body.seq
    assert [type(s).__name__ for s in body] == ["BufferStore", "Evaluate", "IfThenElse"]


@T.prim_func
def _local_only(A: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        L = T.allocate([4], "float32", "local")
        L_1 = T.Buffer((4,), data=L, scope="local")
        L_1[0] = A[tx]
        A[tx] = L_1[0] + A[31 - tx]


def test_kernels_without_shared_memory_are_left_alone():
    assert thread_sync(_local_only) is _local_only


def test_the_pass_touches_device_kernels_only():
    kernel = _raw.with_attrs({"calling_conv": "device_kernel", "global_symbol": "k0"})
    host = _raw.with_attrs({"global_symbol": "main"})
    out = ThreadSync()(IRModule({"k0": kernel, "main": host}))
    assert out["main"] is host
    assert_structural_equal(out["k0"], _raw_synced.with_attrs(kernel.attrs))
