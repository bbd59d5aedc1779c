"""ThreadSync: barriers where the threads of a block exchange data through shared memory.

The threads of a block run the kernel body side by side, and nothing orders one
thread's store to shared memory before another thread's load of it but a barrier,
``T.tvm_storage_sync("shared")`` (CUDA's ``__syncthreads()``). This pass inserts one
(the idea of TVM's ``ThreadSync``):

* **read after write**: before a statement that reads a shared buffer written by an
  earlier statement since the last barrier;
* **write after read**: before a statement that writes a shared buffer read since the
  last barrier, and at the end of a loop body (before the back edge) when a later
  iteration's writes could overwrite what this iteration read, or read what it wrote.

It is conservative: accesses are compared by buffer, not by element (``A_shared[tx]``
written then read by the same thread still gets a barrier), a compound statement (a
loop, an ``if``) is summarised by all the accesses inside it, so a barrier it needs
because of earlier statements goes *before* it, not into its body (once per loop, not
once per iteration), and two writes are not ordered (threads of a cooperative fetch
write different elements). Barriers never go under a condition that depends on a
thread index (``if tx < 130``, a loop whose bounds use ``tx``): threads that skip the
branch would never reach it and the block would hang. When the data flow inside such
a branch needs one, lowering stops with an error naming the branch and the buffer.

Runs on the device kernels of ``lower_gpu`` (after SplitHostDevice).
"""
from __future__ import annotations

from ...ir.errors import CodegenError
from ...ir.transform import prim_func_pass
from ..expr import BufferLoad, Call, Var
from ..functor import post_order_visit
from ..stmt import Allocate, BufferStore, DeclBuffer, Evaluate, For, IfThenElse, LetStmt, seq
from ._common import const_int
from .thread_nest import describe, thread_tag

SYNC_OP = "tir.tvm_storage_sync"


def storage_sync() -> Evaluate:
    """``T.tvm_storage_sync("shared")``."""
    from ..op import tvm_storage_sync
    return Evaluate(tvm_storage_sync("shared"))


def is_sync(stmt) -> bool:
    return (isinstance(stmt, Evaluate) and isinstance(stmt.value, Call)
            and stmt.value.op == SYNC_OP)


class _State:
    """Shared buffers (data Vars) read and written since the last barrier."""

    def __init__(self, reads=(), writes=()):
        self.reads, self.writes = set(reads), set(writes)

    def copy(self):
        return _State(self.reads, self.writes)

    def add(self, other):
        self.reads |= other.reads
        self.writes |= other.writes

    def conflicts(self, later) -> set:
        """Buffers that ``later`` accesses in a way that must wait for a barrier."""
        return (later.reads & self.writes) | (later.writes & self.reads)


class _Planner:
    def __init__(self, shared: dict, thread_vars: set, kernel_name: str):
        self.shared = shared              # data Var -> Buffer
        self.thread_vars = set(thread_vars)
        self.kernel_name = kernel_name
        self.state = _State()

    def summary(self, stmt) -> _State:
        """All shared accesses inside ``stmt``."""
        found = _State()

        def visit(node):
            if isinstance(node, BufferLoad) and node.buffer.data in self.shared:
                found.reads.add(node.buffer.data)
            elif isinstance(node, BufferStore) and node.buffer.data in self.shared:
                found.writes.add(node.buffer.data)
            # An address handed out may be read or written through: count it as both.
            elif isinstance(node, Call) and node.op == "tir.tvm_access_ptr" \
                    and node.args[1] in self.shared:
                found.reads.add(node.args[1])
                found.writes.add(node.args[1])
        post_order_visit(stmt, visit)
        return found

    def depends_on_thread(self, expr) -> bool:
        used = []
        post_order_visit(expr, lambda n: used.append(n) if isinstance(n, Var) else None)
        return any(v in self.thread_vars for v in used)

    # -- the walk -----------------------------------------------------------------------
    def plan(self, stmt, divergent=None):
        """``stmt`` with barriers; ``divergent`` is the thread-dependent statement it
        sits under (no barrier may go there)."""
        if is_sync(stmt):
            if divergent is not None:
                self.fail_divergent(divergent, "an explicit barrier")
            self.state = _State()
            return stmt
        if hasattr(stmt, "seq"):
            return seq(*[self.item(s, divergent) for s in stmt.seq])
        return self.item(stmt, divergent)

    def item(self, stmt, divergent):
        """One statement of a sequence: a barrier before it when it conflicts with the
        accesses since the last one, then its own inside."""
        before = None
        if not is_sync(stmt):
            clash = self.state.conflicts(self.summary(stmt))
            if clash:
                if divergent is not None:
                    self.fail_divergent(divergent, self.names(clash))
                before, self.state = storage_sync(), _State()
        new = self.inside(stmt, divergent)
        return seq(before, new) if before is not None else new

    def inside(self, stmt, divergent):
        if isinstance(stmt, For):
            return self.loop(stmt, divergent)
        if isinstance(stmt, IfThenElse):
            return self.branch(stmt, divergent)
        if isinstance(stmt, LetStmt):
            # A value computed from a thread index is itself thread-dependent (tx2 = tx * 2).
            if self.depends_on_thread(stmt.value):
                self.thread_vars.add(stmt.var)
            return stmt.replace(body=self.plan(stmt.body, divergent))
        if isinstance(stmt, (Allocate, DeclBuffer)):
            return stmt.replace(body=self.plan(stmt.body, divergent))
        if hasattr(stmt, "seq") or is_sync(stmt):
            return self.plan(stmt, divergent)
        self.state.add(self.summary(stmt))
        return stmt

    def loop(self, loop, divergent):
        if divergent is None and (self.depends_on_thread(loop.min)
                                  or self.depends_on_thread(loop.extent)):
            divergent = loop
        incoming = self.state.copy()
        body = self.plan(loop.body, divergent)
        extent = const_int(loop.extent)
        # One iteration has no back edge to guard.
        clash = self.state.conflicts(self.summary(loop.body)) if extent != 1 else set()
        if clash:       # the next iteration would overwrite or read too early
            if divergent is not None:
                self.fail_divergent(divergent, self.names(clash))
            body, self.state = seq(body, storage_sync()), _State()
        # A loop that may run zero times leaves the accesses before it pending as well.
        if extent is None or extent < 1:
            self.state.add(incoming)
        return loop if body is loop.body else loop.replace(body=body)

    def branch(self, node, divergent):
        if divergent is None and self.depends_on_thread(node.condition):
            divergent = node
        incoming = self.state.copy()
        then_case = self.plan(node.then_case, divergent)
        # Each branch starts from the state before the if; after it, either may have run.
        after_then, self.state = self.state, incoming
        else_case = self.plan(node.else_case, divergent) if node.else_case is not None \
            else None
        self.state.add(after_then)
        if then_case is node.then_case and else_case is node.else_case:
            return node
        return node.replace(then_case=then_case, else_case=else_case)

    def names(self, data_vars) -> str:
        return ", ".join(sorted(repr(self.shared[v].name) for v in data_vars))

    def fail_divergent(self, node, what: str):
        raise CodegenError(
            f"{self.kernel_name}: a barrier is needed for shared buffer {what} inside "
            f"`{describe(node)}`, whose condition or bounds depend on the thread index; threads "
            "that skip it would never reach the barrier. Move the exchange out of the "
            "condition (or pad the loop so every thread runs it)")


def _launch_nest(body):
    """(thread loop vars, shared allocations, the body inside the innermost thread loop)."""
    thread_vars, shared = set(), {}
    while True:
        tag = thread_tag(body)
        if tag:
            if tag.startswith("threadIdx"):
                thread_vars.add(body.loop_var)
            body = body.body
        elif isinstance(body, Allocate) and (body.buffer.scope or "").startswith("shared"):
            shared[body.buffer.data] = body.buffer
            body = body.body
        else:
            return thread_vars, shared, body


def thread_sync(kernel):
    """The kernel with barriers (module docstring); the same kernel when none is needed."""
    thread_vars, shared, inner = _launch_nest(kernel.body)
    # Shared buffers allocated deeper in the kernel count too.
    post_order_visit(inner, lambda n: shared.setdefault(n.buffer.data, n.buffer)
                     if isinstance(n, Allocate) and (n.buffer.scope or "").startswith("shared")
                     else None)
    if not shared:
        return kernel
    name = kernel.attrs.get("global_symbol", "kernel")
    planned = _Planner(shared, thread_vars, name).plan(inner)
    if planned is inner:
        return kernel
    return kernel.with_body(_replace_inner(kernel.body, planned))


def _replace_inner(node, planned):
    if thread_tag(node) or (isinstance(node, Allocate)
                            and (node.buffer.scope or "").startswith("shared")):
        return node.replace(body=_replace_inner(node.body, planned))
    return planned


@prim_func_pass(opt_level=0, name="tir.ThreadSync")
def _thread_sync(func, mod, ctx):
    # Host functions only launch kernels; shared memory exists only inside them.
    if func.attrs.get("calling_conv") != "device_kernel":
        return func
    return thread_sync(func)


def ThreadSync():
    """Pass: insert ``T.tvm_storage_sync("shared")`` into device kernels (module docstring)."""
    return _thread_sync
