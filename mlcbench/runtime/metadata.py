"""The calling contract between code generation and the runtime.

Code generation describes each compiled function with a :class:`KernelSpec`; the runtime
checks arguments against it and calls the machine code with this C ABI::

    int32_t symbol(void *buf_or_scalar_0, ..., int64_t shape_var_0, ...)

Buffers are passed as a pointer to their first element, scalars by value with the C type
of their dtype (int32 -> int32_t, float32 -> float, ...), then every symbolic dimension
listed in ``KernelSpec.shape_vars`` as an int64, in that order. 0 means success.

The specs travel inside exported shared libraries as JSON under :data:`METADATA_SYMBOL`:

>>> spec = KernelSpec("add", "add", (ParamSpec("A", "buffer", "float32", ("n",)),), ("n",))
>>> decode_metadata(encode_metadata([spec])) == [spec]
True
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from ..ir.dtype import dtype as as_dtype
from ..ir.errors import RuntimeError_
from .access_checks import AccessCheck

METADATA_SYMBOL = "__mlcbench_metadata"
"""Global symbol holding the NUL-terminated JSON metadata in an exported ``.so``.

It is either a constant byte array (``@__mlcbench_metadata = constant [N x i8] c"{...}\\00"``,
preferred) or a pointer to such an array; :func:`~mlcbench.runtime.load_module` reads both.
"""

METADATA_VERSION = 1


@dataclass(frozen=True)
class ParamSpec:
    """One PrimFunc parameter: a buffer (passed by pointer) or a scalar (passed by value).

    ``shape`` holds ints and the names of symbolic dimensions, e.g. ``("n", 128)``;
    scalars have shape ``()``.
    """

    name: str
    kind: str
    dtype: str
    shape: tuple = ()

    def __post_init__(self):
        if self.kind not in ("buffer", "scalar"):
            raise RuntimeError_(f"ParamSpec {self.name!r}: kind must be 'buffer' or 'scalar', "
                                f"found {self.kind!r}")
        object.__setattr__(self, "dtype", str(as_dtype(self.dtype)))
        shape = tuple(d if isinstance(d, str) else int(d) for d in self.shape)
        if self.kind == "scalar" and shape:
            raise RuntimeError_(f"ParamSpec {self.name!r}: a scalar has shape (), found {shape}")
        object.__setattr__(self, "shape", shape)


@dataclass(frozen=True)
class KernelSpec:
    """A compiled function: user-facing ``name``, C ``symbol``, parameters, symbolic dims,
    and the index ranges to check against scalar arguments before each call
    (:mod:`~mlcbench.runtime.access_checks`)."""

    name: str
    symbol: str
    params: tuple
    shape_vars: tuple = ()
    access_checks: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "params", tuple(self.params))
        object.__setattr__(self, "shape_vars", tuple(str(v) for v in self.shape_vars))
        object.__setattr__(self, "access_checks", tuple(self.access_checks))
        for param in self.params:
            if not isinstance(param, ParamSpec):
                raise RuntimeError_(f"KernelSpec {self.name!r}: params must be ParamSpec, "
                                    f"found {type(param).__name__}")
        buffers = {p.name for p in self.params if p.kind == "buffer"}
        for check in self.access_checks:
            if not isinstance(check, AccessCheck) or check.buffer not in buffers:
                raise RuntimeError_(f"KernelSpec {self.name!r}: access check {check!r} must "
                                    f"be an AccessCheck of one of the buffers {sorted(buffers)}")


def _spec_to_json(spec: KernelSpec) -> dict:
    params = [{"name": p.name, "kind": p.kind, "dtype": p.dtype, "shape": list(p.shape)}
              for p in spec.params]
    entry = {"name": spec.name, "symbol": spec.symbol, "params": params,
             "shape_vars": list(spec.shape_vars)}
    if spec.access_checks:
        entry["access_checks"] = [check.to_json() for check in spec.access_checks]
    return entry


def _spec_from_json(entry: dict) -> KernelSpec:
    params = tuple(ParamSpec(p["name"], p["kind"], p["dtype"], tuple(p["shape"]))
                   for p in entry["params"])
    checks = tuple(AccessCheck.from_json(c) for c in entry.get("access_checks", ()))
    return KernelSpec(entry["name"], entry["symbol"], params, tuple(entry.get("shape_vars", ())),
                      checks)


def encode_metadata(specs) -> bytes:
    """UTF-8 JSON describing ``specs``, ending in one NUL byte: ready to embed as-is.

    The text always starts with ``{"``, which is how the loader tells an embedded array
    from a pointer to one.
    """
    doc = {"mlcbench_metadata": METADATA_VERSION, "kernels": [_spec_to_json(s) for s in specs]}
    return json.dumps(doc, separators=(",", ":")).encode("utf-8") + b"\0"


def decode_metadata(data: bytes) -> list[KernelSpec]:
    """Inverse of :func:`encode_metadata` (trailing NULs are ignored)."""
    # The text up to the first NUL: exported objects embed it NUL-terminated.
    text = bytes(data).split(b"\0", 1)[0]
    preview = text[:60].decode("utf-8", "replace")
    try:
        doc = json.loads(text.decode("utf-8"))
        # Another version's layout is refused, not guessed at.
        version = doc.get("mlcbench_metadata")
        specs = [_spec_from_json(entry) for entry in doc["kernels"]] \
            if version == METADATA_VERSION else None
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise RuntimeError_(f"malformed mlcbench metadata ({err}): starts with {preview!r}") from None
    if specs is None:
        raise RuntimeError_(f"malformed mlcbench metadata (version {version!r}, expected "
                            f"{METADATA_VERSION}): starts with {preview!r}")
    return specs
