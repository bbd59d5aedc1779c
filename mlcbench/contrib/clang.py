"""``tvm.contrib.clang``: C/C++ source to LLVM IR text with the ``clang`` compiler.

Course chapter 8 writes its accelerator's 16x16 matmul in C and links it into a kernel::

    ll_code = clang.create_llvm(cc_code, output=temp.relpath("temp.ll"))
    sch.annotate(i, "pragma_import_llvm", ll_code)

This needs a ``clang`` executable (mlcbench itself uses llvmlite, not a C compiler);
without one, :func:`create_llvm` says so. Any clang whose IR the bundled LLVM reads works.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from ..ir.errors import CodegenError

_NAMES = ("clang",) + tuple(f"clang-{v}" for v in range(20, 10, -1))


def find_clang(required: bool = True) -> list[str]:
    """The ``clang`` executables on PATH, newest name first (as TVM's ``find_clang``)."""
    found = [name for name in _NAMES if shutil.which(name)]
    if required and not found:
        raise CodegenError("clang.create_llvm compiles C/C++ to LLVM IR with clang, and no "
                           f"clang is on PATH (looked for {', '.join(_NAMES[:3])} ...); "
                           "install clang, or write the LLVM IR text yourself")
    return found


def create_llvm(inputs, output: str | None = None, options=None, cc: str | None = None) -> str:
    """LLVM IR text of ``inputs`` (C++ source text, or a list of source files) compiled
    by ``cc`` (default: the first of :func:`find_clang`); also written to ``output``."""
    cc = cc or find_clang()[0]
    with tempfile.TemporaryDirectory(prefix="mlcbench-clang-") as work:
        if isinstance(inputs, str):
            source = os.path.join(work, "input0.cc")
            with open(source, "w") as f:
                f.write(inputs)
            inputs = [source]
        output = output or os.path.join(work, "output.ll")
        cmd = [cc, "-S", "-emit-llvm", "-o", output, *(options or []), *inputs]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as err:
            raise CodegenError(f"clang.create_llvm: cannot run {cc!r}: {err}") from None
        if proc.returncode != 0:
            raise CodegenError(f"clang.create_llvm: {' '.join(cmd)} failed "
                               f"(exit {proc.returncode}):\n{proc.stderr.strip()}")
        with open(output) as f:
            return f.read()
