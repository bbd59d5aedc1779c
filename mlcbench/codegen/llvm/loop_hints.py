"""Loop metadata that keeps LLVM's loop vectorizer off a loop shape it miscompiles.

LLVM 22's loop vectorizer widens a load whose index holds ``f % c`` (``f`` the loop
variable) as if the index were ``f`` itself, once the loop unroller has flattened the
loops inside ``f`` and a reduction loop lies around it: ``B[k, f % 4 * 4 + j]`` is read
as one contiguous ``<32 x float>`` run of ``B`` (a wrong answer, and a read past ``B``'s
end). tests/codegen/test_llvm_pitfalls.py holds a 40-line LLVM IR function that LLVM's
own -O3 pipeline miscompiles this way, for AVX2 and AVX-512 CPUs alike.

A loop whose variable reaches a buffer index through a division or a remainder gets
``llvm.loop.vectorize.enable = false``. Such an index is not contiguous in the loop
variable anyway, so the vectorizer could only gather there; loops that ``vectorize``
made explicit vector code and loops with affine indices are left alone.

Example (what ``emit_loop`` attaches to the latch branch of ``for f``)::

    br label %for_f, !llvm.loop !3
    !3 = !{ !3, !2 }
    !2 = !{ !"llvm.loop.vectorize.enable", i1 false }
"""
from __future__ import annotations

from llvmlite import ir

from ...tir import expr as E
from ...tir.functor import pre_order_visit, uses_var
from ...tir.stmt import BufferStore

_DIVISIONS = (E.FloorDiv, E.FloorMod, E.Div, E.Mod)


def divides_loop_var_in_an_index(loop_var: E.Var, body) -> bool:
    """True when some buffer index below ``body`` divides (or takes a remainder of) an
    expression that uses ``loop_var``."""
    found = []

    def visit(node):
        if found:
            return False
        if isinstance(node, (E.BufferLoad, BufferStore)):
            if any(_divides(index, loop_var) for index in node.indices):
                found.append(node)
                return False
        return None

    pre_order_visit(body, visit)
    return bool(found)


def _divides(index, loop_var: E.Var) -> bool:
    hits = []

    def visit(node):
        if hits:
            return False
        if isinstance(node, _DIVISIONS) and uses_var(node, lambda v: v is loop_var):
            hits.append(node)
            return False
        return None

    pre_order_visit(index, visit)
    return bool(hits)


def vectorizer_off(module: ir.Module) -> ir.MDValue:
    """A fresh loop ID (self-referential, as LLVM requires) that disables the loop
    vectorizer for the one loop whose latch branch carries it."""
    hint = module.add_metadata([ir.MetaDataString(module, "llvm.loop.vectorize.enable"),
                                ir.Constant(ir.IntType(1), 0)])
    # add_metadata would merge equal nodes, and a loop ID must belong to one loop.
    loop_id = ir.MDValue(module, [], name=str(len(module.metadata)))
    loop_id.operands = (loop_id, hint)
    return loop_id
