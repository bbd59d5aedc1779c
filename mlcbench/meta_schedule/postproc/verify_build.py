"""VerifyBuild: reject a schedule that does not lower (or, optionally, compile) for the CPU.

Lowering catches what the primitives cannot see alone: a thread-bound loop on a CPU
target, a buffer access lowering cannot flatten, a vector loop of the wrong shape. With
``compile=True`` the lowered functions also go through LLVM (slower: tens of
milliseconds per candidate), which is what the builder would do anyway; the default
stops after lowering so the search can afford it on every candidate.
"""
from __future__ import annotations

from ...ir.errors import MLCBenchError
from .postproc import Postproc


class VerifyBuild(Postproc):
    """True when every PrimFunc of the schedule lowers (and compiles, if asked).

    >>> VerifyBuild().apply(sch)           # doctest: +SKIP
    True
    """

    def __init__(self, compile: bool = False):
        self.compile = compile
        self.last_error: str | None = None

    def apply(self, sch) -> bool:
        from ...tir.build import build_lowered, lower
        self.last_error = None
        try:
            lowered = lower(sch.mod)
            if self.compile:
                build_lowered(lowered, self.target)
        except MLCBenchError as err:
            self.last_error = f"{type(err).__name__}: {err}"
            return False
        return True

    def __repr__(self) -> str:
        return f"VerifyBuild(compile={self.compile})"
