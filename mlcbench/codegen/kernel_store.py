"""The files of the kernel cache: one entry per key, checked on load, bounded in size.

An entry is one file ``<key>.mlck`` in the cache directory::

    mlcbench-kernels 1 <sha256 of the body> <length of the JSON> <length of the object>\\n
    <JSON: kernel metadata, symbols, extern functions, the key's material>
    <the ELF object, as LLVM emitted it>

Nothing is unpickled: a damaged or foreign file can only fail the checks, and then it
is ignored like a missing entry (the next build replaces it). Writers write a
temporary file beside the entry and ``os.replace`` it into place, so a reader sees the
old entry or the new one, never half of one, and two processes storing the same key
both succeed (the last rename wins; both wrote the same bytes).

The directory is bounded: after each store, the least recently used entries (a hit
refreshes an entry's modification time) go until the total is under
``MLCBENCH_KERNEL_CACHE_MB`` (default 1024) megabytes.
"""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import tempfile
import time

MAGIC = b"mlcbench-kernels"
FORMAT = 1
SUFFIX = ".mlck"
# A model's entry may take a quarter of the bound (``relax.model_cache``): ResNet-50
# from the onnx wheel, whose Winograd layers hold their weights transformed (4x the
# weight), takes about 150 MB.
DEFAULT_LIMIT_MB = 1024
# A temporary file this old belongs to a writer that died before renaming it.
_STALE_TEMP_SECONDS = 3600


def cache_root() -> pathlib.Path:
    """``$MLCBENCH_CACHE_DIR/kernels``, else ``~/.cache/mlcbench/kernels``."""
    base = os.environ.get("MLCBENCH_CACHE_DIR") or pathlib.Path.home() / ".cache" / "mlcbench"
    return pathlib.Path(base) / "kernels"


def limit_bytes() -> int:
    """The size bound of the directory (``MLCBENCH_KERNEL_CACHE_MB``, default 1024)."""
    text = os.environ.get("MLCBENCH_KERNEL_CACHE_MB", "")
    try:
        megabytes = float(text) if text else DEFAULT_LIMIT_MB
    except ValueError:
        megabytes = DEFAULT_LIMIT_MB
    return int(max(megabytes, 0) * 1024 * 1024)


def entry_path(key: str) -> pathlib.Path:
    return cache_root() / (key + SUFFIX)


def encode_entry(meta: dict, obj: bytes) -> bytes:
    """The bytes of one entry file (see the module docstring)."""
    return b"".join(_entry_parts(meta, [obj]))


def _entry_parts(meta: dict, parts: list) -> list:
    """The pieces of an entry whose binary half is ``parts`` one after the other
    (written piece by piece: a model's constants are not copied into one buffer)."""
    body_meta = json.dumps(meta, sort_keys=True, separators=(",", ":")).encode("utf-8")
    digest = hashlib.sha256(body_meta)
    for part in parts:
        digest.update(part)
    size = sum(len(part) for part in parts)
    header = f"{MAGIC.decode()} {FORMAT} {digest.hexdigest()} {len(body_meta)} {size}\n"
    return [header.encode(), body_meta, *parts]


def decode_entry(data: bytes) -> tuple[dict, bytes] | None:
    """``(meta, object)`` of an entry's bytes, or None if they are not a whole, intact entry."""
    header, newline, body = data.partition(b"\n")
    fields = header.split(b" ")
    if not newline or len(fields) != 5 or fields[0] != MAGIC or fields[1] != str(FORMAT).encode():
        return None
    try:
        meta_len, obj_len = int(fields[3]), int(fields[4])
    except ValueError:
        return None
    # A truncated or damaged file fails here, before its digest is computed.
    if meta_len < 0 or obj_len < 0 or len(body) != meta_len + obj_len:
        return None
    if hashlib.sha256(body).hexdigest().encode() != fields[2]:
        return None
    try:
        meta = json.loads(body[:meta_len].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return (meta, body[meta_len:]) if isinstance(meta, dict) else None


def load(key: str) -> tuple[dict, bytes] | None:
    """The entry stored under ``key``, or None when it is absent or damaged."""
    path = entry_path(key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    entry = decode_entry(data)
    if entry is not None:
        try:    # a hit makes the entry the most recently used
            os.utime(path)
        except OSError:
            pass
    return entry


def store(key: str, meta: dict, obj: bytes | list) -> bool:
    """Write the entry for ``key`` atomically; False (and nothing left behind) if the
    directory cannot be written (a read-only home, a full disk). ``obj`` is the binary
    half, or a list of byte strings that make it up, in order."""
    root = cache_root()
    temp_name = None
    try:
        root.mkdir(parents=True, exist_ok=True)
        # In the same directory, so os.replace is a rename within one file system (atomic).
        handle, temp_name = tempfile.mkstemp(prefix=key[:16] + ".", suffix=".tmp", dir=root)
        with os.fdopen(handle, "wb") as out:
            out.writelines(_entry_parts(meta, obj if isinstance(obj, list) else [obj]))
        os.replace(temp_name, entry_path(key))
    except OSError:
        if temp_name is not None:
            _remove(pathlib.Path(temp_name))
        return False
    evict(limit_bytes())
    return True


def entries() -> list[tuple[pathlib.Path, int, float]]:
    """``(path, size, mtime)`` of every entry, oldest first."""
    found = []
    try:
        with os.scandir(cache_root()) as scan:
            for item in scan:
                try:
                    stat = item.stat()
                except OSError:     # removed meanwhile by another process
                    continue
                found.append((pathlib.Path(item.path), stat.st_size, stat.st_mtime))
    except OSError:
        return []
    return sorted(found, key=lambda entry: entry[2])


def evict(limit: int) -> int:
    """Remove stale temporary files, then the least recently used entries until the
    entries total at most ``limit`` bytes; returns how many files went."""
    removed, kept, now = 0, [], time.time()
    for path, size, mtime in entries():
        if path.suffix == ".tmp":
            if now - mtime > _STALE_TEMP_SECONDS:
                removed += _remove(path)
        elif path.suffix == SUFFIX:
            kept.append((path, size))
    total = sum(size for _, size in kept)
    for path, size in kept:
        # Oldest first (entries() sorts by modification time): least recently used go first.
        if total <= limit:
            break
        removed += _remove(path)
        total -= size
    return removed


def clear() -> int:
    """Remove every entry (and temporary file) of the cache; returns how many went."""
    return sum(_remove(path) for path, _, _ in entries()
               if path.suffix in (SUFFIX, ".tmp"))


def _remove(path: pathlib.Path) -> int:
    try:
        path.unlink()
        return 1
    except OSError:
        return 0
