"""Variable scoping: which variables an IR fragment uses without defining them.

Definitions are: function parameters and the symbolic vars of their buffers' shapes,
loop variables (inside the loop), ``LetStmt``/``Let`` variables (inside the body),
block iteration variables (inside the block), and the data pointers and shape vars
of buffers allocated in a block or by ``Allocate``/``DeclBuffer``.

``verify_well_formed`` raises :class:`~mlcbench.ir.IRError` naming the first variable
used where it is not defined, and the statement that uses it -- typically a block
iteration variable used outside its block after a faulty transformation.
"""
from __future__ import annotations

from ...ir.errors import IRError
from .. import expr as E
from .. import stmt as S
from ..functor import StmtExprVisitor, post_order_visit


class _ScopeChecker(StmtExprVisitor):
    def __init__(self, defined=()):
        self.defined: dict[int, int] = {}            # id(var) -> number of open definitions
        self.keep: list = []
        self.undefined: list = []
        self.block_vars: dict[int, str] = {}         # iter var -> name of its block
        self.statement = None                        # innermost statement being visited
        self.first_error = None
        for var in defined:
            self._define(var)

    # -- scopes -----------------------------------------------------------------------
    def _define(self, var) -> None:
        self.defined[id(var)] = self.defined.get(id(var), 0) + 1
        self.keep.append(var)

    def _undefine(self, var) -> None:
        self.defined[id(var)] -= 1

    def _define_buffer(self, buffer) -> list:
        """A buffer defined here defines its data pointer; its shape must be defined."""
        for value in tuple(buffer.shape) + tuple(buffer.strides) + (buffer.elem_offset,):
            self.visit(value)
        self._define(buffer.data)
        return [buffer.data]

    def _with(self, variables, visit):
        for var in variables:
            self._define(var)
        try:
            visit()
        finally:
            for var in variables:
                self._undefine(var)

    # -- uses ---------------------------------------------------------------------------
    def visit_Var(self, var):
        if self.defined.get(id(var), 0) > 0:
            return
        if all(u is not var for u in self.undefined):
            self.undefined.append(var)
            if self.first_error is None:
                self.first_error = (var, self.statement)

    def visit_BufferLoad(self, op):
        self.visit(op.indices)

    def visit_BufferStore(self, op):
        self._at(op, lambda: (self.visit(op.value), self.visit(op.indices)))

    def _at(self, stmt, visit):
        saved, self.statement = self.statement, stmt
        try:
            visit()
        finally:
            self.statement = saved

    # -- definitions ---------------------------------------------------------------------
    def visit_For(self, op: S.For):
        self._at(op, lambda: (self.visit(op.min), self.visit(op.extent)))
        self._with([op.loop_var], lambda: self.visit(op.body))

    def visit_LetStmt(self, op: S.LetStmt):
        self._at(op, lambda: self.visit(op.value))
        self._with([op.var], lambda: self.visit(op.body))

    def visit_Let(self, op: E.Let):
        self.visit(op.value)
        self._with([op.var], lambda: self.visit(op.body))

    def visit_BlockRealize(self, op: S.BlockRealize):
        self._at(op, lambda: (self.visit(op.iter_values), self.visit(op.predicate)))
        self.visit(op.block)

    def visit_Block(self, op: S.Block):
        for iv in op.iter_vars:
            self._at(op, lambda iv=iv: self.visit(iv.dom))
            self.block_vars[id(iv.var)] = op.name_hint
        pointers = []
        self._at(op, lambda: [pointers.extend(self._define_buffer(b)) for b in op.alloc_buffers])
        for match in op.match_buffers:
            pointers.extend(self._define_buffer(match.buffer))

        def body():
            self._at(op, lambda: (self.visit(op.reads), self.visit(op.writes),
                                  self.visit([m.source for m in op.match_buffers])))
            if op.init is not None:
                self.visit(op.init)
            self.visit(op.body)
        self._with([iv.var for iv in op.iter_vars], body)
        for pointer in pointers:
            self._undefine(pointer)

    def visit_Allocate(self, op: S.Allocate):
        pointers = []
        self._at(op, lambda: pointers.extend(self._define_buffer(op.buffer)))
        self.visit(op.body)
        for pointer in pointers:
            self._undefine(pointer)

    visit_DeclBuffer = visit_Allocate


def undefined_vars(node, defined=()) -> list:
    """Variables used in ``node`` (expression or statement) but not defined inside it,
    in order of first use; ``defined`` lists variables known from the context."""
    checker = _ScopeChecker(defined)
    checker.visit(node)
    return checker.undefined


def _func_definitions(func) -> list:
    defined = list(func.params)
    for buffer in func.buffer_map.values():
        defined.append(buffer.data)
        for value in tuple(buffer.shape) + tuple(buffer.strides) + (buffer.elem_offset,):
            if isinstance(value, E.Var):
                defined.append(value)
    return defined


def verify_well_formed(func, assert_mode: bool = True) -> bool:
    """Check that every variable of ``func`` is used only where it is defined.

    Returns True when well formed; otherwise raises ``IRError`` (or returns False when
    ``assert_mode`` is off).
    """
    checker = _ScopeChecker(_func_definitions(func))
    _note_block_vars(func.body, checker.block_vars)
    checker.visit(func.body)
    if checker.first_error is None:
        return True
    if not assert_mode:
        return False
    var, stmt = checker.first_error
    block = checker.block_vars.get(id(var))
    hint = (f"; it is an iteration variable of block \"{block}\" and is visible only inside "
            "that block") if block else ""
    where = _describe(stmt)
    raise IRError(f"variable `{var.name}` is used in {where} but is not defined there{hint}")


def _note_block_vars(body, table: dict) -> None:

    def note(node):
        if isinstance(node, S.Block):
            for iv in node.iter_vars:
                table[id(iv.var)] = node.name_hint
    post_order_visit(body, note)


def _describe(stmt) -> str:
    if stmt is None:
        return "the function"
    if isinstance(stmt, S.Block):
        return f"block \"{stmt.name_hint}\""
    try:
        text = stmt.script().strip().splitlines()[0]
    except Exception:                       # the printer must not hide the real error
        text = type(stmt).__name__
    return f"`{text[:80]}`"
