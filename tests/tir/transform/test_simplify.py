"""The Simplify pass and statement simplification."""
import mlcbench as tvm
from mlcbench import tir
from mlcbench.arith import Analyzer
from mlcbench.ir import assert_structural_equal
from mlcbench.tir import BufferStore, For, IfThenElse, LetStmt, PrimFunc, decl_buffer
from mlcbench.tir.transform import Simplify

A = decl_buffer((64,), name="A")
handle = tir.Var("A_handle", "handle")


def _func(body):
    return PrimFunc((handle,), body, {handle: A}, {"global_symbol": "main"})


def _loops(i, j, body):
    return For(i, 0, 16, "serial", For(j, 0, 4, "serial", body))


def test_loop_ranges_simplify_indices():
    i, j = tir.Var("i"), tir.Var("j")
    before = _loops(i, j, BufferStore(A, tir.const(1.0), ((i * 4 + j) // 4 * 4 + (i * 4 + j) % 4,)))
    after = _loops(i, j, BufferStore(A, tir.const(1.0), (i * 4 + j,)))
    mod = Simplify()(tvm.IRModule({"main": _func(before)}))
    assert_structural_equal(mod["main"].body, after)


def test_provable_branches_are_removed_and_others_kept():
    i, j = tir.Var("i"), tir.Var("j")
    store = BufferStore(A, tir.const(1.0), (i * 4 + j,))
    other = BufferStore(A, tir.const(2.0), (i,))
    body = IfThenElse(i * 4 + j < 64, store, other)
    assert_structural_equal(Analyzer().simplify(_loops(i, j, body)), _loops(i, j, store))
    kept = IfThenElse(i < 8, IfThenElse(i < 10, store), other)
    assert_structural_equal(Analyzer().simplify(_loops(i, j, kept)),
                            _loops(i, j, IfThenElse(i < 8, store, other)))


def test_else_branch_knows_the_negated_condition():
    i, j = tir.Var("i"), tir.Var("j")
    store = BufferStore(A, tir.const(1.0), (i,))
    body = IfThenElse(i < 8, store, IfThenElse(i >= 8, store))
    assert_structural_equal(Analyzer().simplify(_loops(i, j, body)),
                            _loops(i, j, IfThenElse(i < 8, store, store)))


def test_let_of_constant_is_folded():
    x = tir.Var("x")
    body = LetStmt(x, tir.const(3), BufferStore(A, tir.const(1.0), (x * 2,)))
    assert_structural_equal(Analyzer().simplify(body), BufferStore(A, tir.const(1.0), (6,)))


def test_unit_loops_stay_unless_asked():
    i, j = tir.Var("i"), tir.Var("j")
    loop = For(i, 0, 1, "serial", BufferStore(A, tir.const(1.0), (i + 2,)))
    assert Analyzer().simplify(loop) is loop
    assert_structural_equal(Analyzer().simplify(loop, remove_unit_loops=True),
                            BufferStore(A, tir.const(1.0), (2,)))
    mod = Simplify(remove_unit_loops=True)(tvm.IRModule({"main": _func(loop)}))
    assert_structural_equal(mod["main"].body, BufferStore(A, tir.const(1.0), (2,)))


def test_unchanged_function_is_returned_as_is():
    i = tir.Var("i")
    func = _func(For(i, 0, 64, "serial", BufferStore(A, tir.const(1.0), (i,))))
    mod = tvm.IRModule({"main": func})
    assert Simplify()(mod)["main"] is func
    assert Simplify().info.name == "tir.Simplify" and Simplify().info.opt_level == 0


def test_block_iter_vars_are_bound_to_their_domains():
    from mlcbench.tir import Block, BlockRealize, IterVar, Range
    i, vi = tir.Var("i"), tir.Var("vi")
    block = Block((IterVar(Range(0, 64), vi),), (), (), "b",
                  BufferStore(A, tir.const(1.0), (tir.min(vi, 63),)))
    realize = BlockRealize((i,), i < 64, block)
    after = Analyzer().simplify(For(i, 0, 64, "serial", realize))
    assert str(after.body.block.body.indices[0]) == "vi"
    assert after.body.predicate.value is True or after.body.predicate.value == 1
