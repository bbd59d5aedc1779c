"""Variable scoping: undefined_vars and verify_well_formed."""
import pytest

from mlcbench import tir
from mlcbench.ir import IRError
from mlcbench.tir import (Block, BlockRealize, BufferStore, For, IterVar, LetStmt, PrimFunc,
                          Range, decl_buffer)
from mlcbench.tir.analysis import undefined_vars, verify_well_formed

n = tir.SizeVar("n")
A = decl_buffer((n,), name="A")
a_handle = tir.Var("A_handle", "handle")


def _func(body):
    return PrimFunc((a_handle,), body, {a_handle: A})


def _block_over(i, name="blk"):
    vi = tir.Var("vi")
    block = Block((IterVar(Range(0, n), vi),), (), (), name, BufferStore(A, tir.const(0.0), (vi,)))
    return vi, BlockRealize((i,), tir.const(True), block)


def test_undefined_vars_in_order_of_use():
    x, y, i = tir.Var("x"), tir.Var("y"), tir.Var("i")
    assert undefined_vars(x + y * x) == [x, y]
    loop = For(i, 0, 4, "serial", BufferStore(A, tir.const(1.0), (i + y,)))
    assert undefined_vars(loop) == [y]
    assert undefined_vars(loop, defined=[y]) == []
    let = LetStmt(x, tir.const(3), BufferStore(A, tir.const(1.0), (x,)))
    assert undefined_vars(let) == []


def test_well_formed_function():
    i = tir.Var("i")
    _, realize = _block_over(i)
    assert verify_well_formed(_func(For(i, 0, n, "serial", realize)))


def test_undefined_loop_var_is_reported():
    i, j = tir.Var("i"), tir.Var("j")
    body = For(i, 0, n, "serial", BufferStore(A, tir.const(1.0), (j,)))
    with pytest.raises(IRError, match=r"variable `j` is used in `A\[j\]"):
        verify_well_formed(_func(body))
    assert verify_well_formed(_func(body), assert_mode=False) is False


def test_block_iter_var_used_outside_its_block():
    i = tir.Var("i")
    vi, realize = _block_over(i, "init_A")
    leak = BufferStore(A, tir.const(2.0), (vi,))
    body = For(i, 0, n, "serial", tir.seq(realize, leak))
    with pytest.raises(IRError, match='`vi`.*iteration variable of block "init_A"'):
        verify_well_formed(_func(body))
