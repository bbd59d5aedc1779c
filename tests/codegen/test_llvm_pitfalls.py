"""Programs that once made LLVM's optimizer produce wrong code, checked against numpy."""
import re
import textwrap

import numpy as np
import pytest
from helpers.codegen_helpers import host_module_from_optimized_ir, run_llvm_ir_optimized_for

import mlcbench as tvm
from mlcbench.script import from_source


def _fused_reduction(m, n, k):
    # A reduction loop around a fused spatial loop, with the init under `if k == 0`:
    # the vectorizer used to interleave this loop and read B[k, f % n] as B[k, f].
    return from_source(f'''
@T.prim_func
def main(A: T.Buffer(({m}, {k}), "float32"), B: T.Buffer(({k}, {n}), "float32"),
         C: T.Buffer(({m}, {n}), "float32")):
    for r, f in T.grid({k}, {m * n}):
        if r == 0:
            C[f // {n}, f % {n}] = T.float32(0)
        C[f // {n}, f % {n}] = C[f // {n}, f % {n}] + A[f // {n}, r] * B[r, f % {n}]
''')


@pytest.mark.parametrize("m, n, k", [(8, 16, 12), (16, 8, 12), (4, 32, 3), (64, 2, 3)])
def test_fused_spatial_loop_under_reduction_loop(m, n, k):
    lib = tvm.build(_fused_reduction(m, n, k))
    rng = np.random.default_rng(0)
    a, b = rng.random((m, k), dtype="float32"), rng.random((k, n), dtype="float32")
    c = np.zeros((m, n), "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


_SPLIT_FUSED_REDUCTION = '''
@T.prim_func
def main(A: T.Buffer((8, 12), "float32"), B: T.Buffer((12, 16), "float32"),
         C: T.Buffer((8, 16), "float32")):
    Y = T.alloc_buffer((128,))
    for k, f0, f1 in T.grid(12, 32, 4):
        if k == 0:
            Y[f0 * 4 + f1] = T.float32(0)
        Y[f0 * 4 + f1] = Y[f0 * 4 + f1] + A[f0 // 4, k] * B[k, f0 % 4 * 4 + f1]
    for i, j in T.grid(8, 16):
        C[i, j] = T.max(Y[i * 16 + j], T.float32(0))
'''


def test_split_fused_spatial_loop_under_reduction_loop():
    """LLVM's -O3 pipeline miscompiles this reduced form of the program (40 lines that
    LLVM's own passes get wrong, for haswell, znver3, znver4 and skylake-avx512 alike;
    x86-64 without AVX is correct). Once the unroller has flattened ``f1``, the loop
    vectorizer widens ``B[k*16 + f0 % 4 * 4 + f1]`` over ``f0`` as one contiguous
    ``<32 x float>`` load from ``B[k*16]``: ``f0 % 4`` is read as ``f0``. The wrong
    answer needs both passes (either one alone is correct)::

        define void @main(ptr noalias %B, ptr noalias %C) {
        entry:
          br label %k.head
        k.head:                           ; for k in range(12)
          %k = phi i32 [ 0, %entry ], [ %k.next, %f0.head ]
          %k.more = icmp slt i32 %k, 12
          br i1 %k.more, label %f0.head, label %exit
        f0.head:                          ;   for f0 in range(32)
          %f0 = phi i32 [ 0, %k.head ], [ %f0.next, %f1.head ]
          %f0.more = icmp slt i32 %f0, 32
          %k.next = add nsw i32 %k, 1
          br i1 %f0.more, label %f1.head, label %k.head
        f1.head:                          ;     for f1 in range(4)
          %f1 = phi i32 [ 0, %f0.head ], [ %f1.next, %f1.body ]
          %f1.more = icmp slt i32 %f1, 4
          %f0.next = add nsw i32 %f0, 1
          br i1 %f1.more, label %f1.body, label %f0.head
        f1.body:                          ;       C[f0*4 + f1] += B[k*16 + f0 % 4 * 4 + f1]
          %f0x4 = mul nsw i32 %f0, 4
          %c = add nsw i32 %f0x4, %f1
          %c.i64 = sext i32 %c to i64
          %c.ptr = getelementptr inbounds float, ptr %C, i64 %c.i64
          %acc = load float, ptr %c.ptr, align 4
          %kx16 = mul nsw i32 %k, 16
          %f0.mod4 = urem i32 %f0, 4
          %m4 = mul nsw i32 %f0.mod4, 4
          %row = add nsw i32 %kx16, %m4
          %b = add nsw i32 %row, %f1
          %b.i64 = sext i32 %b to i64
          %b.ptr = getelementptr inbounds float, ptr %B, i64 %b.i64
          %bval = load float, ptr %b.ptr, align 4
          %sum = fadd float %acc, %bval
          store float %sum, ptr %c.ptr, align 4
          %f1.next = add nsw i32 %f1, 1
          br label %f1.head
        exit:
          ret void
        }

    Our code generator keeps the vectorizer off loops whose variable reaches an index
    through ``%`` or ``//`` (codegen/llvm/loop_hints.py), so this program is right on
    every CPU.
    """
    lib = tvm.build(from_source(_SPLIT_FUSED_REDUCTION))
    np.testing.assert_allclose(_run_split_fused(lib), _split_fused_expected(), rtol=1e-5)


# The IR of the docstring above, as LLVM parses it.
REDUCED_IR = textwrap.dedent(test_split_fused_spatial_loop_under_reduction_loop.__doc__
                             .split("::")[1].split("    Our code generator")[0])


def _split_fused_inputs():
    rng = np.random.default_rng(0)
    return rng.random((8, 12), dtype="float32"), rng.random((12, 16), dtype="float32")


def _split_fused_expected():
    a, b = _split_fused_inputs()
    return np.maximum(a @ b, 0)


def _run_split_fused(lib):
    a, b = _split_fused_inputs()
    c = np.zeros((8, 16), "float32")
    lib["main"](a, b, c)
    return c


@pytest.mark.parametrize("cpu", ["znver4", "skylake-avx512", "znver3"])
def test_split_fused_reduction_is_right_in_the_code_built_for_other_cpus(cpu):
    # The IR optimized for `cpu` runs here, compiled for the host without being
    # optimized again: a vectorizer miscompile for AVX-512 shows on an AVX2 host too.
    lib = tvm.build(from_source(_SPLIT_FUSED_REDUCTION), target=f"llvm -mcpu={cpu}")
    host_lib = host_module_from_optimized_ir(lib)
    np.testing.assert_allclose(_run_split_fused(host_lib), _split_fused_expected(), rtol=1e-5)


@pytest.mark.parametrize("m, n, k", [(8, 16, 12), (64, 2, 3)])
def test_fused_reduction_is_right_in_the_code_built_for_avx512(m, n, k):
    lib = host_module_from_optimized_ir(tvm.build(_fused_reduction(m, n, k),
                                                  target="llvm -mcpu=znver4"))
    rng = np.random.default_rng(1)
    a, b = rng.random((m, k), dtype="float32"), rng.random((k, n), dtype="float32")
    c = np.zeros((m, n), "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_only_loops_that_divide_their_variable_keep_the_vectorizer_off():
    lib = tvm.build(from_source(_SPLIT_FUSED_REDUCTION), target="llvm -mcpu=znver4")
    ir_text = lib._artifact.get_source("ll-unoptimized")
    hinted = re.findall(r'br label %"for_(\w+)", !llvm.loop', ir_text)
    assert hinted == ["f0"], hinted        # B[k, f0 % 4 * 4 + f1]: f0 only
    assert '!{ !"llvm.loop.vectorize.enable", i1 0 }' in ir_text


def test_llvm_still_miscompiles_the_reduced_ir():
    """When this fails, LLVM has fixed the bug and loop_hints.py can go."""
    b_padded = np.random.default_rng(0).random(12 * 16 + 64, dtype="float32")
    b = b_padded[:12 * 16]                 # the wrong reads land in the padding
    c = np.zeros(128, "float32")
    kernel = run_llvm_ir_optimized_for("znver4", REDUCED_IR, "main", 2)
    kernel(b.ctypes.data, c.ctypes.data)
    assert not np.allclose(c, np.tile(b.reshape(12, 16).sum(0), 8), rtol=1e-5)



_SMALL_MATMUL = '''
@T.prim_func
def main(A: T.Buffer((4, 5), "float32"), B: T.Buffer((5, 9), "float32"),
         C: T.Buffer((4, 9), "float32")):
    T.func_attr({"tir.noalias": T.bool(True)})
    Y = T.alloc_buffer((4, 9), "float32")
    for i, j, k in T.grid(4, 9, 5):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(4, 9):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = Y[vi, vj] * T.float32(2)
'''


def test_small_unscheduled_matmul_builds_in_a_child_process():
    """Found by benchmarks/fuzz_programs.py --replay 4000549: with loop vectorization, SLP
    vectorization and unrolling together, LLVM 22's -O3 left a shuffle that does not
    dominate its use, and instruction selection ended the process ('Already set a value
    for this node!'). compile_ir verifies the optimized module and optimizes again without
    SLP vectorization. Built in a child process (a regression would end the process that
    builds) for a named CPU, haswell, whose code runs on every x86-64 host the suite meets."""
    import subprocess
    import sys
    code = ("import numpy as np, mlcbench as tvm\n"
            "from mlcbench.script import from_source\n"
            f"lib = tvm.build(from_source({_SMALL_MATMUL!r}), target='llvm -mcpu=haswell')\n"
            "a = np.arange(20, dtype='float32').reshape(4, 5)\n"
            "b = np.arange(45, dtype='float32').reshape(5, 9) / 7\n"
            "c = np.zeros((4, 9), 'float32')\n"
            "lib['main'](a, b, c)\n"
            "np.testing.assert_allclose(c, 2 * a @ b, rtol=1e-5)\n")
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120)
    assert child.returncode == 0, child.stderr[-2000:]


def test_a_module_the_optimizer_breaks_is_optimized_again_without_slp(monkeypatch):
    """Whatever LLVM version runs, a module that fails verification after -O3 is rebuilt
    from the same IR with SLP vectorization off, and the artifact says so."""
    from mlcbench.codegen.llvm import engine
    from mlcbench.target import Target
    calls, verdicts = [], iter([False, True])
    real_optimize = engine.optimize

    def recording_optimize(module, machine, slp_vectorization=True):
        calls.append(slp_vectorization)
        real_optimize(module, machine, slp_vectorization)
    monkeypatch.setattr(engine, "optimize", recording_optimize)
    monkeypatch.setattr(engine, "_verifies", lambda module: next(verdicts))
    ir_text = ('define float @twice(float %x) {\n  %y = fadd float %x, %x\n'
               '  ret float %y\n}\n')
    artifact = engine.compile_ir(ir_text, Target("llvm -mcpu=haswell"), "twice")
    assert calls == [True, False]
    assert artifact.pipeline.startswith("O3 without SLP")
    assert "fadd" in artifact.get_source("ll")


def test_a_module_invalid_after_both_pipelines_is_a_codegen_error(monkeypatch):
    from mlcbench.codegen.llvm import engine
    from mlcbench.ir.errors import CodegenError
    from mlcbench.target import Target
    monkeypatch.setattr(engine, "_verifies", lambda module: False)
    ir_text = "define void @nothing() {\n  ret void\n}\n"
    with pytest.raises(CodegenError, match="invalid IR for 'nothing'"):
        engine.compile_ir(ir_text, Target("llvm -mcpu=haswell"), "nothing")
