"""Denormals flushed to zero inside kernels (``Target.flush_denormals``, codegen.llvm.fp_mode):
flushed on the kernel's thread and on OpenMP's, the caller's mode put back after every
return (also a failed assertion's), and IEEE gradual underflow with ``-flush-denormals=0``."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import te
from mlcbench.script import from_source
from mlcbench.target import Target, TargetError

N = 4096
SMALL = 64
TINY = np.finfo(np.float32).tiny     # the smallest normal float32


def _halve(parallel: bool, n: int = N):
    a = te.placeholder((n,), name="A")
    b = te.compute((n,), lambda i: a[i] * 0.5, name="B")
    sch = tvm.tir.Schedule(te.create_prim_func([a, b]))
    if parallel:
        (loop,) = sch.get_loops(sch.get_block("B"))
        sch.parallel(loop)
    return sch.mod


def _numpy_keeps_denormals():
    """The caller's own arithmetic still underflows gradually."""
    return float(np.float32(TINY) * np.float32(0.5)) == pytest.approx(float(TINY) / 2)


@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
def test_default_cpu_target_flushes_denormal_operands_and_results(parallel):
    lib = tvm.build(_halve(parallel), target="llvm --num-cores=2")
    a = np.full(N, TINY, "float32")          # a normal operand whose half is denormal
    a[::2] = TINY / 4                        # and denormal operands
    b = np.full(N, 7.0, "float32")
    lib["main"](a, b)
    np.testing.assert_array_equal(b, np.zeros(N, "float32"))
    assert _numpy_keeps_denormals()


@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
def test_flush_denormals_0_keeps_ieee_underflow(parallel):
    lib = tvm.build(_halve(parallel), target="llvm --num-cores=2 -flush-denormals=0")
    a = np.full(N, TINY, "float32")
    a[::2] = TINY / 4
    b = np.zeros(N, "float32")
    lib["main"](a, b)
    np.testing.assert_array_equal(b, a * np.float32(0.5))
    assert np.count_nonzero(b) == N


def test_the_callers_mode_is_restored_after_a_failed_assertion():
    lib = tvm.build(from_source('''
@T.prim_func
def main(A: T.Buffer((4,), "float32"), n: T.int32):
    assert n > 0, "n must be positive"
    for i in range(4):
        A[i] = A[i] * T.float32(0.5)
'''), target="llvm")
    with pytest.raises(Exception, match="failed"):
        lib["main"](np.full(4, TINY, "float32"), 0)
    assert _numpy_keeps_denormals()


def test_the_kernel_saves_sets_and_restores_mxcsr():
    """Structure: FTZ | DAZ (0x8040) ored into the saved word, put back before the ret."""
    ir_text = tvm.build(_halve(False), target="llvm -mcpu=znver3").get_source("ll")
    main = ir_text[ir_text.index("define"):]
    assert main.count("call void @llvm.x86.sse.stmxcsr(") == 1
    assert main.count("call void @llvm.x86.sse.ldmxcsr(") == 2
    assert "32832" in main                   # 0x8040
    assert main.rindex("call void @llvm.x86.sse.ldmxcsr(") < main.rindex("ret i32 0")
    ieee = tvm.build(_halve(False), target="llvm -mcpu=znver3 -flush-denormals=0")
    assert "mxcsr" not in ieee.get_source("ll")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=SMALL,
                max_size=SMALL))
def test_flushed_results_differ_from_numpy_only_below_the_normal_range(values):
    a = np.array(values, "float32")
    b = np.zeros(SMALL, "float32")
    _flushing_lib()["main"](a, b)
    expected = a * np.float32(0.5)
    normal = (np.abs(a) >= TINY) & (np.abs(expected) >= TINY)
    np.testing.assert_array_equal(b[normal], expected[normal])
    np.testing.assert_array_equal(b[~normal], np.zeros(np.count_nonzero(~normal), "float32"))


_libs = {}


def _flushing_lib():
    if "lib" not in _libs:
        _libs["lib"] = tvm.build(_halve(False, SMALL), target="llvm")
    return _libs["lib"]


@pytest.mark.parametrize("text, expected", [("llvm", True), ("llvm -flush-denormals=1", True),
                                            ("llvm -flush-denormals=false", False),
                                            ("cuda", False)])
def test_target_option(text, expected):
    assert Target(text).flush_denormals is expected


def test_a_bad_option_value_is_refused_when_the_target_is_made():
    with pytest.raises(TargetError, match="-flush-denormals expects 0 or 1, found 'sometimes'"):
        Target("llvm -flush-denormals=sometimes")
