"""``tvm.contrib.util``: the name of :mod:`.utils` before TVM 0.8."""
from .utils import TempDirectory, tempdir

__all__ = ["TempDirectory", "tempdir"]
