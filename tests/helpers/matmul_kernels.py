"""Course chapter 7's matmul schedules written by hand in the GPU lowered form (N x N,
fp32, row-major): what lowering the course's schedules gives, for testing the simulator
on its own. ``matmul_module(variant, n)`` parses one of them."""
from __future__ import annotations

from mlcbench.script import from_source

_HEADER = '''
from mlcbench.script import tir as T

@T.prim_func
def main_kernel0(A: T.Buffer(({nn},), "float32"), B: T.Buffer(({nn},), "float32"),
                 C: T.Buffer(({nn},), "float32")):
    T.func_attr({{"global_symbol": "main_kernel0", "calling_conv": "device_kernel"}})
'''

# One thread per element of C: threadIdx.x runs along a row (coalesced B and C).
NAIVE = _HEADER + '''
    for by in T.thread_binding({n} // 16, thread="blockIdx.y"):
        for bx in T.thread_binding({n} // 16, thread="blockIdx.x"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                for ty in T.thread_binding(16, thread="threadIdx.y"):
                    acc_data = T.allocate([1], "float32", "local")
                    acc = T.decl_buffer((1,), "float32", data=acc_data, scope="local")
                    acc[0] = T.float32(0)
                    for k in range({n}):
                        acc[0] = acc[0] + A[(by * 16 + ty) * {n} + k] * B[k * {n} + bx * 16 + tx]
                    C[(by * 16 + ty) * {n} + bx * 16 + tx] = acc[0]
'''

# blocking(sch, 8, 8, 8, 8, 4): an 8x8 tile of C per thread, in registers.
LOCAL = _HEADER + '''
    for by in T.thread_binding({n} // 64, thread="blockIdx.y"):
        for bx in T.thread_binding({n} // 64, thread="blockIdx.x"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                for ty in T.thread_binding(8, thread="threadIdx.y"):
                    C_local_data = T.allocate([64], "float32", "local")
                    C_local = T.decl_buffer((64,), "float32", data=C_local_data, scope="local")
                    for i2 in range(8):
                        for j2 in range(8):
                            C_local[i2 * 8 + j2] = T.float32(0)
                    for k0 in range({n} // 4):
                        for k1 in range(4):
                            for i2 in range(8):
                                for j2 in range(8):
                                    C_local[i2 * 8 + j2] = C_local[i2 * 8 + j2] + A[(by * 64 + ty * 8 + i2) * {n} + k0 * 4 + k1] * B[(k0 * 4 + k1) * {n} + bx * 64 + tx * 8 + j2]
                    for i2 in range(8):
                        for j2 in range(8):
                            C[(by * 64 + ty * 8 + i2) * {n} + bx * 64 + tx * 8 + j2] = C_local[i2 * 8 + j2]
'''

# blocking_with_shared(sch, 8, 8, 8, 8, 8): 64x8 tiles of A and 8x64 of B fetched into
# shared memory by all 64 threads, 4 floats at a time.
SHARED = _HEADER + '''
    for by in T.thread_binding({n} // 64, thread="blockIdx.y"):
        for bx in T.thread_binding({n} // 64, thread="blockIdx.x"):
            A_sh_data = T.allocate([512], "float32", "shared")
            A_sh = T.decl_buffer((512,), "float32", data=A_sh_data, scope="shared")
            B_sh_data = T.allocate([512], "float32", "shared")
            B_sh = T.decl_buffer((512,), "float32", data=B_sh_data, scope="shared")
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                C_local_data = T.allocate([64], "float32", "local")
                C_local = T.decl_buffer((64,), "float32", data=C_local_data, scope="local")
                for i2 in range(8):
                    for j2 in range(8):
                        C_local[i2 * 8 + j2] = T.float32(0)
                for k0 in range({n} // 8):
                    T.tvm_storage_sync("shared")
                    for ax in range(2):
                        A_sh[T.Ramp(ax * 256 + tx * 4, 1, 4)] = A[T.Ramp((by * 64 + (ax * 256 + tx * 4) // 8) * {n} + k0 * 8 + (tx * 4) % 8, 1, 4)]
                    for ax in range(2):
                        B_sh[T.Ramp(ax * 256 + tx * 4, 1, 4)] = B[T.Ramp((k0 * 8 + (ax * 256 + tx * 4) // 64) * {n} + bx * 64 + (tx * 4) % 64, 1, 4)]
                    T.tvm_storage_sync("shared")
                    for k1 in range(8):
                        for i2 in range(8):
                            for j2 in range(8):
                                C_local[i2 * 8 + j2] = C_local[i2 * 8 + j2] + A_sh[(tx // 8 * 8 + i2) * 8 + k1] * B_sh[k1 * 64 + tx % 8 * 8 + j2]
                for i2 in range(8):
                    for j2 in range(8):
                        C[(by * 64 + tx // 8 * 8 + i2) * {n} + bx * 64 + tx % 8 * 8 + j2] = C_local[i2 * 8 + j2]
'''

VARIANTS = {"naive": NAIVE, "local": LOCAL, "shared": SHARED}


def matmul_module(variant: str, n: int):
    """The IRModule of one variant for n x n matrices (n a multiple of 64)."""
    from mlcbench.ir.module import IRModule
    func = from_source(VARIANTS[variant].format(n=n, nn=n * n))
    return IRModule({"main_kernel0": func})
