"""Every operator test of the library, rerun with the default schedule applied.

The operator tests in ``tests/topi`` build through the ``run_te`` fixture; collected
here, they get this directory's ``run_te``, which schedules each function with
``ApplyDefaultSchedule(*default_rules())`` before building. So every operator, over
the shapes (odd ones included) its own test uses, must still match numpy once
scheduled.
"""
import importlib.util
import pathlib

TOPI_TESTS = pathlib.Path(__file__).resolve().parents[1] / "topi"


def _load(path):
    spec = importlib.util.spec_from_file_location(f"scheduled_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


for _path in sorted(TOPI_TESTS.glob("test_*.py")):
    _module = _load(_path)
    for _name in dir(_module):
        if _name.startswith("test_"):
            globals()[f"test_{_path.stem[5:]}__{_name[5:]}"] = getattr(_module, _name)

assert "test_dense__dense_with_bias" in globals(), "the dense operator tests were not found"
