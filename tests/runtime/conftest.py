"""Real machine code for runtime tests, without the code generator.

Each kernel is a few lines of hand-written LLVM IR that follows the runtime's C ABI;
``jit_module`` compiles them with llvmlite's ORC JIT into a runtime Module whose
artifact can also emit a position-independent object for ``export_library``.
"""
from __future__ import annotations

import itertools

import llvmlite.binding as llvm
import pytest

from mlcbench.codegen.llvm.jit import JITLibrary
from mlcbench.runtime import METADATA_SYMBOL, KernelSpec, Module, ParamSpec, encode_metadata

_names = itertools.count()
_initialized = []


def _init_llvm() -> None:
    if not _initialized:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.initialize_native_asmparser()
        _initialized.append(True)


def llvm_bytes(data: bytes) -> str:
    """``data`` as an LLVM ``c"..."`` string body (every byte escaped unless printable)."""
    return "".join(chr(b) if 32 <= b < 127 and chr(b) not in '"\\' else f"\\{b:02X}"
                   for b in data)


def metadata_global(specs, as_pointer: bool = False) -> str:
    """The metadata as codegen embeds it: a byte array, or a pointer to one."""
    data = encode_metadata(specs)
    array = f'constant [{len(data)} x i8] c"{llvm_bytes(data)}"'
    if not as_pointer:
        return f"@{METADATA_SYMBOL} = {array}\n"
    return (f"@.mlcbench_metadata_text = private {array}\n"
            f"@{METADATA_SYMBOL} = constant ptr @.mlcbench_metadata_text\n")


class IRArtifact:
    """What codegen hands the Module: an object file and the source, from LLVM IR text."""

    def __init__(self, ir_text: str):
        self.ir_text = ir_text

    def _target_machine(self):
        target = llvm.Target.from_default_triple()
        return target.create_target_machine(reloc="pic", codemodel="default")

    def _module(self):
        module = llvm.parse_assembly(self.ir_text)
        module.verify()
        return module

    def emit_object(self) -> bytes:
        return self._target_machine().emit_object(self._module())

    def get_source(self, fmt: str) -> str:
        return self.ir_text if fmt == "ll" else self._target_machine().emit_assembly(self._module())


def jit_module(ir_body: str, specs, with_metadata: bool = True, pointer_metadata: bool = False):
    """Compile ``ir_body`` (function definitions) into a Module exposing ``specs``."""
    _init_llvm()
    ir_text = ir_body + (metadata_global(specs, pointer_metadata) if with_metadata else "")
    lljit = llvm.create_lljit_compiler()
    builder = llvm.JITLibraryBuilder().add_ir(ir_text)
    for spec in specs:
        builder.export_symbol(spec.symbol)
    tracker = builder.link(lljit, f"mlcbench_test_{next(_names)}")
    library = JITLibrary(lljit, tracker, {spec.symbol: tracker[spec.symbol] for spec in specs})
    kernels = {spec.name: (spec, library.addresses[spec.symbol]) for spec in specs}
    return Module(kernels, keepalive=library, artifact=IRArtifact(ir_text))


def buffer(name, shape, dtype="float32"):
    return ParamSpec(name, "buffer", dtype, tuple(shape))


def scalar(name, dtype):
    return ParamSpec(name, "scalar", dtype, ())


# B[i] = A[i] + 1 for 16 floats.
ADD_ONE_IR = """
define i32 @add_one(ptr noalias %A, ptr noalias %B) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %pa = getelementptr float, ptr %A, i64 %i
  %a = load float, ptr %pa
  %b = fadd float %a, 1.0
  %pb = getelementptr float, ptr %B, i64 %i
  store float %b, ptr %pb
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, 16
  br i1 %done, label %exit, label %loop
exit:
  ret i32 0
}
"""

# B[i] = A[i] * s + k for i < n: symbolic length, two scalars.
AXPB_IR = """
define i32 @axpb(ptr noalias %A, ptr noalias %B, float %s, i32 %k, i64 %n) {
entry:
  %kf = sitofp i32 %k to float
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %pa = getelementptr float, ptr %A, i64 %i
  %a = load float, ptr %pa
  %m = fmul float %a, %s
  %b = fadd float %m, %kf
  %pb = getelementptr float, ptr %B, i64 %i
  store float %b, ptr %pb
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i32 0
}
"""

# C[0] += 1: lets tests count how often the runtime called the kernel.
COUNT_IR = """
define i32 @count_calls(ptr %C) {
  %old = load i64, ptr %C
  %new = add i64 %old, 1
  store i64 %new, ptr %C
  ret i32 0
}
"""

# Always reports failure.
FAIL_IR = """
define i32 @always_fail(ptr %A) {
  ret i32 7
}
"""

ADD_ONE_SPEC = KernelSpec("add_one", "add_one", (buffer("A", (16,)), buffer("B", (16,))))
AXPB_SPEC = KernelSpec("axpb", "axpb", (buffer("A", ("n",)), buffer("B", ("n",)),
                                        scalar("s", "float32"), scalar("k", "int32")), ("n",))
COUNT_SPEC = KernelSpec("count_calls", "count_calls", (buffer("C", (1,), "int64"),))
FAIL_SPEC = KernelSpec("always_fail", "always_fail", (buffer("A", (1,)),))
ALL_IR = ADD_ONE_IR + AXPB_IR + COUNT_IR + FAIL_IR
ALL_SPECS = [ADD_ONE_SPEC, AXPB_SPEC, COUNT_SPEC, FAIL_SPEC]


@pytest.fixture(scope="session")
def kernels() -> Module:
    """One JIT module holding add_one, axpb, count_calls and always_fail."""
    return jit_module(ALL_IR, ALL_SPECS)


@pytest.fixture
def make_module():
    """``make_module(with_metadata=True, pointer_metadata=False)`` -> a fresh JIT Module."""
    def make(with_metadata: bool = True, pointer_metadata: bool = False) -> Module:
        return jit_module(ALL_IR, ALL_SPECS, with_metadata, pointer_metadata)
    return make
