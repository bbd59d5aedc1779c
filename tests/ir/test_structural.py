import pytest

from mlcbench import tir
from mlcbench.ir import (IRModule, StructuralMismatch, assert_structural_equal, structural_equal,
                         structural_hash)


def _loop(var_name, buf_name, increment):
    i = tir.Var(var_name)
    buf = tir.decl_buffer((8,), "float32", buf_name)
    store = tir.BufferStore(buf, buf[i] + increment, (i,))
    return tir.For(i, 0, 8, "serial", store)


def test_equal_up_to_renaming_of_binders():
    a, b = _func("i", 1.0), _func("j", 1.0)
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)


def test_free_variables_must_be_identical_unless_mapped():
    a, b = _loop("i", "A", 1.0), _loop("j", "B", 1.0)     # buffers A and B are free here
    assert not structural_equal(a, b)
    with pytest.raises(StructuralMismatch, match="free variables differ: Buffer"):
        assert_structural_equal(a, b)
    assert structural_equal(a, b, map_free_vars=True)
    n, m = tir.Var("n"), tir.Var("m")
    assert structural_equal(n + 1, n + 1) and not structural_equal(n + 1, m + 1)
    assert structural_equal(n + 1, m + 1, map_free_vars=True)


def test_constant_difference_is_reported_with_its_path():
    a, b = _loop("i", "A", 1.0), _loop("i", "A", 2.0)
    assert not structural_equal(a, b, map_free_vars=True)
    with pytest.raises(StructuralMismatch, match=r"For\.body\.value\.b\.value: 1\.0 != 2\.0"):
        assert_structural_equal(a, b, map_free_vars=True)


def test_binders_must_match_one_to_one():
    i, j = tir.Var("i"), tir.Var("j")
    buf = tir.decl_buffer((8, 8), "float32", "A")
    same = tir.BufferStore(buf, 0.0, (i, i))
    different = tir.BufferStore(buf, 0.0, (i, j))
    assert not structural_equal(same, different, map_free_vars=True)
    assert structural_equal(same, tir.BufferStore(buf, 0.0, (j, j)), map_free_vars=True)
    assert not structural_equal(same, tir.BufferStore(buf, 0.0, (j, j)))   # i, j are free


def test_dtype_and_kind_matter():
    i = tir.Var("i")
    assert not structural_equal(tir.const(1, "int32"), tir.const(1, "int64"))
    body = tir.Evaluate(tir.const(0))
    assert not structural_equal(tir.For(i, 0, 4, "serial", body), tir.For(i, 0, 4, "parallel", body))


def test_modules_compare_function_by_function():
    f, g = _func("i", 1.0), _func("j", 1.0)
    assert structural_equal(IRModule({"main": f}), IRModule({"main": g}))
    assert not structural_equal(IRModule({"main": f}), IRModule({"other": g}))
    with pytest.raises(StructuralMismatch, match=r'\["main"\]'):
        assert_structural_equal(IRModule({"main": f}), IRModule({"main": _func("i", 3.0)}))


def _func(var_name, increment):
    loop = _loop(var_name, "A", increment)
    buf = loop.body.buffer
    handle = tir.Var("A", "handle")
    return tir.PrimFunc((handle,), loop, {handle: buf}, {"global_symbol": "main"})


def test_hash_differs_for_different_structure():
    assert structural_hash(_loop("i", "A", 1.0)) != structural_hash(_loop("i", "A", 2.0))



def test_hash_is_the_same_in_every_process():
    # A tuning database stores the hash and looks workloads up by it in a later session,
    # where Python salts str hashes differently.
    import os
    import pathlib
    import subprocess
    import sys
    code = ("from tests.ir.test_structural import _func; from mlcbench.ir import structural_hash;"
            "print(structural_hash(_func('i', 1.0)))")
    root = pathlib.Path(__file__).resolve().parents[2]
    printed = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, cwd=root,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout
               for seed in ("1", "2")}
    assert printed == {f"{structural_hash(_func('i', 1.0))}\n"}


def test_negative_zero_is_not_positive_zero():
    # max(x, -0.0) and max(x, 0.0) differ at x = 0: kernels that share code (and cache
    # entries) by structural equality must keep them apart.
    a, b = _func("i", 0.0), _func("i", -0.0)
    assert not structural_equal(a, b)
    assert structural_hash(a) != structural_hash(b)
    assert structural_equal(_func("i", float("nan")), _func("j", float("nan")))
