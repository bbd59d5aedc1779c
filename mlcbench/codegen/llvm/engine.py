"""From llvmlite IR to running machine code: optimize, emit a PIC object, JIT-link it.

One object file serves both uses: the JIT links it into the process (ORC), and
``export_library`` links the very same bytes into a ``.so``. ORC does not optimize,
so the new pass manager runs first at ``-O3`` with loop and SLP vectorization.
ORC also reports unresolved symbols as errors at link time (MCJIT would crash at
call time instead).
"""
from __future__ import annotations

import ctypes
import threading
from functools import lru_cache

import llvmlite.binding as llvm
from llvmlite.binding import ffi

from ...ir.errors import CodegenError
from .jit import JITLibrary, jit_link  # noqa: F401  (linking lives in jit.py)

_lock = threading.Lock()


@lru_cache(maxsize=None)
def initialize_llvm() -> None:
    """Native target, assembly printer and parser (``llvm.initialize()`` raises in llvmlite 0.50)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()


@lru_cache(maxsize=None)
def target_machine(cpu: str, features: str, triple: str = "") -> llvm.TargetMachine:
    """A PIC, -O3 TargetMachine for ``cpu`` with ``features`` (cached: creating one costs ms)."""
    initialize_llvm()
    triple = triple or llvm.get_process_triple()
    try:
        machine_target = llvm.Target.from_triple(triple)
    except RuntimeError as err:
        raise CodegenError(f"LLVM cannot generate code for triple {triple!r}: {err}") from None
    try:
        return machine_target.create_target_machine(cpu=cpu, features=features, opt=3,
                                                    reloc="pic", codemodel="default")
    except RuntimeError as err:
        raise CodegenError(f"LLVM cannot create a target machine for -mcpu={cpu} "
                           f"-mattr={features} on {triple!r}: {err}") from None


def machine_for(target) -> llvm.TargetMachine:
    return target_machine(target.mcpu, target.llvm_features, getattr(target, "mtriple", ""))


def optimize(module: llvm.ModuleRef, machine: llvm.TargetMachine,
             slp_vectorization: bool = True) -> None:
    """Run LLVM's -O3 pipeline with loop/SLP vectorization and unrolling.

    Loop interleaving stays off: LLVM 22's loop vectorizer, when it interleaves a loop
    whose index uses ``f % c`` under a loop-invariant ``if`` (what LowerInitBlock makes
    of a reduction around a fused spatial loop), reads ``B[f % 16]`` as if it were
    ``B[f]`` across the interleaved copies and computes wrong results
    (tests/codegen/test_llvm_pitfalls.py). Explicitly vectorized kernels do not rely
    on interleaving: the measured register-tiled matmul is unchanged without it.
    """
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True
    options.slp_vectorization = slp_vectorization
    options.loop_unrolling = True
    options.loop_interleaving = False
    builder = llvm.create_pass_builder(machine, options)
    passes = builder.getModulePassManager()
    try:
        passes.run(module, builder)
    finally:
        _dispose_module_passes(passes)


def _dispose_module_passes(passes) -> None:
    """Free a pass pipeline: llvmlite 0.50's ``ModulePassManager`` never does (its
    ``_dispose`` resolves to the no-op of ``ObjectRef``, first in its bases), which
    leaked the whole -O3 pipeline and what its passes kept, about 75 KB per build."""
    if not passes.closed:
        ffi.lib.LLVMPY_DisposeNewModulePassManger(passes)
        passes.detach()


class LLVMArtifact:
    """The compiled form of one LLVM module: optimized IR, assembly and a PIC object.

    ``get_source("ll")`` shows the optimized IR, ``get_source("asm")`` the assembly,
    ``emit_object()`` the ELF object bytes that ``export_library`` links into a ``.so``.
    """

    type_key = "llvm"

    def __init__(self, module: llvm.ModuleRef, machine: llvm.TargetMachine, unoptimized_ir: str,
                 pipeline: str = "O3"):
        self._module, self._machine = module, machine
        self.pipeline = pipeline
        self._unoptimized_ir = unoptimized_ir
        self._object: bytes | None = None
        self._asm: str | None = None

    def external_functions(self) -> list[str]:
        """Functions the code calls but does not define (libm, libgomp, call_extern targets)."""
        return [f.name for f in self._module.functions
                if f.is_declaration and not f.name.startswith("llvm.")]

    def emit_object(self) -> bytes:
        if self._object is None:
            with _lock:
                self._object = _emitting("an object file", self._machine.emit_object,
                                         self._module)
        return self._object

    def get_source(self, fmt: str = "ll") -> str:
        if fmt in ("ll", "llvm", ""):
            return str(self._module)
        if fmt in ("ll-unoptimized", "tir-ll"):
            return self._unoptimized_ir
        if fmt in ("asm", "s"):
            if self._asm is None:
                with _lock:
                    self._asm = _emitting("assembly", self._machine.emit_assembly,
                                          self._module)
            return self._asm
        raise CodegenError(f"get_source: unknown format {fmt!r}; expected 'll' or 'asm'")


def _emitting(what: str, emit, module):
    """LLVM's emitters report some failures as RuntimeError: make them CodegenErrors."""
    try:
        return emit(module)
    except RuntimeError as err:
        raise CodegenError(f"LLVM failed to emit {what} for {module.name!r}: {err}") from None


def compile_ir(ir_text: str, target, name: str = "module",
               imports: tuple = ()) -> LLVMArtifact:
    """Parse, verify and optimize textual LLVM IR for ``target``; ``imports`` are more
    LLVM IR texts (a loop's ``pragma_import_llvm``) linked into the same module.

    The optimized module is verified before instruction selection: LLVM 22's SLP
    vectorizer can leave a shuffle that does not dominate its use (an unscheduled 4x5x9
    matmul with an epilogue, tests/codegen/test_llvm_pitfalls.py), and instruction
    selection would then end the process. Such a module is optimized again from the
    same IR without SLP vectorization; ``artifact.pipeline`` says which pipeline ran.
    """
    machine = machine_for(target)
    module = _parse_module(ir_text, name, imports)
    optimize(module, machine)
    pipeline = "O3"
    if not _verifies(module):
        # From the IR text again: the failed pipeline has already rewritten the module.
        module = _parse_module(ir_text, name, imports)
        optimize(module, machine, slp_vectorization=False)
        pipeline = "O3 without SLP vectorization (the full pipeline produced invalid IR)"
        if not _verifies(module):
            raise CodegenError(f"LLVM's optimizer produced invalid IR for {name!r}, with "
                               "and without SLP vectorization")
    return LLVMArtifact(module, machine, ir_text, pipeline)


def _parse_module(ir_text: str, name: str, imports: tuple) -> llvm.ModuleRef:
    """The verified module of ``ir_text`` with the ``imports`` linked in."""
    try:
        module = llvm.parse_assembly(ir_text)
        module.name = name
        module.verify()
    except RuntimeError as err:
        raise CodegenError(f"LLVM rejected the IR generated for {name!r}: {err}") from None
    for number, text in enumerate(imports):
        try:
            imported = llvm.parse_assembly(text)
            imported.verify()
            module.link_in(imported)
        except RuntimeError as err:
            raise CodegenError(f"{name}: the LLVM IR of pragma_import_llvm #{number + 1} "
                               f"cannot be parsed or linked (LLVM {llvm.llvm_version_info[0]} "
                               f"expects opaque `ptr` pointers): {err}") from None
    return module


def _verifies(module: llvm.ModuleRef) -> bool:
    try:
        module.verify()
    except RuntimeError:
        return False
    return True


@lru_cache(maxsize=None)
def _process_namespace() -> ctypes.CDLL:
    # The process's own symbols (libc, libm), as dlopen(NULL) sees them.
    return ctypes.CDLL(None)


def _process_defines(name: str) -> bool:
    """True when the JIT can resolve ``name``: a global of the process (libc, libm) or of
    a library loaded with ``load_library_permanently`` (libgomp)."""
    if llvm.address_of_symbol(name):
        return True
    return hasattr(_process_namespace(), name)


def check_externals_resolve(artifact: LLVMArtifact, label: str) -> None:
    """Name the extern functions the process cannot provide (ORC's own message does not)."""
    missing = [name for name in artifact.external_functions() if not _process_defines(name)]
    if missing:
        raise CodegenError(f"{label}: the generated code calls {missing}, which no library "
                           "loaded in this process defines (a misspelled T.call_extern name?)")
