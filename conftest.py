"""Settings for the whole test run (unit tests and notebooks).

The run writes no state under the user's home: caches that default to
``~/.cache/mlcbench`` (the roofline's measured machine peaks) go to a directory of
this run, removed at its end. Notebook kernels inherit the setting.
"""
import os
import shutil
import tempfile

_CACHE_DIR = tempfile.mkdtemp(prefix="mlcbench-test-cache-")
os.environ["MLCBENCH_CACHE_DIR"] = _CACHE_DIR


def pytest_unconfigure(config):
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)
