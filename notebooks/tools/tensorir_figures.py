"""Pictures of TensorIR loop nests for notebooks 2 and 3: the loops of a PrimFunc and the
elements of each buffer its first few block executions touch, in order.

The accesses are not drawn by hand: :func:`trace_accesses` runs the program's loops and
block bindings in Python (indices only, no arithmetic on the data), so a picture always
shows what the scheduled program really does.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 -- after choosing the backend
import numpy as np  # noqa: E402

from mlcbench.tir import expr as E, stmt as S  # noqa: E402


class _Done(Exception):
    """Raised by the tracer once it has seen the block executions it was asked for."""


def _value(expr, env, loads):
    """Evaluate an index expression; record the buffer loads met on the way."""
    if isinstance(expr, (E.IntImm, E.FloatImm)):
        return expr.value
    if isinstance(expr, E.Var):
        return env.get(expr, 0)
    if isinstance(expr, E.BufferLoad):
        loads.append((expr.buffer.name, tuple(_value(i, env, loads) for i in expr.indices)))
        return 0
    if isinstance(expr, E.BinaryOp):
        return type(expr).py_op(_value(expr.a, env, loads), _value(expr.b, env, loads))
    if isinstance(expr, E.Cast):
        return _value(expr.value, env, loads)
    for child in getattr(expr, "args", ()):  # calls such as T.max of a load
        _value(child, env, loads)
    return 0


class _Tracer:
    def __init__(self, steps, blocks):
        self.steps, self.blocks, self.events = steps, blocks, []

    def run(self, stmt, env):
        if isinstance(stmt, S.SeqStmt):
            for part in stmt.seq:
                self.run(part, env)
        elif isinstance(stmt, S.For):
            start = _value(stmt.min, env, [])
            for v in range(start, start + _value(stmt.extent, env, [])):
                self.run(stmt.body, {**env, stmt.loop_var: v})
        elif isinstance(stmt, S.BlockRealize):
            self.realize(stmt, env)
        elif isinstance(stmt, S.IfThenElse):
            branch = stmt.then_case if _value(stmt.condition, env, []) else stmt.else_case
            if branch is not None:
                self.run(branch, env)
        elif hasattr(stmt, "body"):
            self.run(stmt.body, env)

    def realize(self, realize, env):
        if not _value(realize.predicate, env, []):
            return
        block = realize.block
        inner = dict(env)
        for iv, value in zip(block.iter_vars, realize.iter_values):
            inner[iv.var] = _value(value, env, [])
        if not block.iter_vars:                      # the root block: only a scope
            self.run(block.body, inner)
            return
        accesses = []
        first = all(inner[iv.var] == iv.dom.min.value for iv in block.iter_vars
                    if iv.iter_type.name == "COMM_REDUCE")
        body = S.seq(block.init, block.body) if block.init is not None and first else block.body
        self.collect(body, inner, accesses)
        if self.blocks is None or block.name_hint in self.blocks:
            self.events.append((block.name_hint, accesses))
            if len(self.events) >= self.steps:
                raise _Done

    def collect(self, stmt, env, out):
        if isinstance(stmt, S.BufferStore):
            loads = []
            _value(stmt.value, env, loads)
            out.extend((name, idx, "read") for name, idx in loads)
            out.append((stmt.buffer.name, tuple(_value(i, env, []) for i in stmt.indices),
                        "write"))
        elif isinstance(stmt, S.SeqStmt):
            for part in stmt.seq:
                self.collect(part, env, out)
        elif isinstance(stmt, S.For):
            for v in range(_value(stmt.extent, env, [])):
                self.collect(stmt.body, {**env, stmt.loop_var: v}, out)
        elif hasattr(stmt, "body"):
            self.collect(stmt.body, env, out)


def trace_accesses(func, steps, blocks=None):
    """The first ``steps`` block executions of ``func`` in program order (only blocks
    named in ``blocks`` when given), each ``(block name, [(buffer, indices, kind)])``."""
    tracer = _Tracer(steps, None if blocks is None else set(blocks))
    try:
        tracer.run(func.body, {})
    except _Done:
        pass
    return tracer.events


def loop_nest_text(func):
    """The loops and blocks of ``func``, one line each, indented as they nest."""
    lines = []

    def walk(stmt, depth):
        if isinstance(stmt, S.SeqStmt):
            for part in stmt.seq:
                walk(part, depth)
        elif isinstance(stmt, S.For):
            kind = "" if stmt.kind.name == "SERIAL" else f"  ({stmt.kind.name.lower()})"
            lines.append("  " * depth + f"for {stmt.loop_var.name} in "
                         f"range({stmt.extent.value}):{kind}")
            walk(stmt.body, depth + 1)
        elif isinstance(stmt, S.BlockRealize):
            block = stmt.block
            if block.iter_vars:
                lines.append("  " * depth + f"block {block.name_hint}")
            walk(block.body, depth + (1 if block.iter_vars else 0))
        elif hasattr(stmt, "body"):
            walk(stmt.body, depth)

    walk(func.body, 0)
    return "\n".join(lines)


def _grid(events, buffer, shape):
    """The step at which each element of ``buffer`` was first touched (NaN: never)."""
    grid = np.full(shape, np.nan)
    for step, (_, accesses) in enumerate(events):
        for name, idx, _ in accesses:
            if name == buffer and len(idx) == 2 and idx[0] < shape[0] and idx[1] < shape[1]:
                if np.isnan(grid[idx]):
                    grid[idx] = step
    return grid


def access_figure(func, steps, buffers, window=16, blocks=None, title=""):
    """The loop nest of ``func`` beside the top-left ``window`` x ``window`` corner of
    each 2-D buffer in ``buffers``; an element's colour is the block execution that
    first touched it (light: early, dark: late), white: not touched yet."""
    events = trace_accesses(func, steps, blocks)
    text = loop_nest_text(func)
    fig = plt.figure(figsize=(3.4 + 2.6 * len(buffers), 3.2))
    grid = fig.add_gridspec(1, len(buffers) + 1, width_ratios=[1.4] + [1] * len(buffers))
    ax = fig.add_subplot(grid[0])
    ax.axis("off")
    ax.text(0, 1, text, family="monospace", fontsize=7.5, va="top", transform=ax.transAxes)
    cmap = plt.get_cmap("viridis_r").copy()
    cmap.set_bad("white")
    for n, name in enumerate(buffers):
        ax = fig.add_subplot(grid[n + 1])
        ax.imshow(np.ma.masked_invalid(_grid(events, name, (window, window))), cmap=cmap,
                  vmin=0, vmax=max(steps - 1, 1), interpolation="nearest")
        ax.set_title(name, fontsize=10)
        if window <= 40:
            ax.set_xticks(np.arange(-0.5, window, 1), minor=True)
            ax.set_yticks(np.arange(-0.5, window, 1), minor=True)
            ax.grid(which="minor", color="#cccccc", linewidth=0.3)
        ax.tick_params(labelsize=7, which="both", length=0)
    fig.suptitle(title or f"the first {steps} block executions, "
                 f"top-left {window} x {window} of each buffer "
                 "(colour: first touched, yellow early, purple late)", fontsize=9)
    return fig


def figure_cell(text, name, fig):
    """A markdown cell showing ``fig`` as an attachment (no drawing code in the notebook)."""
    import base64
    import io

    from nbformat.v4 import new_markdown_cell
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    cell = new_markdown_cell(text + f"\n\n![{name}](attachment:{name})")
    cell["attachments"] = {name: {"image/png": base64.b64encode(buf.getvalue()).decode()}}
    return cell
