"""Shared libraries: write a Module to a ``.so`` and load it back in any process.

Exporting links the code generator's position-independent object with the system C
compiler (``$CC``, else ``cc``)::

    cc -shared -fPIC -o lib.so lib.o -lgomp -lm

Loading opens the library with ctypes, reads the JSON under :data:`METADATA_SYMBOL` to
learn each function's calling contract, and resolves the function symbols.

>>> lib.export_library(tmp / "add.so")                      # doctest: +SKIP
>>> load_module(tmp / "add.so")["add"](a, b)                 # doctest: +SKIP
"""
from __future__ import annotations

import ctypes
import os
import shlex
import shutil
import subprocess
import tempfile

from ..ir.errors import RuntimeError_
from .metadata import METADATA_SYMBOL, decode_metadata
from .module import Module


def find_compiler(cc=None) -> list[str]:
    """The C compiler command: ``cc`` if given, else ``$CC``, else ``cc``/``gcc``/``clang``."""
    if cc:
        return shlex.split(cc) if isinstance(cc, str) else list(cc)
    if os.environ.get("CC"):
        return shlex.split(os.environ["CC"])
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return [path]
    raise RuntimeError_("export_library: no C compiler found (looked for $CC, cc, gcc, clang); "
                        "install gcc (apt-get install gcc) or set CC to a compiler")


def link_shared(object_path: str, output_path: str, cc=None, options=None,
                needs_openmp: bool = True) -> None:
    """Link one object file into a shared library, raising with the linker's output."""
    command = find_compiler(cc) + ["-shared", "-fPIC", "-o", output_path, object_path]
    # Kernels call libm (expf, erf) and, with parallel loops, libgomp: link them in.
    command += (["-lgomp"] if needs_openmp else []) + ["-lm"] + list(options or ())
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except FileNotFoundError:
        raise RuntimeError_(f"export_library: compiler {command[0]!r} not found; install gcc "
                            "(apt-get install gcc) or set CC") from None
    if done.returncode != 0:
        raise RuntimeError_(f"export_library: linking failed ({shlex.join(command)}):\n"
                            f"{done.stderr.strip()}")


def export_library(module: Module, file_name, fcompile=None, workspace_dir=None, cc=None,
                   options=None) -> None:
    """Write ``module`` to ``file_name``: a ``.so`` (linked), or the raw object for ``.o``.

    ``fcompile(output, [object_paths])`` replaces the default linker, as in TVM.
    """
    file_name = os.fspath(file_name)
    if file_name.endswith(".tar"):     # the older tutorials' lib.tar: the .so, archived
        from .package import export_tar
        return export_tar(module, file_name)
    if module._artifact is None:
        if module.library_path:  # a loaded library exports as a copy of itself
            shutil.copyfile(module.library_path, file_name)
            return
        raise RuntimeError_("export_library: this module has no compiled object to export")
    obj = module._artifact.emit_object()
    if METADATA_SYMBOL.encode() not in obj:
        raise RuntimeError_(f"export_library: the compiled object lacks the {METADATA_SYMBOL} "
                            "symbol, so the library could not be loaded back")
    if file_name.endswith(".o"):
        with open(file_name, "wb") as handle:
            handle.write(obj)
        return
    with tempfile.TemporaryDirectory(dir=workspace_dir) as tmp:
        object_path = os.path.join(tmp, "lib.o")
        with open(object_path, "wb") as handle:
            handle.write(obj)
        if fcompile is not None:
            fcompile(file_name, [object_path])
        else:
            # A library without parallel loops need not depend on libgomp.
            link_shared(object_path, file_name, cc=cc, options=options,
                        needs_openmp=b"GOMP_" in obj or b"omp_" in obj)


def _read_metadata(library: ctypes.CDLL, path: str) -> bytes:
    """The metadata bytes, stored as a char array (preferred) or as a pointer to one."""
    try:
        cell = ctypes.c_char.in_dll(library, METADATA_SYMBOL)
    except ValueError:
        raise RuntimeError_(f"load_module: {path} has no {METADATA_SYMBOL} symbol; it was not "
                            "written by mlcbench's export_library") from None
    address = ctypes.addressof(cell)
    # The JSON itself starts with {"; anything else is read as a pointer to it.
    if ctypes.string_at(address, 2) == b'{"':
        return ctypes.string_at(address)
    pointer = ctypes.c_void_p.from_address(address).value
    if not pointer:
        raise RuntimeError_(f"load_module: {path}: {METADATA_SYMBOL} is a null pointer")
    return ctypes.string_at(pointer)


def _symbol_address(library: ctypes.CDLL, symbol: str, path: str) -> int:
    try:
        return ctypes.cast(getattr(library, symbol), ctypes.c_void_p).value
    except AttributeError:
        raise RuntimeError_(f"load_module: {path}: its metadata names function {symbol!r}, "
                            "but the library does not define it") from None


def load_module(path) -> Module:
    """Load a shared library written by :meth:`Module.export_library`.

    The returned Module keeps the library loaded while it or any of its functions lives.
    """
    # Absolute, so the Module's library_path stays valid if the working directory changes.
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise RuntimeError_(f"load_module: no such file: {path}")
    if path.endswith(".tar"):
        from .package import load_tar_module
        return load_tar_module(path)
    try:
        library = ctypes.CDLL(path)
    except OSError as err:
        raise RuntimeError_(f"load_module: cannot load {path} as a shared library: {err}") from None
    specs = decode_metadata(_read_metadata(library, path))
    kernels = {spec.name: (spec, _symbol_address(library, spec.symbol, path)) for spec in specs}
    module = Module(kernels, keepalive=library, type_key="library")
    module.library_path = path
    return module
