"""``tvm.contrib.utils``: a temporary directory for exported libraries.

>>> tmp = tempdir()
>>> path = tmp.relpath("deploy_lib.so")   # a path inside it
"""
from __future__ import annotations

import os
import shutil
import tempfile


class TempDirectory:
    """A directory removed when the object is collected (or on :meth:`remove`)."""

    def __init__(self, custom_path: str | None = None):
        if custom_path is not None:
            os.makedirs(custom_path, exist_ok=True)
            self.temp_dir, self._owned = os.path.abspath(custom_path), False
        else:
            self.temp_dir, self._owned = tempfile.mkdtemp(prefix="mlcbench-"), True

    def relpath(self, name: str) -> str:
        """``name`` inside the directory (an absolute ``name`` stays itself, as in TVM)."""
        return os.path.join(self.temp_dir, name)

    def listdir(self) -> list[str]:
        return os.listdir(self.temp_dir)

    def remove(self) -> None:
        if self._owned and self.temp_dir and os.path.isdir(self.temp_dir):
            shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __del__(self):
        self.remove()

    def __repr__(self) -> str:
        return f"TempDirectory({self.temp_dir!r})"


def tempdir(custom_path: str | None = None) -> TempDirectory:
    """A fresh temporary directory (``custom_path``: use, and keep, that one instead)."""
    return TempDirectory(custom_path)


__all__ = ["TempDirectory", "tempdir"]
