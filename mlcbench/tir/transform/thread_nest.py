"""SplitHostDevice for GPUs: thread-bound loops become kernels with one perfect thread nest.

After the CPU passes (flat buffers, no blocks) a scheduled GPU function is a sequence
of loop nests bound to ``blockIdx.*``/``threadIdx.*``. Each top-level nest becomes one
*device kernel* ``<func>_kernel<i>``; the function itself becomes the *host function*
that launches them in order::

    for i_0 in T.thread_binding(8, thread="blockIdx.x"):           # main (scheduled)
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            A_shared = T.allocate([256], "float32", "shared")
            for ax0_0 in range(2):
                for ax0_1 in T.thread_binding(128, thread="threadIdx.x"):
                    ...A_shared[ax0_0 * 128 + ax0_1] = ...
            B[...] = A_shared[i_1] + ...

becomes::

    # main_kernel0                                   # main
    for i_0 in T.thread_binding(8, "blockIdx.x"):   T.launch_kernel("main_kernel0", A, B)
        A_shared = T.allocate([256], ..., "shared")
        for i_1 in T.thread_binding(128, "threadIdx.x"):
            for ax0_0 in range(2):
                ...A_shared[ax0_0 * 128 + i_1] = ...
            B[...] = A_shared[i_1] + ...

Rules (see the GPU lowered form in ``lower_gpu``):

* the launch extent of a tag is that of its outermost loops (the longest of them for
  ``threadIdx``; ``blockIdx`` loops of one tag must agree); a deeper loop of the same
  tag is the same thread index, guarded by ``if tx < extent`` when it is shorter, and
  an error naming the loop when it is longer (or, for ``blockIdx``, different);
* thread extents are constants, a grid extent may depend on the symbolic dimensions
  (``ceildiv(n, 256)``: computed at launch); the nest is ordered blockIdx.x/y/z, threadIdx.x/y/z;
* ``vthread`` loops left (InjectVirtualThread interleaves them before) become serial
  loops: each thread runs its virtual threads in turn;
* ``"shared"`` allocations move to the block level (between the blockIdx and the
  threadIdx loops), ``"local"`` ones stay where they are (one copy per thread),
  ``"global"`` ones must sit above the kernels (the host allocates them); ``"warp"``
  ones stay too (LowerWarpMemory turns them into per-lane locals and shuffles);
* a statement outside every thread-bound loop is an error naming it, and so is a
  function without thread-bound loops;
* code inside a kernel outside the loops of a launched ``threadIdx`` tag is run by
  every thread of that tag, as in TVM.
"""
from __future__ import annotations

from ...ir.errors import CodegenError
from ...ir.structural import structural_equal
from ..expr import BufferLoad, Call, IntImm, Range, StringImm, Var
from ..functor import StmtExprMutator, post_order_visit, substitute
from ..function import PrimFunc
from ..stmt import (Allocate, BufferStore, DeclBuffer, Evaluate, For, ForKind, IfThenElse, IterType,
                    IterVar, SeqStmt, seq)
from ._common import const_int

LAUNCH_ORDER = ("blockIdx.x", "blockIdx.y", "blockIdx.z",
                "threadIdx.x", "threadIdx.y", "threadIdx.z")


def thread_tag(loop) -> str:
    """The thread tag of a loop bound to a thread (``"threadIdx.x"``), else ``""``."""
    if not isinstance(loop, For) or loop.kind != ForKind.THREAD_BINDING:
        return ""
    return loop.thread_binding.thread_tag if loop.thread_binding is not None else ""


def is_vthread(tag: str) -> bool:
    return tag.startswith("vthread") or tag == "cthread"


def describe(stmt) -> str:
    """The first line of a statement's TVMScript, for error messages."""
    text = stmt.script().strip().splitlines()
    # The printer may lead with comment lines; the first code line names the statement.
    lines = [t for t in text if t.strip() and not t.lstrip().startswith("#")]
    return lines[0].strip() if lines else type(stmt).__name__


class _LaunchPlan:
    """Launch extents of one kernel and the loop var that stands for each tag."""

    def __init__(self, kernel_name: str):
        self.kernel_name = kernel_name
        self.extent: dict = {}         # tag -> launch extent (int)
        self.var: dict = {}            # tag -> Var of the launched loop
        self.first_loop: dict = {}     # tag -> the loop that names the launch


def _collect_thread_loops(stmt) -> list:
    """``[(loop, nested)]`` for every non-vthread thread loop, ``nested`` when it sits
    inside a loop of the same tag."""
    found = []

    def walk(node, open_tags):
        if isinstance(node, For):
            tag = thread_tag(node)
            if tag and not is_vthread(tag):
                found.append((node, tag in open_tags))
                open_tags = open_tags | {tag}
            walk(node.body, open_tags)
        elif isinstance(node, SeqStmt):
            for item in node.seq:
                walk(item, open_tags)
        elif isinstance(node, IfThenElse):
            walk(node.then_case, open_tags)
            walk(node.else_case, open_tags)
        elif hasattr(node, "body"):
            walk(node.body, open_tags)

    walk(stmt, frozenset())
    return found


def plan_launch(kernel_top, kernel_name: str) -> _LaunchPlan:
    """Launch extents from the outermost loops of each tag (module docstring)."""
    plan = _LaunchPlan(kernel_name)
    # All outermost loops first: nested ones are checked against the final launch extent.
    loops = _collect_thread_loops(kernel_top)
    for loop, nested in loops:
        if not nested:
            _merge_outer(plan, loop)
    for loop, nested in loops:
        if nested:
            _check_nested(plan, loop)
    return plan


def _launch_extent(plan, loop, tag):
    """The loop's launch extent: an int; for ``blockIdx`` also an expression of the
    kernel's symbolic dimensions (the grid is computed at launch from the arguments)."""
    if tag not in LAUNCH_ORDER:
        raise CodegenError(f"{plan.kernel_name}: loop {loop.loop_var.name!r} is bound to "
                           f"unknown thread tag {tag!r}; expected one of {list(LAUNCH_ORDER)} "
                           "or vthread")
    extent = const_int(loop.extent)
    if const_int(loop.min) == 0 and (extent is not None or tag.startswith("blockIdx")):
        return loop.extent if extent is None else extent
    # The threads of a block are compiled into the kernel (__launch_bounds__, shared
    # memory sized for them): they cannot depend on the arguments.
    raise CodegenError(
        f"{plan.kernel_name}: loop {loop.loop_var.name!r} bound to {tag} has extent "
        f"{loop.extent} from {loop.min}; a {'grid' if tag.startswith('blockIdx') else 'thread'} "
        "extent must start at 0 and a thread extent must be a constant: split the loop by a "
        "constant factor and bind the inner part to the thread")


def _same_extent(a, b) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return structural_equal(a if not isinstance(a, int) else IntImm("int32", a),
                            b if not isinstance(b, int) else IntImm("int32", b))


def _merge_outer(plan, loop) -> None:
    tag = thread_tag(loop)
    extent = _launch_extent(plan, loop, tag)
    if tag not in plan.extent:
        plan.extent[tag], plan.var[tag], plan.first_loop[tag] = extent, loop.loop_var, loop
        return
    first = plan.first_loop[tag]
    if tag.startswith("blockIdx") and not _same_extent(extent, plan.extent[tag]):
        raise CodegenError(
            f"{plan.kernel_name}: loops {first.loop_var.name!r} and {loop.loop_var.name!r} "
            f"are both bound to {tag} with extents {plan.extent[tag]} and {extent}; the "
            "blocks of one kernel launch have one grid: give them the same extent")
    if not tag.startswith("blockIdx"):
        plan.extent[tag] = max(plan.extent[tag], extent)


def _check_nested(plan, loop) -> None:
    tag = thread_tag(loop)
    extent, launched = _launch_extent(plan, loop, tag), plan.extent[tag]
    first = plan.first_loop[tag]
    if tag.startswith("blockIdx"):
        if not _same_extent(extent, launched):
            raise CodegenError(
                f"{plan.kernel_name}: loop {loop.loop_var.name!r} bound to {tag} has extent "
                f"{extent}, but the kernel launches {launched} blocks along it (loop "
                f"{first.loop_var.name!r}); extents conflict")
        return
    if extent > launched:
        raise CodegenError(
            f"{plan.kernel_name}: loop {loop.loop_var.name!r} bound to {tag} has extent "
            f"{extent}, longer than the launch extent {launched} of loop "
            f"{first.loop_var.name!r}; split it by {launched} and bind the inner part")


class _NestRewriter(StmtExprMutator):
    """Replace thread loops by their tag's var (guarded when shorter), vthread loops by
    serial loops, and take the shared allocations out."""

    def __init__(self, plan: _LaunchPlan):
        self.plan = plan
        self.shared: list = []

    def visit_For(self, loop):
        tag = thread_tag(loop)
        if not tag:
            return self.generic_visit(loop)
        if is_vthread(tag):
            body = self.visit(loop.body)
            # The binding is dropped with the kind: a serial loop carries no thread.
            return For(loop.loop_var, loop.min, loop.extent, ForKind.SERIAL, body,
                       None, loop.annotations)
        var = self.plan.var[tag]
        body = loop.body
        if loop.loop_var is not var:
            # One thread index per tag: a second loop of the tag reads the launched loop's variable.
            index = var if const_int(loop.min) == 0 else var + loop.min
            body = substitute(body, {loop.loop_var: index})
        body = self.visit(body)
        if not tag.startswith("blockIdx") and const_int(loop.extent) < self.plan.extent[tag]:
            body = IfThenElse(var < loop.extent, body)
        return body

    def visit_Allocate(self, alloc):
        scope = alloc.buffer.scope or "global"
        if scope.startswith("shared"):
            self.shared.append(alloc)       # in program order: outer ones first
            return self.visit(alloc.body)
        body = self.visit(alloc.body)
        if scope.startswith("global"):
            raise CodegenError(
                f"{self.plan.kernel_name}: buffer {alloc.buffer.name!r} of scope "
                f"{scope!r} is allocated inside the kernel; a kernel allocates only "
                "'shared' and 'local' buffers (global ones belong above the kernels)")
        return alloc if body is alloc.body else alloc.replace(body=body)


def build_kernel_body(kernel_top, plan: _LaunchPlan):
    """The perfect nest: blockIdx loops, shared allocations, threadIdx loops, body."""
    rewriter = _NestRewriter(plan)
    body = rewriter.visit(kernel_top)
    # Built from the inside out, so the loops come out in LAUNCH_ORDER.
    for tag in reversed([t for t in LAUNCH_ORDER if t.startswith("threadIdx")]):
        body = _launch_loop(plan, tag, body)
    for alloc in reversed(rewriter.shared):
        body = alloc.replace(body=body)
    for tag in reversed([t for t in LAUNCH_ORDER if t.startswith("blockIdx")]):
        body = _launch_loop(plan, tag, body)
    return body


def _launch_loop(plan, tag, body):
    if tag not in plan.extent:
        return body
    var, extent = plan.var[tag], plan.extent[tag]
    extent = IntImm(var.dtype, extent) if isinstance(extent, int) else extent
    dom = Range(IntImm(var.dtype, 0), extent)
    binding = IterVar(dom, Var(tag, var.dtype), IterType.THREAD_INDEX, tag)
    return For(var, 0, extent, ForKind.THREAD_BINDING, body, binding)


# -- the host side ----------------------------------------------------------------------

def split_function(func: PrimFunc, name: str, target, host_target):
    """``(host PrimFunc, [kernel PrimFuncs])`` for one lowered GPU function."""
    allocs, statements = _host_level(func.body, name)
    kernels, launches = [], []
    for index, top in enumerate(statements):
        kernel_name = f"{name}_kernel{index}"
        plan = plan_launch(top, kernel_name)
        body = build_kernel_body(top, plan)
        params, buffer_map = _kernel_params(func, body, allocs)
        attrs = {"global_symbol": kernel_name, "calling_conv": "device_kernel",
                 "target": target}
        kernels.append(PrimFunc(params, body, buffer_map, attrs))
        # Launched in program order: each kernel may read what the previous one wrote.
        launches.append(Evaluate(Call("int32", "tir.launch_kernel",
                                      (StringImm(kernel_name),) + tuple(params))))
    host_body = seq(*launches)
    for alloc in reversed(allocs):
        host_body = alloc.replace(body=host_body)
    host = func.with_body(host_body).with_attrs(
        {"global_symbol": name, "target": host_target, "calling_conv": "host_launch"})
    return host, kernels


def _host_level(body, name: str):
    """The global allocations around the kernels and the kernels' top statements."""
    allocs = []
    while isinstance(body, (Allocate, DeclBuffer)):
        if isinstance(body, Allocate):
            scope = body.buffer.scope or "global"
            if not scope.startswith("global"):
                raise CodegenError(
                    f"{name}: buffer {body.buffer.name!r} of scope {scope!r} is allocated "
                    "outside every thread-bound loop; only 'global' buffers may pass "
                    "between kernels (compute it under the blockIdx loops)")
            allocs.append(body)
        body = body.body
    statements = list(body.seq) if isinstance(body, SeqStmt) else [body]
    statements = [s for s in statements if not _is_no_op(s)]
    if not statements:
        raise CodegenError(f"{name}: the function has no thread-bound loops to launch")
    for stmt in statements:
        tag = thread_tag(stmt)
        if not tag or is_vthread(tag):
            raise CodegenError(
                f"{name}: statement `{describe(stmt)}` runs outside every thread-bound "
                "loop; on a GPU target every statement must sit in a loop bound to "
                "blockIdx/threadIdx (sch.bind(loop, 'blockIdx.x'))")
    return allocs, statements


def _is_no_op(stmt) -> bool:
    return isinstance(stmt, Evaluate) and isinstance(stmt.value, IntImm)


def _kernel_params(func: PrimFunc, body, allocs):
    """The original params the kernel uses (directly or through a buffer's symbolic
    shape), in order, then the global intermediates it uses."""
    used = set()

    def visit(node):
        if isinstance(node, Var):
            used.add(node)
        elif isinstance(node, (BufferLoad, BufferStore)):
            used.add(node.buffer.data)
    post_order_visit(body, visit)
    params, buffer_map = [], {}
    for param in func.params:
        buffer = func.buffer_map.get(param)
        shape_vars = set()
        if buffer is not None:
            post_order_visit(buffer.shape, lambda n: shape_vars.add(n) if isinstance(n, Var)
                             else None)
        # A kernel takes only the parameters it reads, in the function's order.
        if param in used or (buffer is not None and (buffer.data in used or shape_vars & used)):
            params.append(param)
            if buffer is not None:
                buffer_map[param] = buffer
    for alloc in allocs:
        if alloc.buffer.data in used:
            params.append(alloc.buffer.data)
            buffer_map[alloc.buffer.data] = alloc.buffer
    return tuple(params), buffer_map
