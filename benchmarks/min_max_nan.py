"""What NaN-propagating ``T.max``/``T.min`` cost: three lowerings of a float max, timed.

Run: ``python benchmarks/min_max_nan.py``.

``select``: ``a > b ? a : b`` (what TVM emits; ``max(NaN, 0)`` is 0), one ``vmaxps``.
``nan_select``: the same, then NaN where either operand is NaN (numpy's ``np.maximum``).
``intrinsic``: LLVM's ``llvm.maximum`` (NaN-propagating, and -0 < +0).
Kernels: a row max over 1024 floats (softmax's first step; LLVM's loop vectorizer
must recognise the reduction), a 2x2 max-pool with an explicitly vectorized width loop,
and an elementwise ReLU. Figures are times relative to ``select`` measured in the same
run, with numpy's time for scale.
"""
from __future__ import annotations

import numpy as np

import mlcbench
from mlcbench.codegen.llvm import expr as llvm_expr
from mlcbench.script import from_source
from mlcbench.target import Target

from timing import host_line, call, compare, kernel

ROWS, COLS = 512, 1024
KERNELS = {
    "row_max": (f"""
@T.prim_func
def main(A: T.Buffer(({ROWS}, {COLS}), "float32"), M: T.Buffer(({ROWS},), "float32")):
    for i in range({ROWS}):
        M[i] = T.float32(-3.0e38)
        for k in range({COLS}):
            M[i] = T.max(M[i], A[i, k])
""", lambda a: a.max(axis=1), (ROWS,)),
    "max_pool_2x2": (f"""
@T.prim_func
def main(A: T.Buffer(({ROWS}, {COLS}), "float32"),
         M: T.Buffer(({ROWS // 2}, {COLS // 2}), "float32")):
    for i, jo in T.grid({ROWS // 2}, {COLS // 16}):
        for ji in T.vectorized(8):
            M[i, jo * 8 + ji] = T.max(T.max(A[i * 2, jo * 16 + ji * 2],
                                            A[i * 2, jo * 16 + ji * 2 + 1]),
                                      T.max(A[i * 2 + 1, jo * 16 + ji * 2],
                                            A[i * 2 + 1, jo * 16 + ji * 2 + 1]))
""", lambda a: a.reshape(ROWS // 2, 2, COLS // 2, 2).max(axis=(1, 3)), (ROWS // 2, COLS // 2)),
    "relu": (f"""
@T.prim_func
def main(A: T.Buffer(({ROWS}, {COLS}), "float32"), M: T.Buffer(({ROWS}, {COLS}), "float32")):
    for i, j in T.grid({ROWS}, {COLS}):
        M[i, j] = T.max(A[i, j], T.float32(0))
""", lambda a: np.maximum(a, 0), (ROWS, COLS)),
}
LOWERINGS = ("select", "nan_select", "intrinsic")


def main() -> None:
    target = Target("llvm --num-cores=1")
    print(host_line(1))
    a = np.random.default_rng(0).standard_normal((ROWS, COLS)).astype("float32")
    for name, (source, reference, out_shape) in KERNELS.items():
        contenders = {"numpy": call(lambda: reference(a))}
        for lowering in LOWERINGS:
            llvm_expr.FLOAT_MIN_MAX = lowering
            lib = mlcbench.build(from_source(source), target=target)
            out = np.zeros(out_shape, "float32")
            lib["main"](a, out)
            np.testing.assert_allclose(out, reference(a))
            contenders[lowering] = kernel(lib, "main", a, out)
        best = compare(contenders, rounds=5, min_repeat_ms=30, settle_ms=20)
        figures = "  ".join(f"{k} {best[k] / best['select']:.2f}x" for k in best)
        print(f"{name:13s} select {best['select'] * 1e6:8.1f} us   {figures}")


if __name__ == "__main__":
    main()
