"""``T.parallel`` loops run on libgomp's threads, which claim guided chunks
(``ceil(remaining / (2 * threads))`` iterations) from a shared counter."""
import numpy as np
import pytest
from helpers.codegen_helpers import compile_kernels, flat, kernel, ramp

from mlcbench.target import Target
from mlcbench.tir import Allocate, BufferStore, For, Var, call_extern, seq

N = 1000


def _thread_ids():
    """out[i] = the OpenMP thread that ran iteration i."""
    out = flat("out", N, "int32")
    i = Var("i")
    body = BufferStore(out, call_extern("int32", "omp_get_thread_num"), (i,))
    return kernel("thread_ids", [out], For(i, 0, N, "parallel", body))


def _parallel_with_private_buffer():
    """Each iteration fills its own stack buffer, then sums it: out[i] = sum_k (i + k)."""
    out = flat("out", N, "int64")
    scratch = flat("scratch", 8, "int64")
    i, k, m = Var("i", "int64"), Var("k", "int64"), Var("m", "int64")
    fill = For(k, 0, 8, "serial", BufferStore(scratch, i + k, (k,)))
    clear = BufferStore(out, 0, (i,))
    add = For(m, 0, 8, "serial", BufferStore(out, out[i] + scratch[m], (i,)))
    return kernel("private_buffer", [out],
                  For(i, 0, N, "parallel", Allocate(scratch, seq(fill, clear, add))))


def _nested_parallel_vectorized(rows=37, cols=64):
    """A parallel loop inside another runs serially; vector stores inside the body."""
    A, out = flat("A", rows * cols), flat("out", rows * cols)
    i, j = Var("i"), Var("j")
    index = ramp(i * cols + j * 16, 16)
    inner = For(j, 0, cols // 16, "parallel",
                BufferStore(out, A.vload((index,)) * 2.0, (index,)))
    return kernel("nested", [A, out], For(i, 0, rows, "parallel", inner))


@pytest.fixture(scope="module")
def lib():
    with Target("llvm --num-cores=2"):
        return compile_kernels(_thread_ids(), _parallel_with_private_buffer(),
                               _nested_parallel_vectorized())


def _guided_chunks(n, threads=2):
    chunks, lo = [], 0
    while lo < n:
        size = -(-(n - lo) // (2 * threads))
        chunks.append((lo, lo + size))
        lo += size
    return chunks


def test_guided_chunks_cover_every_iteration_once(lib):
    out = np.full(N, -1, "int32")
    lib["thread_ids"](out)
    assert set(np.unique(out)) <= {0, 1}
    for lo, hi in _guided_chunks(N):
        assert len(set(out[lo:hi])) == 1, f"chunk [{lo}, {hi}) runs on one thread"


def test_parallel_body_with_private_allocation(lib):
    out = np.full(N, -1, "int64")
    lib["private_buffer"](out)
    i = np.arange(N, dtype="int64")
    np.testing.assert_array_equal(out, 8 * i + 28)


def test_nested_parallel_loop(lib):
    a = np.random.default_rng(0).random(37 * 64, dtype="float32")
    out = np.zeros_like(a)
    lib["nested"](a, out)
    np.testing.assert_array_equal(out, 2 * a)


def test_outlined_body_keeps_noalias(lib):
    ir_text = lib.get_source("ll")
    body = [line for line in ir_text.splitlines() if "@mlc_nested_par" in line and "define" in line
            and "_body" in line]
    assert body and "noalias" in body[0]
    assert "@GOMP_parallel" in ir_text


def _run_in_forked_child(lib, conn):
    """In a child forked after the parent ran parallel kernels: the parent's kernels and
    one built here, each run once; the results go back through ``conn``."""
    ids = np.full(N, -1, "int32")
    lib["thread_ids"](ids)
    private = np.zeros(N, "int64")
    with Target("llvm --num-cores=2"):
        compile_kernels(_parallel_with_private_buffer())["private_buffer"](private)
    conn.send((ids, private))


def test_a_child_forked_after_parallel_kernels_runs_them_on_one_thread(lib):
    """libgomp's thread team does not survive fork: without the runtime's fork hook the
    child's first parallel region waits forever for the parent's threads."""
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    lib["thread_ids"](np.zeros(N, "int32"))                  # the parent's team exists
    parent_end, child_end = ctx.Pipe()
    child = ctx.Process(target=_run_in_forked_child, args=(lib, child_end))
    child.start()
    finished = parent_end.poll(60)
    if not finished:
        child.kill()
    child.join()
    assert finished, "the forked child's parallel kernel did not finish in 60 s"
    ids, private = parent_end.recv()
    np.testing.assert_array_equal(ids, np.zeros(N, "int32"))   # one thread: thread 0
    np.testing.assert_array_equal(private, 8 * np.arange(N, dtype="int64") + 28)


def test_kernels_take_no_more_threads_than_openmp_allows(lib):
    assert "@omp_get_max_threads" in lib.get_source("ll")
