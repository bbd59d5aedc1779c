"""JIT-linked machine code and its lifetime: one ORC engine per compiled library.

Each ``build`` links its object into an ORC JIT of its own, and the engine is released
when the last object referring to it is collected::

    library = jit_link(object_bytes, ["mlc_add_one"], label="add_one")
    address = library.addresses["mlc_add_one"]   # valid while `library` is alive
    del library                                   # code unmapped, engine disposed

Why not one JIT for the whole process: ORC keeps every JITDylib a library was linked
into until the engine itself goes, so a process-wide engine grows by about 9 KB per
build forever (1,000 builds in a notebook or a tuning worker leak 9 MB). An engine of
its own costs about 1 ms to create and gives all of it back.

The rule that keeps this safe: whoever holds a kernel address also holds the
:class:`JITLibrary` (``runtime.Module`` and every ``PackedFunc`` taken from it do), because
a released engine's address silently runs whatever code is mapped there next.
"""
from __future__ import annotations

import itertools
import threading
import weakref

import llvmlite.binding as llvm

from ...ir.errors import CodegenError

_lock = threading.Lock()
_library_ids = itertools.count()
_live = 0


def live_engines() -> int:
    """How many JIT engines this process holds now (each one a :class:`JITLibrary`)."""
    return _live


def _count(delta: int) -> None:
    global _live
    with _lock:
        _live += delta


def _release(tracker, engine) -> None:
    """Unload the library, then dispose of its engine (the tracker refers to the engine,
    so the other order would touch freed memory)."""
    try:
        tracker.close()
        engine.close()
    finally:
        _count(-1)


class JITLibrary:
    """The addresses of the exported symbols of one linked object, and the engine behind them.

    The engine is released when this object is collected (or by :meth:`release`); nothing
    else refers to it.
    """

    def __init__(self, engine, tracker, addresses: dict):
        self.addresses = addresses
        _count(+1)
        self._finalizer = weakref.finalize(self, _release, tracker, engine)
        # At interpreter exit the process goes anyway: unloading code then could only
        # pull it from under a thread still running it.
        self._finalizer.atexit = False

    @property
    def released(self) -> bool:
        return not self._finalizer.alive

    def release(self) -> None:
        """Unload the code now: every address of this library becomes invalid."""
        self._finalizer()

    def __repr__(self) -> str:
        state = "released" if self.released else "live"
        return f"JITLibrary({sorted(self.addresses)}, {state})"


def jit_link(object_bytes: bytes, symbols, label: str = "lib") -> JITLibrary:
    """Link an object into a new JIT engine and look up ``symbols``."""
    from .engine import initialize_llvm
    initialize_llvm()
    symbols = list(symbols)
    builder = llvm.JITLibraryBuilder().add_object_img(object_bytes).add_current_process()
    for symbol in symbols:
        builder.export_symbol(symbol)
    engine = llvm.create_lljit_compiler()
    try:
        tracker = builder.link(engine, f"mlcbench_{label}_{next(_library_ids)}")
    except RuntimeError as err:
        engine.close()
        raise CodegenError(f"linking the compiled code of {label!r} failed (an extern "
                           f"function the process does not provide?): {err}") from None
    return JITLibrary(engine, tracker, {s: tracker[s] for s in symbols})
