"""Files of JSON lines that several processes append to and anyone may read.

The tuning database and AutoTVM logs keep one record per line. Three rules keep every
record, whatever crashes or runs beside it:

- **A read never changes the file.** A last line without its newline is kept when it
  parses (a record whose newline was cut off, or one another process is writing right
  now, complete); when it does not parse it is skipped with a :class:`DatabaseWarning`
  and left where it is.
- **Appends hold the file's lock** (``flock`` on the file itself) and write each line
  with one ``write`` and an ``fsync``. Two processes never interleave lines, and a
  process can read what others appended before it writes (see
  :class:`LockedJSONLines`).
- **Repair happens on append only.** A last line that does not parse (what a crash in
  the middle of a write leaves) is cut before the next line is written, and the bytes
  cut are saved beside the file as ``<file>.torn-<n>``; a last line that parses but
  lacks its newline gets the newline.

::

    append_json_line("matmul.log", {"input": ...})
    for line_number, row in read_json_lines("matmul.log"):
        ...
"""
from __future__ import annotations

import json
import os
import warnings

from ..ir.errors import TuningError

try:
    import fcntl
except ImportError:                 # not a POSIX system: appends are not locked
    fcntl = None

__all__ = ["DatabaseWarning", "LockedJSONLines", "append_json_line", "read_json_lines",
           "scan_json_lines", "expect_field"]

_TAIL_CHUNK = 1 << 16


class DatabaseWarning(UserWarning):
    """A record file has a partial last line (a write cut off by a crash, or one in
    progress in another process): it was skipped, or set aside on an append."""


def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def expect_field(ok: bool, field: str, expected: str, found) -> None:
    """TuningError ``"<field>: expected <expected>, found <found as JSON>"`` unless ``ok``:
    how record readers name a value of the wrong type."""
    if not ok:
        text = json.dumps(found)
        # Long values are cut: the message is to name the field, not to reprint the record.
        text = text if len(text) <= 80 else text[:77] + "..."
        raise TuningError(f"{field}: expected {expected}, found {text}")


def parse_line(path: str, line_number: int, line: bytes):
    """The JSON value of one line; TuningError naming ``path:line`` when it is not one."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as err:
        raise TuningError(f"{path}:{line_number}: expected UTF-8 text, found the byte "
                          f"0x{line[err.start]:02x} at column {err.start + 1}; the file was "
                          "changed by something other than a tuning run") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise TuningError(f"{path}:{line_number}: expected a JSON value, found "
                          f"{text[:60]!r} ({err.msg} at column {err.colno}); the file was "
                          "changed by something other than a tuning run") from None


def _parses(line: bytes) -> bool:
    try:
        json.loads(line.decode("utf-8"))
    except ValueError:               # UnicodeDecodeError and JSONDecodeError both are
        return False
    return True


def scan_json_lines(path: str, offset: int = 0, first_line: int = 1):
    """``(rows, end_offset, next_line)`` of ``path`` from byte ``offset`` on.

    ``rows`` are ``(line number, value)`` of every non-blank line; ``end_offset`` is
    where the next scan starts (before a partial last line, which is skipped with a
    warning, so a later scan sees it once it is complete). A missing file has no rows.
    """
    try:
        with open(path, "rb") as handle:
            handle.seek(max(offset - 1, 0))
            data = handle.read()
    except FileNotFoundError:
        return [], offset, first_line
    if offset > 0:
        # a last line read before without its newline may have got it since
        before, data = data[:1], data[1:]
        if before != b"\n" and data.startswith(b"\n"):
            data, offset = data[1:], offset + 1
    lines = data.split(b"\n")
    tail = lines.pop()                # b"" when the data ends with a newline
    if tail.strip() and _parses(tail):
        lines.append(tail)            # a whole record whose newline is missing
        tail = b""
    rows = [(first_line + n, parse_line(path, first_line + n, line))
            for n, line in enumerate(lines) if line.strip()]
    if tail.strip():
        warnings.warn(f"{path}:{first_line + len(lines)}: skipped a partial last line of "
                      f"{len(tail)} bytes (a write cut off by a crash, or one in progress); "
                      f"{len(rows)} lines read, the file is left as it is", DatabaseWarning,
                      stacklevel=3)
    return rows, offset + len(data) - len(tail), first_line + len(lines)


def read_json_lines(path: str) -> list[tuple[int, object]]:
    """``(line number, value)`` of every line of ``path`` ([] when it does not exist);
    see :func:`scan_json_lines`. The file is not changed."""
    return scan_json_lines(path)[0]


class LockedJSONLines:
    """``path`` opened for appending, with its lock held and its tail repaired.

    Inside ``with LockedJSONLines(path) as log:`` no other process appends, so what
    :func:`scan_json_lines` finds is final and ``log.append`` goes right after it: the
    tuning database reads the workloads others added before it numbers a new one.
    """

    def __init__(self, path: str):
        self.path = os.fspath(path)
        self._fd = None

    def __enter__(self) -> "LockedJSONLines":
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(self._fd, fcntl.LOCK_EX)
            self._repair_tail()
        except BaseException:
            os.close(self._fd)        # closing releases the lock too
            raise
        return self

    def __exit__(self, *exc) -> None:
        os.close(self._fd)
        self._fd = None

    def append(self, value) -> None:
        """Write ``value`` as one JSON line with a single write, then fsync."""
        # Compact separators: the line, and so the single write, stays as short as possible.
        self._write((json.dumps(value, separators=(",", ":")) + "\n").encode())

    def _write(self, data: bytes) -> None:
        written = os.write(self._fd, data)
        while written < len(data):    # only when the disk is full or a quota reached
            written += os.write(self._fd, data[written:])
        os.fsync(self._fd)

    def _repair_tail(self) -> None:
        size = os.fstat(self._fd).st_size
        tail = self._last_line(size)
        if not tail:
            return
        if _parses(tail):
            self._write(b"\n")
            return
        saved = self._save_aside(tail)
        os.ftruncate(self._fd, size - len(tail))
        os.fsync(self._fd)
        warnings.warn(f"{self.path}: cut a partial last line of {len(tail)} bytes (a write "
                      f"cut off by a crash) before appending; the bytes are kept in {saved}",
                      DatabaseWarning, stacklevel=4)

    def _last_line(self, size: int) -> bytes:
        """The bytes after the last newline (b"" when the file ends with one)."""
        tail, end = b"", size
        while end > 0:
            start = max(0, end - _TAIL_CHUNK)
            chunk = os.pread(self._fd, end - start, start)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                return chunk[cut + 1:] + tail
            tail, end = chunk + tail, start
        return tail

    def _save_aside(self, tail: bytes) -> str:
        for n in range(1, 10000):
            saved = f"{self.path}.torn-{n}"
            try:
                fd = os.open(saved, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
            try:
                os.write(fd, tail)
                os.fsync(fd)
            finally:
                os.close(fd)
            return saved
        raise TuningError(f"{self.path}: cannot set aside a partial last line: "
                          f"{self.path}.torn-1 to -9999 all exist")


def append_json_line(path: str, value) -> None:
    """Append ``value`` to ``path`` as one JSON line (see :class:`LockedJSONLines`)."""
    with LockedJSONLines(path) as log:
        log.append(value)
