"""mlcbench.contrib.clang: C source to LLVM IR text with clang (course chapter 8)."""
import os
import shutil
import stat

import pytest

from mlcbench.contrib import clang
from mlcbench.ir.errors import CodegenError

TMM16 = """extern "C" int tmm16(float *cc, float *aa, float *bb) { cc[0] += aa[0] * bb[0];
  return 0; }"""


def _fake_compiler(folder, body: str) -> str:
    """A ``clang`` stand-in: a shell script recording its arguments and running ``body``."""
    path = folder / "clang"
    path.write_text("#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/args\"\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_without_clang_the_error_says_what_is_needed(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert clang.find_clang(required=False) == []
    with pytest.raises(CodegenError, match="no clang is on PATH"):
        clang.create_llvm(TMM16)


def test_source_text_is_compiled_to_llvm_ir_text(tmp_path):
    cc = _fake_compiler(tmp_path, 'while [ "$1" != "-o" ]; do shift; done\n'
                                  'echo "define i32 @tmm16()" > "$2"\n')
    output = str(tmp_path / "temp.ll")
    text = clang.create_llvm(TMM16, output=output, options=["-O3"], cc=cc)
    assert text == "define i32 @tmm16()\n" == open(output).read()
    args = (tmp_path / "args").read_text().split()
    assert args[:4] == ["-S", "-emit-llvm", "-o", output] and args[4] == "-O3"
    assert args[5].endswith("input0.cc") and not os.path.exists(args[5])   # cleaned up


def test_a_failing_compile_reports_the_command_and_its_messages(tmp_path):
    cc = _fake_compiler(tmp_path, 'echo "input0.cc:1:8: error: expected type" >&2\nexit 1\n')
    with pytest.raises(CodegenError, match="exit 1.*\n.*error: expected type"):
        clang.create_llvm("int f(", cc=cc)
    with pytest.raises(CodegenError, match="cannot run"):
        clang.create_llvm(TMM16, cc=str(tmp_path / "missing-clang"))


@pytest.mark.skipif(not clang.find_clang(required=False), reason="no clang on this host")
def test_real_clang_emits_the_extern_function():
    assert "@tmm16" in clang.create_llvm(TMM16)
