"""Target: what machine the code is compiled for, spelled like TVM's target strings.

A target string is a kind followed by options::

    Target("llvm")                                   # the host CPU, all its features
    Target("llvm -mcpu=znver5 --num-cores=2")         # a named CPU, two threads
    Target("llvm -mattr=+avx2,-avx512f")              # host CPU with features toggled
    Target("cuda")                                    # a GPU: the default tag's limits
    Target("nvidia/nvidia-a100")                      # a tagged GPU (see tags.py)
    Target("opencl")                                  # an OpenCL GPU with the default tag's limits

CPU targets flush denormal floats to zero inside compiled kernels (``flush_denormals``;
``Target("llvm -flush-denormals=0")`` keeps IEEE gradual underflow), as TensorFlow's CPU
kernels do: on Intel cores a multiply-add that meets a denormal operand or result takes
a microcode assist, and trained weights hold denormals (461 of 8192 in the digits MLP's
first layer; on an AVX-512 Xeon the MLP at batch 64 took 170 us with them, 15 us
flushed). The caller's floating-point mode is restored when a kernel returns.

Codegen reads ``mcpu``, ``features``, ``vector_width_bits`` and ``num_cores``; the
tuner reads the cache sizes. ``with Target("llvm --num-cores=1"):`` makes a target
the default of :meth:`Target.current` (and of ``build``) inside the block.
A named CPU, ``-mattr`` toggle or triple is checked against LLVM when the Target is
made (``llvm_check``): an unknown or unusable one raises ``TargetError`` instead of
letting LLVM end the process at build time.
"""
from __future__ import annotations

import os
import threading
from functools import lru_cache

from .llvm_check import TargetError, check_cpu_and_features
from .tags import INT_ATTRS, cuda_defaults, is_tag, tag_attrs

KNOWN_KINDS = {"llvm": ("cpu",), "c": ("cpu",), "cuda": ("cuda", "gpu"),
               "nvptx": ("cuda", "gpu"), "opencl": ("opencl", "gpu")}
_CUDA_KINDS = ("cuda", "nvptx")
_LIMITED_KINDS = _CUDA_KINDS + ("opencl",)    # GPU kinds described by a tag's limits
_DEFAULT_CACHE_BYTES = {"l1d": 32 * 1024, "l2": 1024 * 1024}
_BOOL_WORDS = {"1": True, "true": True, "0": False, "false": False}
_INT_OPTIONS = ("num_cores", "max_num_threads", "thread_warp_size", "opt_level")


class TargetKind:
    """The kind part of a target (``target.kind.name == "llvm"``)."""

    def __init__(self, name: str):
        self.name = name

    @property
    def default_keys(self) -> tuple:
        return KNOWN_KINDS[self.name]

    def __repr__(self) -> str:
        return self.name


class Target:
    """A compilation target. See the module docstring for the accepted strings.

    Attributes: ``kind.name``, ``mcpu`` (LLVM CPU name), ``mattr`` (explicit
    ``+feat``/``-feat`` toggles), ``num_cores``, ``features`` (set of enabled
    features), ``vector_width_bits``, ``l1d_cache_bytes``, ``l2_cache_bytes``;
    ``attrs`` (the options, and for a CUDA target the device limits of its tag:
    ``attrs["max_threads_per_block"]``, see :mod:`mlcbench.target.tags`), ``tag``
    (``"nvidia/nvidia-a100"``, or ``""``).
    """

    _local = threading.local()

    def __init__(self, target="llvm", host=None):
        if isinstance(target, Target):
            target = str(target)
        if isinstance(target, dict):
            target = _dict_to_string(target)
        if not isinstance(target, str) or not target.strip():
            raise TargetError(f"expected a target string such as 'llvm', found {target!r}")
        self._text = target.strip()
        kind, options, self.tag = _parse(self._text)
        self.kind = TargetKind(kind)
        self.attrs = options
        self.host = Target(host) if host is not None and not isinstance(host, Target) else host
        self.mcpu = options.get("mcpu") or (host_cpu_name() if self.is_cpu else "")
        self.mtriple = options.get("mtriple", "")
        self.mattr = tuple(a for a in options.get("mattr", "").split(",") if a)
        self.num_cores = int(options.get("num_cores") or (os.cpu_count() or 1))
        if self.num_cores < 1:
            raise TargetError(f"--num-cores must be at least 1, found {self.num_cores}")
        self._flush_denormals = _bool_option(options, "flush_denormals", True, self._text)
        self.features = self._resolve_features()
        self._check_against_llvm()
        self.l1d_cache_bytes, self.l2_cache_bytes = _cache_sizes()

    # -- derived facts -----------------------------------------------------------------
    @property
    def is_cpu(self) -> bool:
        return self.kind.name in ("llvm", "c")

    @property
    def is_gpu(self) -> bool:
        return "gpu" in self.keys

    @property
    def keys(self) -> tuple:
        return self.kind.default_keys

    @property
    def uses_host_cpu(self) -> bool:
        return self.is_cpu and self.mcpu == host_cpu_name()

    def _resolve_features(self) -> frozenset:
        base = set(host_cpu_features()) if self.uses_host_cpu else set(_implied_features(self.mcpu))
        for toggle in self.mattr:
            name = toggle.lstrip("+-")
            (base.discard if toggle.startswith("-") else base.add)(name)
        return frozenset(base)

    def _check_against_llvm(self) -> None:
        """Refuse a CPU or feature LLVM does not know, or cannot compile for, here rather
        than let LLVM end the process at the first build (see llvm_check)."""
        if not self.is_cpu or not (self.attrs.get("mcpu") or self.mattr or self.mtriple):
            return
        import llvmlite.binding as llvm
        triple = self.mtriple or llvm.get_process_triple()
        check_cpu_and_features(triple, self.mcpu, self.mattr, self.llvm_features)

    def has_feature(self, name: str) -> bool:
        return name in self.features

    @property
    def x86_cpu(self) -> bool:
        """True for a CPU target whose triple (the host's by default) is x86: its kernels
        set MXCSR's denormal bits."""
        if not self.is_cpu:
            return False
        import llvmlite.binding as llvm
        return (self.mtriple or llvm.get_process_triple()).startswith(("x86_64", "i686"))

    @property
    def flush_denormals(self) -> bool:
        """True when kernels run with denormals flushed to zero (x86 CPU targets unless
        ``-flush-denormals=0``; see the module docstring)."""
        return self._flush_denormals and self.x86_cpu

    @property
    def vector_width_bits(self) -> int:
        """Widest SIMD register the code may use: 512 (AVX-512), 256 (AVX2) or 128."""
        if "avx512f" in self.features:
            return 512
        if "avx2" in self.features or "avx" in self.features:
            return 256
        return 128

    @property
    def vector_registers(self) -> int:
        """SIMD registers the code may keep values in: 32 with AVX-512, else 16 (x86-64)."""
        return 32 if "avx512f" in self.features else 16

    def vector_lanes(self, dtype_bits: int = 32) -> int:
        """Lanes of one SIMD register for elements of ``dtype_bits`` (16 for float32 on AVX-512)."""
        return max(1, self.vector_width_bits // dtype_bits)

    @property
    def llvm_features(self) -> str:
        """Feature string for LLVM's TargetMachine: host features plus explicit toggles."""
        if self.uses_host_cpu:
            enabled = {f"+{f}" for f in self.features}
            return ",".join(sorted(enabled | set(self.mattr)))
        return ",".join(self.mattr)

    # -- context -----------------------------------------------------------------------
    @classmethod
    def current(cls, allow_none: bool = True) -> "Target | None":
        """The innermost target of ``with Target(...):``; None (or an error) outside."""
        stack = getattr(cls._local, "stack", [])
        if stack:
            return stack[-1]
        if allow_none:
            return None
        raise TargetError("no target is in scope: use `with Target('llvm'):` or pass target=")

    def __enter__(self) -> "Target":
        if not hasattr(Target._local, "stack"):
            Target._local.stack = []
        Target._local.stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        Target._local.stack.pop()

    # -- printing / comparison ---------------------------------------------------------
    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Target({self._text!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Target) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(self._text)

    def export(self) -> dict:
        """The target as a dict (TVM's ``Target.export``)."""
        if self.is_gpu:
            return {"kind": self.kind.name, "tag": self.tag, "keys": list(self.keys),
                    **self.attrs}
        return {"kind": self.kind.name, "mcpu": self.mcpu, "mattr": list(self.mattr),
                "num-cores": self.num_cores, "keys": list(self.keys)}


_AVX512_CPUS = ("znver4", "znver5", "skylake-avx512", "cascadelake", "cooperlake", "icelake",
                 "tigerlake", "rocketlake", "sapphirerapids", "graniterapids", "emeraldrapids",
                 "cannonlake", "knl", "knm", "x86-64-v4")
_AVX2_CPUS = ("haswell", "broadwell", "skylake", "znver1", "znver2", "znver3", "alderlake",
              "raptorlake", "meteorlake", "arrowlake", "lunarlake", "gracemont", "x86-64-v3")


def _implied_features(mcpu: str) -> tuple:
    """The SIMD features a named CPU implies (enough to pick a vector width)."""
    if mcpu.startswith(_AVX512_CPUS):
        return ("avx", "avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl")
    if mcpu.startswith(_AVX2_CPUS):
        return ("avx", "avx2", "fma")
    return ()


def _parse(text: str) -> tuple[str, dict, str]:
    """``"llvm -mcpu=znver5 --num-cores=2"`` -> ``("llvm", {"mcpu": "znver5",
    "num_cores": 2}, "")`` (kind, options, tag); a tag or a CUDA kind starts from the
    tag's (or the default tag's) attributes."""
    words = text.split()
    kind, tag = words[0], ""
    if is_tag(kind):
        tag, kind, options = kind, "cuda", tag_attrs(kind)
    elif kind not in KNOWN_KINDS:
        raise TargetError(f"unknown target kind {kind!r} in {text!r}: expected one of "
                          f"{sorted(KNOWN_KINDS)} or a tag such as 'nvidia/nvidia-a100'")
    else:
        options = cuda_defaults() if kind in _LIMITED_KINDS else {}
    given = _parse_options(words[1:], text)
    options.update(given)
    if kind in _LIMITED_KINDS:
        _check_gpu_options(options, given, text)
    return kind, options, tag


def _check_gpu_options(options: dict, given: dict, text: str) -> None:
    """A CUDA target's limits are positive and its arch is ``sm_XY``; the two names of the
    threads-per-block limit agree (the one given wins)."""
    for name in ("max_threads_per_block", "max_num_threads"):
        if name in given:
            options["max_threads_per_block"] = options["max_num_threads"] = given[name]
    for key, value in given.items():
        if key in INT_ATTRS and value < 1:
            raise TargetError(f"target option -{key} must be at least 1, found {value} "
                              f"in {text!r}")
    arch = str(options.get("arch"))
    if not (arch.startswith("sm_") and arch[3:].isdigit()):
        raise TargetError(f"target option -arch expects a CUDA architecture such as "
                          f"'sm_75', found {arch!r} in {text!r}")


def _parse_options(words: list, text: str) -> dict:
    options: dict = {}
    for word in words:
        if not word.startswith("-"):
            raise TargetError(f"target option {word!r} in {text!r} should look like -key=value")
        key, _, value = word.lstrip("-").partition("=")
        key = key.replace("-", "_")
        if key in _INT_OPTIONS or key in INT_ATTRS:
            try:
                value = int(value)
            except ValueError:
                raise TargetError(f"target option -{key} expects an integer, found {value!r} "
                                  f"in {text!r}") from None
        options[key] = value if value != "" else True
    return options


def _bool_option(options: dict, key: str, default: bool, text: str) -> bool:
    value = str(options.get(key, default)).lower()
    if value not in _BOOL_WORDS:
        raise TargetError(f"target option -{key.replace('_', '-')} expects 0 or 1, found "
                          f"{options[key]!r} in {text!r}")
    return _BOOL_WORDS[value]


def _dict_to_string(config: dict) -> str:
    parts = [str(config.get("kind", "llvm"))]
    for key, value in config.items():
        if key == "kind":
            continue
        value = ",".join(value) if isinstance(value, (list, tuple)) else value
        parts.append(f"-{key.replace('_', '-')}={value}")
    return " ".join(parts)


@lru_cache(maxsize=None)
def host_cpu_name() -> str:
    """LLVM's name of the CPU we run on (``"znver4"``, ``"skylake-avx512"``...)."""
    import llvmlite.binding as llvm
    return llvm.get_host_cpu_name()


def host_cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else LLVM's name of the host CPU."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return host_cpu_name()


@lru_cache(maxsize=None)
def host_cpu_features() -> frozenset:
    """The features LLVM reports enabled on the host (``{"avx2", "avx512f", "fma", ...}``)."""
    import llvmlite.binding as llvm
    return frozenset(name for name, on in llvm.get_host_cpu_features().items() if on)


@lru_cache(maxsize=None)
def _cache_sizes() -> tuple[int, int]:
    """(L1 data, L2) cache bytes of cpu0 from sysfs; common defaults where unreadable."""
    sizes = dict(_DEFAULT_CACHE_BYTES)
    root = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for index in sorted(os.listdir(root)):
            if not index.startswith("index"):
                continue
            level = _read(f"{root}/{index}/level")
            kind = _read(f"{root}/{index}/type")
            size = _parse_size(_read(f"{root}/{index}/size"))
            if level == "1" and kind == "Data" and size:
                sizes["l1d"] = size
            elif level == "2" and size:
                sizes["l2"] = size
    except OSError:
        pass
    return sizes["l1d"], sizes["l2"]


def _read(path: str) -> str:
    with open(path) as f:
        return f.read().strip()


def _parse_size(text: str) -> int:
    """``"32K"`` -> 32768; ``"1024K"`` -> 1048576; ``""`` -> 0."""
    units = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    if not text:
        return 0
    if text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)
