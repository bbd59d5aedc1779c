"""Random tensor programs as data, with their TE functions and numpy references.

A program is a dict of plain values, drawn with ``draw(n) -> int in [0, n)`` (so
``random.Random(seed).randrange`` or a hypothesis ``data.draw`` both drive it), printable
and replayable::

    spec = random_program(random.Random(7).randrange)
    # {'kind': 'pool', 'dtype': 'float32', 'data': [1, 2, 1, 3], 'kernel': [2, 3], ...}
    func, reference = make_program(spec)     # te.create_prim_func(...), numpy function

Kinds: an elementwise expression over inputs that broadcast (``+ - * max min`` and a
select; ``tanh sigmoid exp /`` on floats, floor and truncated ``// %`` by constants on
int32), a sum / max / min over random axes, max / average pooling and (grouped)
convolution with random strides, paddings and dilations, and a matmul; each in float32,
float64 or int32, optionally followed by an epilogue: relu, a broadcast bias, a scale, a
cast to a wider float or a sum over the last axis. Values stay small (int32 inputs in
[-4, 4], expression depth at most 3), so nothing overflows and the reference is exact.
``benchmarks/fuzz_programs.py`` schedules, builds and checks them.
"""
from __future__ import annotations

import random

import numpy as np

from mlcbench import te, topi
from mlcbench.tir import op as tir_op
from mlcbench.tir.expr import const
from mlcbench.topi import testing as topi_testing

DTYPES = ("float32", "float64", "int32")
KINDS = ("elementwise", "reduction", "pool", "conv2d", "matmul")
EPILOGUES = (None, None, "relu", "bias", "scale", "cast", "sum")


def _pick(draw, items):
    return items[draw(len(items))]


# -- programs as data --------------------------------------------------------------------
# A program is a dict of plain values (printable, so a failure shows exactly what ran);
# ``make_program`` turns it into the TE function and its numpy reference.
def _shape(draw, rank: int, high: int = 7) -> list:
    return [1 + draw(high) for _ in range(rank)]


def _broadcast_operand(draw, out_shape) -> list:
    """A shape that broadcasts to ``out_shape``: some leading axes dropped, some set to 1."""
    rank = len(out_shape) - draw(len(out_shape))
    return [1 if draw(3) == 0 else s for s in out_shape[len(out_shape) - rank:]] or [1]


def _expression(draw, dtype: str, n_inputs: int, depth: int):
    """An expression tree of nested tuples over ``("in", k)`` and ``("const", v)`` leaves."""
    if depth == 0 or draw(4) == 0:
        if draw(5) == 0:
            return ("const", _pick(draw, [-3, -1, 2, 5]) * (1 if dtype == "int32" else 0.75))
        return ("in", draw(n_inputs))
    unary = ["neg", "abs", "relu"] + (["tanh", "sigmoid", "exp"] if dtype != "int32" else [])
    binary = ["add", "sub", "mul", "max", "min", "where"] + (
        ["floordiv", "floormod", "truncdiv", "truncmod"] if dtype == "int32" else ["div"])
    if draw(3) == 0:
        op = _pick(draw, unary)
        child = ("in", draw(n_inputs)) if op == "exp" else _expression(
            draw, dtype, n_inputs, depth - 1)       # exp of a leaf only: no overflow
        return (op, child)
    op = _pick(draw, binary)
    if op in ("floordiv", "floormod", "truncdiv", "truncmod"):
        return (op, _expression(draw, dtype, n_inputs, depth - 1),
                ("const", _pick(draw, [-3, 2, 4, 5])))
    return (op, _expression(draw, dtype, n_inputs, depth - 1),
            _expression(draw, dtype, n_inputs, depth - 1))


def _elementwise(draw, dtype):
    out = _shape(draw, 1 + draw(4))
    inputs = [out] + [_broadcast_operand(draw, out) for _ in range(draw(3))]
    order = list(range(len(inputs)))
    random.Random(draw(1 << 16)).shuffle(order)
    return {"inputs": [inputs[k] for k in order],
            "expr": _expression(draw, dtype, len(inputs), 1 + draw(3))}


def _reduction(draw, dtype):
    shape = _shape(draw, 1 + draw(4))
    axes = sorted({draw(len(shape)) for _ in range(1 + draw(len(shape)))})
    return {"inputs": [shape], "reducer": _pick(draw, ["sum", "max", "min"]),
            "axis": None if draw(4) == 0 else axes, "keepdims": bool(draw(2))}


def _window(draw, size: int) -> tuple:
    """(kernel, stride, dilation, pad_lo, pad_hi) of one spatial axis of size ``size``."""
    while True:
        kernel, stride, dilation = 1 + draw(3), 1 + draw(3), 2 if draw(4) == 0 else 1
        lo, hi = draw(kernel), draw(kernel)
        if size + lo + hi >= (kernel - 1) * dilation + 1:
            return kernel, stride, dilation, lo, hi


def _spatial(draw) -> dict:
    """Window parameters for an NCHW input of random size, as pool2d / conv2d take them."""
    n, c, h, w = 1 + draw(2), 1 + draw(4), 1 + draw(8), 1 + draw(8)
    (kh, sh, dh, top, bottom), (kw, sw, dw, left, right) = _window(draw, h), _window(draw, w)
    return {"data": [n, c, h, w], "kernel": [kh, kw], "stride": [sh, sw],
            "dilation": [dh, dw], "padding": [top, left, bottom, right]}


def _pool(draw, dtype):
    while True:
        spec = _spatial(draw)
        spec.update(pool_type=_pick(draw, ["max", "avg"]), ceil_mode=bool(draw(4) == 0),
                    count_include_pad=bool(draw(2)))
        if spec["pool_type"] == "avg" or _windows_touch_input(spec):
            return spec


def _windows_touch_input(spec) -> bool:
    """Whether every pooling window has a tap inside the input (a max over padding
    alone has no value that frameworks agree on)."""
    for axis in (0, 1):
        size, k = spec["data"][2 + axis], spec["kernel"][axis]
        s, d = spec["stride"][axis], spec["dilation"][axis]
        lo, hi = spec["padding"][axis], spec["padding"][2 + axis]
        span = size + lo + hi - ((k - 1) * d + 1)
        out = (-(-span // s) if spec["ceil_mode"] else span // s) + 1
        if not all(any(0 <= i * s - lo + t * d < size for t in range(k)) for i in range(out)):
            return False
    return True


def _conv2d(draw, dtype):
    spec = _spatial(draw)
    groups = _pick(draw, [g for g in (1, 2, 3, 4) if spec["data"][1] % g == 0])
    spec.update(groups=groups, out_channels=groups * (1 + draw(3)))
    return spec


def _matmul(draw, dtype):
    m, k, n = 1 + draw(12), 1 + draw(12), 1 + draw(12)
    return {"inputs": [[m, k], [k, n]]}


_DRAW_KIND = {"elementwise": _elementwise, "reduction": _reduction, "pool": _pool,
              "conv2d": _conv2d, "matmul": _matmul}


def random_program(draw) -> dict:
    """A program description drawn with ``draw(n) -> int in [0, n)``."""
    kind, dtype = _pick(draw, KINDS), _pick(draw, DTYPES)
    spec = {"kind": kind, "dtype": dtype, **_DRAW_KIND[kind](draw, dtype)}
    spec["epilogue"] = _pick(draw, EPILOGUES)
    if spec["epilogue"] == "cast":
        # float -> int is left out: values near an integer may round either way
        spec["cast_to"] = _pick(draw, [d for d in ("float32", "float64") if d != dtype])
    return spec


# -- programs: TE and numpy --------------------------------------------------------------
def _te_expression(expr, dtype, leaves):
    """The PrimExpr of ``expr``; ``leaves[k]`` is the value of input ``k``."""
    head = expr[0]
    if head == "in":
        return leaves[expr[1]]
    if head == "const":
        return const(expr[1], dtype)
    args = [_te_expression(e, dtype, leaves) for e in expr[1:]]
    return _TE_OPS[head](*args, dtype)


_TE_OPS = {
    "neg": lambda x, t: -x, "abs": lambda x, t: tir_op.abs(x),
    "relu": lambda x, t: tir_op.max(x, const(0, t)), "tanh": lambda x, t: tir_op.tanh(x),
    "sigmoid": lambda x, t: tir_op.sigmoid(x), "exp": lambda x, t: tir_op.exp(x),
    "add": lambda a, b, t: a + b, "sub": lambda a, b, t: a - b, "mul": lambda a, b, t: a * b,
    "max": lambda a, b, t: tir_op.max(a, b), "min": lambda a, b, t: tir_op.min(a, b),
    "where": lambda a, b, t: tir_op.if_then_else(a < b, a - b, a * b),
    "div": lambda a, b, t: a / (tir_op.abs(b) + const(1, t)),
    "floordiv": lambda a, b, t: tir_op.floordiv(a, b),
    "floormod": lambda a, b, t: tir_op.floormod(a, b),
    "truncdiv": lambda a, b, t: tir_op.truncdiv(a, b),
    "truncmod": lambda a, b, t: tir_op.truncmod(a, b),
}


def _np_expression(expr, dtype, arrays):
    head = expr[0]
    if head == "in":
        return arrays[expr[1]]
    if head == "const":
        return np.asarray(expr[1], dtype)
    args = [_np_expression(e, dtype, arrays) for e in expr[1:]]
    return np.asarray(_NP_OPS[head](*args), dtype)


def _np_truncdiv(a, b):
    return np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))


_NP_OPS = {
    "neg": np.negative, "abs": np.abs, "relu": lambda x: np.maximum(x, 0 * x),
    "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "exp": np.exp,
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum,
    "min": np.minimum, "where": lambda a, b: np.where(a < b, a - b, a * b),
    "div": lambda a, b: a / (np.abs(b) + np.asarray(1, a.dtype)),
    "floordiv": np.floor_divide, "floormod": np.mod, "truncdiv": _np_truncdiv,
    "truncmod": np.fmod,
}


def _te_elementwise(spec, inputs):
    out_shape = list(np.broadcast_shapes(*[tuple(s) for s in spec["inputs"]]))

    def element(*idx):
        leaves = [t[tuple(0 if n == 1 else i for n, i in
                          zip(shape, idx[len(idx) - len(shape):]))]
                  for t, shape in zip(inputs, spec["inputs"])]
        return _te_expression(spec["expr"], spec["dtype"], leaves)
    return te.compute(out_shape, element, name="elementwise")


def _np_elementwise(spec, arrays):
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    return np.broadcast_to(_np_expression(spec["expr"], spec["dtype"], arrays), shape)


def _reduce_axis(spec):
    return None if spec["axis"] is None else tuple(spec["axis"])


def _pool_args(spec):
    return (tuple(spec["kernel"]), tuple(spec["stride"]), tuple(spec["dilation"]),
            tuple(spec["padding"]), spec["pool_type"], spec["ceil_mode"])


def _conv_args(spec):
    return tuple(spec["stride"]), tuple(spec["padding"]), tuple(spec["dilation"])


def _matmul_te(spec, inputs):
    a, b = inputs
    k = te.reduce_axis((0, spec["inputs"][0][1]), name="k")
    shape = (spec["inputs"][0][0], spec["inputs"][1][1])
    return te.compute(shape, lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="matmul")


def _input_shapes(spec) -> list:
    if spec["kind"] == "pool":
        return [spec["data"]]
    if spec["kind"] == "conv2d":
        channels = spec["data"][1] // spec["groups"]
        return [spec["data"], [spec["out_channels"], channels, *spec["kernel"]]]
    return spec["inputs"]


# kind -> (TE of the input tensors, numpy of the input arrays)
_MAIN_OPS = {
    "elementwise": (_te_elementwise, _np_elementwise),
    "reduction": (
        lambda spec, t: getattr(topi, spec["reducer"])(t[0], _reduce_axis(spec),
                                                       spec["keepdims"]),
        lambda spec, a: getattr(np, spec["reducer"])(a[0], _reduce_axis(spec),
                                                     keepdims=spec["keepdims"])),
    "pool": (
        lambda spec, t: topi.nn.pool2d(t[0], *_pool_args(spec), "NCHW",
                                       spec["count_include_pad"]),
        lambda spec, a: topi_testing.pool2d_python(a[0], *_pool_args(spec),
                                                   spec["count_include_pad"])),
    "conv2d": (
        lambda spec, t: topi.nn.conv2d(t[0], t[1], *_conv_args(spec), spec["groups"]),
        lambda spec, a: topi_testing.conv2d_nchw_python(a[0], a[1], *_conv_args(spec),
                                                        spec["groups"])),
    "matmul": (_matmul_te, lambda spec, a: a[0] @ a[1]),
}


def _bias_shape(spec, out_shape) -> list:
    if spec["kind"] in ("pool", "conv2d"):
        return [out_shape[1], 1, 1]
    return [out_shape[-1]] if out_shape else [1]


def make_program(spec):
    """``(PrimFunc, reference)`` of a program description; ``reference(*arrays)`` is the
    numpy output for the input arrays (in the function's parameter order)."""
    dtype = spec["dtype"]
    inputs = [te.placeholder(shape, dtype, name=f"in{k}")
              for k, shape in enumerate(_input_shapes(spec))]
    make_te, make_np = _MAIN_OPS[spec["kind"]]
    out = make_te(spec, inputs)
    epilogue, params = spec["epilogue"], list(inputs)
    if epilogue == "bias":
        bias = te.placeholder(_bias_shape(spec, [int(s) for s in out.shape]), dtype,
                              name="bias")
        params.append(bias)
        out = topi.add(out, bias)
    elif epilogue == "relu":
        out = topi.nn.relu(out)
    elif epilogue == "scale":
        out = te.compute(out.shape, lambda *i: out(*i) * const(_scale(dtype), dtype),
                         name="scale")
    elif epilogue == "cast":
        out = topi.cast(out, spec["cast_to"])
    elif epilogue == "sum":
        out = topi.sum(out, axis=-1 if out.shape else None)

    def reference(*arrays):
        result = np.asarray(make_np(spec, arrays[:len(inputs)]))
        if epilogue == "bias":
            result = result + arrays[-1]
        elif epilogue == "relu":
            result = np.maximum(result, 0)
        elif epilogue == "scale":
            result = result * np.asarray(_scale(dtype), dtype)
        elif epilogue == "sum":
            result = result.sum(axis=-1 if result.ndim else None)
        result = result.astype(dtype)
        return result.astype(spec["cast_to"]) if epilogue == "cast" else result
    return te.create_prim_func(params + [out]), reference


def _scale(dtype: str):
    return 3 if dtype == "int32" else 0.5
