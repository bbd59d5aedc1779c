"""CPU names and features are checked against LLVM's lists before LLVM sees them.

Without the check, LLVM ends the whole process ("LLVM ERROR: 64-bit code requested on
a subtarget that doesn't support it!") at the first build; tests that build go to a
child process so that a regression fails a test instead of killing the test runner.
"""
import subprocess
import sys

import pytest

from mlcbench.ir.errors import CodegenError, MLCBenchError
from mlcbench.target import Target, TargetError


@pytest.mark.parametrize("text, message", [
    ("llvm -mcpu=notacpu", r"-mcpu=notacpu: LLVM knows no such CPU .* e\.g\. alderlake"),
    ("llvm -mcpu=skylake-avx51", "close matches: skylake-avx512"),
    ("llvm -mcpu=i386", "-mcpu=i386: .*64-bit code requested.*32-bit CPU.*x86-64"),
    ("llvm -mcpu=znver3 -mattr=+nonsense", r"'nonsense' \(in '\+nonsense'\) is not a feature"),
    ("llvm -mattr=+avx512fx", "close matches: avx512f"),
    ("llvm -mattr=avx2", r"expected \+avx2 or -avx2"),
    ("llvm -mtriple=notarch-unknown-linux", "triple 'notarch-unknown-linux'.*No available"),
])
def test_unknown_or_unusable_cpu_and_features_are_refused(text, message):
    with pytest.raises(TargetError, match=message) as info:
        Target(text)
    assert isinstance(info.value, CodegenError) and isinstance(info.value, MLCBenchError)


@pytest.mark.parametrize("text, width", [("llvm -mcpu=znver4", 512),
                                         ("llvm -mcpu=haswell -mattr=+avx512f", 512),
                                         ("llvm -mcpu=znver4 -mattr=-avx512f", 256),
                                         ("llvm -mcpu=x86-64", 128)])
def test_cpus_and_features_llvm_knows_are_accepted(text, width):
    assert Target(text).vector_width_bits == width


_BUILD_WITH_BAD_TARGETS = '''
import numpy as np
import mlcbench as tvm
from mlcbench.script import from_source
mod = from_source("""
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = A[i] + T.float32(1)
""")
for target in ["llvm -mcpu=notacpu", "llvm -mcpu=i386", "llvm -mattr=+nonsense"]:
    try:
        tvm.build(mod, target=target)
        print("built", target)
    except tvm.ir.errors.CodegenError as err:
        print("refused", target, type(err).__name__)
a, b = np.arange(8, dtype="float32"), np.zeros(8, "float32")
tvm.build(mod, target="llvm -mcpu=x86-64")["main"](a, b)
print("ran", float(b.sum()))
'''


def test_build_with_a_bad_cpu_raises_and_the_process_lives_on():
    child = subprocess.run([sys.executable, "-c", _BUILD_WITH_BAD_TARGETS],
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.splitlines() == ["refused llvm -mcpu=notacpu TargetError",
                                         "refused llvm -mcpu=i386 TargetError",
                                         "refused llvm -mattr=+nonsense TargetError",
                                         "ran 36.0"]
