"""Templates and tasks.

A template is a function of the workload's arguments that reads its config with
``get_config()`` and returns ``(schedule, args)``: a te schedule with its tensors (the
older TVM tutorials), or a ``tir.Schedule`` with anything as ``args`` (the MLC course's
style; the schedule's module is what gets built)::

    @autotvm.template("tutorial/matmul")
    def matmul(N, L, M, dtype):
        A = te.placeholder((N, L), name="A", dtype=dtype)
        ...
        cfg = autotvm.get_config()
        cfg.define_split("tile_y", y, num_outputs=2)
        yo, yi = cfg["tile_y"].apply(s, C, y)
        return s, [A, B, C]

    task = autotvm.task.create("tutorial/matmul", args=(512, 512, 512, "float32"),
                               target="llvm")
    len(task.config_space), task.flop
    s, args = task.instantiate(task.config_space.get(3))
"""
from __future__ import annotations

import functools
import threading

from ...ir.errors import InvalidValueError, TuningError
from ...ir.module import IRModule
from ...target import Target
from .dispatcher import ApplyConfig, DispatchContext
from .space import ConfigSpace

__all__ = ["TASK_TABLE", "TEMPLATE_KEYS", "Task", "create", "get_config", "template",
           "estimate_flop", "register_template_key"]

TASK_TABLE: dict = {}
"""Registered templates by task name."""

TEMPLATE_KEYS: dict = {}
"""``(task name, template key) -> (template name, args converter)``: the templates older
TVM chose with ``create(..., template_key)`` (``"winograd"`` for a convolution)."""

DIRECT_KEY = "direct"


def register_template_key(task_name: str, key: str, template_name: str, convert) -> None:
    """``create(task_name, args, ..., key)`` gives the task of ``template_name`` with
    ``convert(args)``, which raises InvalidValueError where that template does not apply."""
    TEMPLATE_KEYS[(task_name, key)] = (template_name, convert)

# Per thread, and a stack: a template may call another template.
_CURRENT = threading.local()


def as_workload(value):
    """Arguments as a hashable tuple (lists from JSON records become tuples)."""
    if isinstance(value, (list, tuple)):
        return tuple(as_workload(v) for v in value)
    return value


def get_config():
    """The config of the template call in progress (use inside a template)."""
    stack = getattr(_CURRENT, "stack", None)
    if not stack:
        raise TuningError("autotvm.get_config() is called outside a template; call it inside "
                          "a function decorated with @autotvm.template(name)")
    return stack[-1]


def _call_with_config(func, config, args):
    if not hasattr(_CURRENT, "stack"):
        _CURRENT.stack = []
    _CURRENT.stack.append(config)
    try:
        return func(*args)
    finally:
        _CURRENT.stack.pop()


def template(task_name: str, func=None):
    """Register ``func`` as the template of ``task_name`` (a decorator).

    Calling the decorated function asks the current dispatch context for the config of
    the workload ``(task_name, *args)``; see :mod:`.dispatcher`.
    """
    def register(f):
        @functools.wraps(f)
        def dispatch(*args):
            from ...target import Target
            workload = (task_name,) + as_workload(args)
            config = DispatchContext.current().query(Target.current(), workload)
            return _call_with_config(f, config, args)

        dispatch.template_name = task_name
        TASK_TABLE[task_name] = f
        return dispatch

    return register(func) if func is not None else register


class Task:
    """A template applied to fixed arguments, for one target.

    ``config_space`` and ``flop`` come from running the template once with a
    :class:`ConfigSpace` (``flop`` is ``cfg.flop`` when the template sets it, else the
    arithmetic of the unscheduled function counted per iteration).
    """

    def __init__(self, name: str, args, target=None):
        self.name, self.args, self.target = name, as_workload(args), target
        # TVM's attribute, read by older tutorials; tasks always run on this host's CPU.
        self.target_host = None
        self.func = TASK_TABLE.get(name)
        self._space = None
        self._flop = None
        # Built only when a correctness check asks for it.
        self._reference = None
        self.count = 1      # calls of a model the task covers (see extract_from_program)

    @property
    def workload(self) -> tuple:
        return (self.name,) + self.args

    def _require_template(self):
        if self.func is None:
            raise TuningError(f"task {self.name!r}: no template is registered under this name;"
                              f" registered: {sorted(TASK_TABLE)} (decorate the function with "
                              f"@autotvm.template({self.name!r}))")
        return self.func

    @property
    def config_space(self) -> ConfigSpace:
        if self._space is None:
            space = ConfigSpace()
            schedule, args = self._run(space)
            self._space = space
            # A template that counts its own FLOPs knows better than the estimate.
            self._flop = space.flop or estimate_flop(schedule_module(schedule, args))
        return self._space

    @property
    def flop(self) -> float:
        if self._flop is None:
            _ = self.config_space
        return self._flop

    @flop.setter
    def flop(self, value) -> None:
        self._flop = value

    def _run(self, config):
        func = self._require_template()
        with ApplyConfig(config):
            result = _call_with_config(func, config, self.args)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TuningError(f"template {self.name!r} returned {type(result).__name__}; "
                              "expected (schedule, args)")
        return result

    def instantiate(self, config):
        """``(schedule, args)`` of the template with ``config`` applied."""
        return self._run(config)

    def instantiate_module(self, config) -> IRModule:
        """The scheduled IRModule (function "main") of ``config``."""
        return schedule_module(*self.instantiate(config))

    def reference_module(self) -> IRModule:
        """What a correctness check compares with: the unscheduled function of a te
        template, the first config of a tir.Schedule template (as TVM does)."""
        if self._reference is None:
            schedule, args = self.instantiate(self.config_space.get(0))
            if type(schedule).__module__ == "mlcbench.te.schedule":
                from ...te import create_prim_func
                self._reference = IRModule({"main": create_prim_func(list(args))})
            else:
                self._reference = schedule_module(schedule, args)
        return self._reference

    def __repr__(self) -> str:
        return f"Task(func_name={self.name}, args={self.args}, workload={self.workload})"


def schedule_module(schedule, args) -> IRModule:
    """The IRModule of a template's result: a te schedule with its args, a tir.Schedule,
    a PrimFunc or an IRModule."""
    from ...tir.function import PrimFunc
    if type(schedule).__module__ == "mlcbench.te.schedule":
        return IRModule({"main": schedule.to_prim_func(list(args))})
    mod = getattr(schedule, "mod", schedule)
    if isinstance(mod, PrimFunc):
        return IRModule({"main": mod})
    if isinstance(mod, IRModule):
        return mod
    raise TuningError(f"a template returns (schedule, args) with a te schedule or a "
                      f"tir.Schedule; found {type(schedule).__name__}")


def create(task_name: str, args, target="llvm", target_host=None, template_key=None) -> Task:
    """The task of template ``task_name`` with ``args``; its space is built at once, so a
    template error shows here rather than during tuning.

    ``target_host`` (TVM's signature) may only name a CPU target: the tasks run on the
    host. ``template_key`` is older TVM's: ``"direct"`` (or None) is ``task_name``'s own
    template, a key registered for it (``"winograd"`` for ``conv2d_nchw.x86``) gives the
    task of that template, named after it so its records apply to it alone.
    """
    check_target_host(target_host, "autotvm.task.create")
    if template_key not in (None, DIRECT_KEY):
        task_name, args = _keyed_template(task_name, args, template_key)
    else:
        # A keyed template named directly gets its arguments in its own form, so its
        # records share one workload however the task was made.
        for keyed_name, convert in TEMPLATE_KEYS.values():
            if keyed_name == task_name:
                args = convert(as_workload(args))
                break
    task = Task(task_name, args, target)
    task._require_template()
    _ = task.config_space
    return task


def _keyed_template(task_name: str, args, key) -> tuple:
    if (task_name, key) not in TEMPLATE_KEYS:
        known = [DIRECT_KEY] + sorted(k for name, k in TEMPLATE_KEYS if name == task_name)
        raise InvalidValueError(f"autotvm.task.create: template_key of {task_name!r} must "
                                f"be one of {known}, found {key!r}")
    template_name, convert = TEMPLATE_KEYS[(task_name, key)]
    return template_name, convert(as_workload(args))


def check_target_host(target_host, where: str) -> None:
    """Refuse a ``target_host`` other than None or a CPU target: tasks are built and
    measured on this machine's CPU, so a host target can only name that CPU."""
    if target_host is None:
        return
    host = target_host if isinstance(target_host, Target) else Target(target_host)
    if not host.is_cpu:
        raise InvalidValueError(f"{where}: target_host must be a CPU target (tasks run on "
                                f"this machine's CPU), found {str(host)!r}")


def estimate_flop(mod: IRModule) -> float:
    """Arithmetic operations of the blocks of ``mod``, each counted once per iteration
    of its block (index arithmetic not counted): ``2 * N * L * M`` for a matmul."""
    from ...tir.expr import BinaryOp, Call, Cast, Select
    from ...tir.function import PrimFunc
    from ...tir.functor import post_order_visit
    from ...tir.stmt import Block, BufferStore

    def ops(expr) -> int:
        if isinstance(expr, BinaryOp):
            return 1 + ops(expr.a) + ops(expr.b)
        if isinstance(expr, (Call, Select)):
            return sum(ops(a) for a in getattr(expr, "args", ())) + 1
        # A cast is a conversion, not arithmetic.
        if isinstance(expr, Cast):
            return ops(expr.value)
        return 0

    total = [0]

    def visit(node):
        if isinstance(node, Block) and node.iter_vars:
            stores = []
            post_order_visit(node.body, lambda n: isinstance(n, BufferStore) and
                             stores.append(n))
            count = sum(ops(s.value) for s in stores)
            for iv in node.iter_vars:
                count *= int(getattr(iv.dom.extent, "value", 1))
            total[0] += count

    for _, func in mod.functions.items():
        if isinstance(func, PrimFunc):
            post_order_visit(func.body, visit)
    return float(total[0])
