import pytest

import mlcbench.runtime as rt
from mlcbench.ir.errors import MLCBenchError


@pytest.fixture
def clean_names():
    names = []
    yield names
    for name in names:
        if rt.get_global_func(name, allow_missing=True) is not None:
            rt.remove_global_func(name)


def test_decorator_with_name(clean_names):
    clean_names.append("test.relu")

    @rt.register_func("test.relu")
    def relu(x):
        return max(x, 0)

    assert rt.get_global_func("test.relu") is relu
    assert relu(-3) == 0  # the decorated name still works
    assert "test.relu" in rt.list_global_func_names()


def test_bare_decorator_uses_function_name(clean_names):
    clean_names.append("test_plain_name")

    @rt.register_func
    def test_plain_name():
        return 5

    assert rt.get_global_func("test_plain_name")() == 5


def test_direct_registration(clean_names):
    clean_names.append("test.direct")
    rt.register_func("test.direct", lambda: "yes")
    assert rt.get_global_func("test.direct")() == "yes"


def test_duplicate_needs_override(clean_names):
    clean_names.append("test.dup")
    rt.register_func("test.dup", lambda: 1)
    with pytest.raises(ValueError, match="already registered.*override=True"):
        rt.register_func("test.dup", lambda: 2)
    assert rt.get_global_func("test.dup")() == 1
    rt.register_func("test.dup", lambda: 3, override=True)
    assert rt.get_global_func("test.dup")() == 3


def test_missing_function():
    assert rt.get_global_func("test.never_registered", allow_missing=True) is None
    with pytest.raises(ValueError, match="test.never_registered"):
        rt.get_global_func("test.never_registered")
    with pytest.raises(MLCBenchError):
        rt.remove_global_func("test.never_registered")


def test_remove(clean_names):
    rt.register_func("test.gone", print)
    rt.remove_global_func("test.gone")
    assert "test.gone" not in rt.list_global_func_names()


def test_names_are_sorted_and_include_builtin_cache_flush():
    names = rt.list_global_func_names()
    assert names == sorted(names)
    assert "cache_flush_cpu_non_first_arg" in names


def test_non_callable_rejected():
    with pytest.raises(TypeError, match="callable"):
        rt.register_func("test.not_callable", 42)
