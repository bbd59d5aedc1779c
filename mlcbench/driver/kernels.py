"""Example kernels shared by the command line demo, the benchmarks and the notebooks."""

MM_RELU = '''
@I.ir_module
class MyModule:
    @T.prim_func
    def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128), "float32")
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
'''


def parallel_vectorized_matmul(n: int = 1024, lanes: int = 16) -> str:
    """An ``n``^3 matmul in i-k-j order: rows in parallel, ``lanes``-wide vectors along j."""
    return f'''
@T.prim_func
def matmul(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"global_symbol": "matmul", "tir.noalias": True}})
    for i in T.parallel({n}):
        for j0 in range({n // lanes}):
            for j1 in T.vectorized({lanes}):
                C[i, j0 * {lanes} + j1] = T.float32(0)
        for k in range({n}):
            for j0 in range({n // lanes}):
                for j1 in T.vectorized({lanes}):
                    C[i, j0 * {lanes} + j1] = C[i, j0 * {lanes} + j1] + A[i, k] * B[k, j0 * {lanes} + j1]
'''


def register_tile(target=None) -> tuple[int, int]:
    """``(rows, cols)`` of a matmul register tile for ``target`` (the host by default):
    two vectors wide, accumulators in half of the vector registers (8 x 32 with
    AVX-512, 4 x 16 with AVX2)."""
    from ..target import Target
    target = target or Target("llvm")
    return target.vector_registers // 4, 2 * target.vector_lanes(32)


def tiled_matmul_schedule(n: int = 1024, rows: int | None = None, cols: int | None = None):
    """A ``te`` matmul scheduled for the CPU with Schedule primitives: a ``rows x cols``
    register tile (by default :func:`register_tile` of the host) accumulated in a local
    cache, vectorized columns, unrolled rows, and the outer tiles spread over the cores.
    ``print(sch.trace)`` shows the steps."""
    from .. import te
    from ..tir import Schedule
    if rows is None or cols is None:
        rows, cols = register_tile()
    a, b = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    sch = Schedule(te.create_prim_func([a, b, c]))
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, rows])
    j0, j1 = sch.split(j, factors=[None, cols])
    sch.reorder(i0, j0, k, i1, j1)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, j0)
    init = sch.decompose_reduction(block, k)
    sch.parallel(sch.fuse(i0, j0))
    sch.unroll(i1)
    sch.vectorize(j1)
    init_rows, init_cols = sch.get_loops(init)[-2:]
    sch.unroll(init_rows)
    sch.vectorize(init_cols)
    sch.vectorize(sch.get_loops(write_back)[-1])
    return sch
