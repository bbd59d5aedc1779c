"""TensorIntrin: a named pair of PrimFuncs -- what a computation does (``desc``) and how
to do it fast (``impl``) -- for ``Schedule.tensorize``.

Both functions take the same buffers, declared with ``T.match_buffer`` in the same
order; ``desc`` holds the loop nest tensorize looks for, ``impl`` what replaces it::

    TensorIntrin.register("my_fma16", fma16_desc, fma16_impl)
    sch.tensorize(loop, "my_fma16")

The intrinsics shipped in :mod:`mlcbench.tir.tensor_intrin.cpu` are registered the
first time an unknown name is looked up.
"""
from __future__ import annotations

from ...ir.errors import ScheduleError


class TensorIntrin:
    """A registered tensor intrinsic (``desc``, ``impl``)."""

    _registry: dict = {}

    def __init__(self, desc, impl):
        self.desc, self.impl = desc, impl

    @staticmethod
    def register(name: str, desc, impl, override: bool = False) -> "TensorIntrin":
        """Register ``desc``/``impl`` under ``name`` (``override=True`` to replace)."""
        _check_pair(name, desc, impl)
        if name in TensorIntrin._registry and not override:
            raise ScheduleError(f"TensorIntrin.register: {name!r} is already registered; "
                                "pass override=True to replace it")
        intrin = TensorIntrin(desc, impl)
        TensorIntrin._registry[name] = intrin
        return intrin

    @staticmethod
    def get(name: str, allow_missing: bool = False):
        """The intrinsic registered as ``name`` (None if missing and ``allow_missing``)."""
        if name not in TensorIntrin._registry:
            from . import cpu  # noqa: F401  (registers the shipped intrinsics)
        intrin = TensorIntrin._registry.get(name)
        if intrin is None and not allow_missing:
            raise ScheduleError(f"TensorIntrin.get: no intrinsic {name!r}; registered: "
                                f"{sorted(TensorIntrin._registry)}")
        return intrin


def _check_pair(name, desc, impl) -> None:
    for role, func in (("desc", desc), ("impl", impl)):
        if not hasattr(func, "buffer_params"):
            raise ScheduleError(f"TensorIntrin.register({name!r}): {role} must be a "
                                f"PrimFunc, found {type(func).__name__}")
    d, i = desc.buffer_params(), impl.buffer_params()
    shapes = lambda ps: [(tuple(str(s) for s in b.shape), str(b.dtype)) for _, b in ps]
    if shapes(d) != shapes(i):
        raise ScheduleError(f"TensorIntrin.register({name!r}): desc and impl must take the "
                            f"same buffers in the same order; desc takes {shapes(d)}, impl "
                            f"takes {shapes(i)}")
