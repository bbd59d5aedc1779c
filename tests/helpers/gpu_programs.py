"""Course chapter 7's GPU programs and schedules (vector add, window sum with shared
memory, 1024^3 matmul with local blocking and with shared blocking plus a vectorized
cooperative fetch), as the course writes them, for the GPU lowering tests; and
``run_kernel_serially``, which runs a barrier-free kernel with the lowered-form
interpreter by treating its thread loops as serial loops.
"""
from helpers.interp import run_lowered

from mlcbench import tir
from mlcbench.driver.gpu_course import blocking, blocking_with_shared  # noqa: F401
from mlcbench.script import ir as I
from mlcbench.script import tir as T
from mlcbench.tir.stmt import For, ForKind
from mlcbench.tir.functor import StmtExprMutator

@I.ir_module
class VecAdd:
    @T.prim_func
    def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), C: T.Buffer((1024,), "float32")) -> None:
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in T.grid(1024):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = A[vi] + B[vi]

@I.ir_module
class WindowSum:
    @T.prim_func
    def main(A: T.Buffer((1027,), "float32"), B: T.Buffer((1024,), "float32")) -> None:
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in T.grid(1024):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + A[vi + 1] + A[vi + 2]

@I.ir_module
class Matmul:
    @T.prim_func
    def main(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")) -> None:
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(1024, 1024, 1024):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = 0.0
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

def vec_add(factor=128, module=None):
    sch = tir.Schedule(module or VecAdd)
    i, = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, factor])
    sch.bind(i0, "blockIdx.x"); sch.bind(i1, "threadIdx.x")
    return sch.mod

def window_sum(nthread=128):
    sch = tir.Schedule(WindowSum)
    block_C = sch.get_block("C")
    i, = sch.get_loops(block=block_C)
    i0, i1 = sch.split(i, [None, nthread])
    sch.bind(i0, "blockIdx.x"); sch.bind(i1, "threadIdx.x")
    A_shared = sch.cache_read(block_C, read_buffer_index=0, storage_scope="shared")
    sch.compute_at(A_shared, i1)
    ax = sch.get_loops(A_shared)[-1]
    ax0, ax1 = sch.split(ax, [None, nthread])
    sch.bind(ax1, "threadIdx.x")
    return sch.mod

def matmul_local():
    return blocking(tir.Schedule(Matmul), 8, 8, 8, 8, 4).mod

def matmul_shared():
    return blocking_with_shared(tir.Schedule(Matmul), 8, 8, 8, 8, 8).mod



class _ThreadLoopsToSerial(StmtExprMutator):
    def visit_For(self, loop):
        body = self.visit(loop.body)
        if loop.kind != ForKind.THREAD_BINDING:
            return loop if body is loop.body else loop.replace(body=body)
        return For(loop.loop_var, loop.min, loop.extent, ForKind.SERIAL, body)


def run_kernel_serially(kernel, *arrays):
    """Run a device kernel without barriers one thread after another (exact when no
    thread reads what another wrote); ``arrays`` follow the kernel's params."""
    run_lowered(kernel.with_body(_ThreadLoopsToSerial().visit(kernel.body)), *arrays)


def run_kernel_in_phases(kernel, *arrays):
    """Run a kernel whose barriers all sit at the top of its per-thread body, one phase
    (the statements between two barriers) for every thread before the next: what a
    barrier guarantees. Its nest is blockIdx.x, shared allocations, threadIdx.x."""
    from mlcbench.tir import Allocate
    from mlcbench.tir.transform.thread_sync import is_sync
    block, shared, thread = kernel.body, [], kernel.body.body
    while isinstance(thread, Allocate):
        shared.append(thread)
        thread = thread.body
    items = list(thread.body.seq) if hasattr(thread.body, "seq") else [thread.body]
    phases, current = [], []
    for item in items + [None]:
        if item is None or is_sync(item):
            phases.append(thread.replace(body=tir.stmt.seq(*current)))
            current = []
        else:
            current.append(item)
    body = tir.stmt.seq(*phases)
    for alloc in reversed(shared):
        body = alloc.replace(body=body)
    run_kernel_serially(kernel.with_body(block.replace(body=body)), *arrays)


# Course chapter 7's window sum written directly in the GPU lowered form (one device
# kernel): each block stages its window of A in shared memory, then reads it after a barrier.
@T.prim_func
def window_sum_kernel(A: T.Buffer((1027,), "float32"), B: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        A_shared = T.allocate([130], "float32", "shared")
        A_shared_buf = T.decl_buffer((130,), "float32", data=A_shared, scope="shared")
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            for ax0 in range(2):
                if ax0 * 128 + tx < 130:
                    A_shared_buf[ax0 * 128 + tx] = A[bx * 128 + ax0 * 128 + tx]
            T.tvm_storage_sync("shared")
            B[bx * 128 + tx] = A_shared_buf[tx] + A_shared_buf[tx + 1] + A_shared_buf[tx + 2]


# Device kernels every device code generator must refuse: a buffer allocated with global
# scope inside the kernel, and a virtual thread left unlowered.
@T.prim_func
def global_in_kernel(A: T.Buffer((128,), "float32")):
    T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    for tx in T.thread_binding(128, thread="threadIdx.x"):
        A_global = T.allocate([128], "float32", "global")
        A_global_buf = T.decl_buffer((128,), "float32", data=A_global)
        A_global_buf[tx] = A[tx]


@T.prim_func
def vthread_left(A: T.Buffer((128,), "float32")):
    T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    for v in T.thread_binding(2, thread="vthread"):
        A[v] = T.float32(0)
