"""Workloads with numpy references, and sampling programs from design spaces, shared by
the design-space tests (generator, schedule rules, postprocessors, mutators)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

import mlcbench
from mlcbench import IRModule, te, topi
from mlcbench import meta_schedule as ms
from mlcbench.ir.errors import MLCBenchError
from mlcbench.target import Target
from mlcbench.tir import Schedule, Trace

TARGET = Target("llvm --num-cores=2")


def _module(*tensors) -> IRModule:
    return IRModule({"main": te.create_prim_func(list(tensors))})


def matmul(n=16, m=None, k=None):
    m, k = m or n, k or n
    a, b = te.placeholder((n, k), name="A"), te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((n, m), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    return _module(a, b, c), lambda x, y: x @ y


def mm_relu(n=16, m=12, k=8):
    a, b = te.placeholder((n, k), name="A"), te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="k")
    y = te.compute((n, m), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="Y")
    return _module(a, b, topi.nn.relu(y)), lambda x, w: np.maximum(x @ w, 0)


def conv2d(channels=2, filters=2, size=4):
    data = te.placeholder((1, channels, size, size), name="data")
    weight = te.placeholder((filters, channels, 3, 3), name="weight")
    out = topi.nn.conv2d_nchw(data, weight, 1, 1, 1)
    return _module(data, weight, out), _conv2d_reference


def _conv2d_reference(x, w):
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    n, _, h, wd = x.shape
    out = np.zeros((n, w.shape[0], h, wd), dtype=x.dtype)
    for dy in range(3):
        for dx in range(3):
            out += np.einsum("nchw,fc->nfhw", padded[:, :, dy:dy + h, dx:dx + wd], w[:, :, dy, dx])
    return out


def softmax(rows=4, cols=16):
    x = te.placeholder((rows, cols), name="X")
    return _module(x, topi.nn.softmax(x)), _softmax_reference


def _softmax_reference(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(rows=4, cols=16):
    x = te.placeholder((rows, cols), name="X")
    gamma, beta = te.placeholder((cols,), name="gamma"), te.placeholder((cols,), name="beta")
    out = topi.nn.layer_norm(x, gamma, beta, axis=[1])
    return _module(x, gamma, beta, out), _layer_norm_reference


def _layer_norm_reference(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * gamma + beta


WORKLOADS = {"matmul": matmul, "mm_relu": mm_relu, "conv2d": conv2d, "softmax": softmax,
             "layer_norm": layer_norm}


def post_order_apply(seed=0) -> ms.space_generator.PostOrderApply:
    """The default CPU generator, initialized for the 2-core test target."""
    generator = ms.space_generator.PostOrderApply()
    generator._initialize_with_tune_context(_Context(seed))
    return generator


class _Context:
    def __init__(self, seed, mod=None):
        self.target, self.rand_state, self.mod = TARGET, seed, mod


def initialized(obj, mod=None, seed=0):
    """``obj`` after ``_initialize_with_tune_context`` with the test target and ``mod``."""
    obj._initialize_with_tune_context(_Context(seed, mod))
    return obj


def without_decisions(trace: Trace) -> Trace:
    return Trace([replace(inst, decision=None) for inst in trace.insts])


def sample(mod, space: Schedule, seed: int, postprocs) -> Schedule:
    """A program of ``space`` with fresh decisions (drawn with ``seed``), postprocessed."""
    sch = Schedule(mod, seed=seed)
    without_decisions(space.trace).apply_to_schedule(sch, remove_postproc=True)
    assert ms.postproc.apply_postprocs(sch, postprocs), sch.mod.script()
    return sch


def with_tiles(mod, space: Schedule, tiles) -> Schedule:
    """``space`` replayed on ``mod`` with its ``sample_perfect_tile`` decisions replaced
    by ``tiles``, in sampling order."""
    tiles = iter(tiles)
    insts = [replace(i, decision=next(tiles)) if i.kind == "sample_perfect_tile" else i
             for i in space.trace.insts]
    return replay(mod, Trace(insts))


def replay(mod, trace: Trace) -> Schedule:
    sch = Schedule(mod)
    trace.apply_to_schedule(sch)
    return sch


def random_inputs(func, seed=0) -> list:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal([int(s.value) for s in buf.shape]).astype(str(buf.dtype))
            for _, buf in func.buffer_params()]


def check_numeric(sch_mod, reference, rtol=1e-4) -> None:
    """Build ``sch_mod`` and compare its last buffer with ``reference(*inputs)``."""
    func = sch_mod["main"]
    arrays = random_inputs(func)
    lib = mlcbench.build(sch_mod, target="llvm")
    nd = [mlcbench.nd.array(a) for a in arrays]
    lib["main"](*nd)
    want = reference(*arrays[:-1])
    np.testing.assert_allclose(nd[-1].numpy(), want, rtol=rtol, atol=1e-4)


def builds_or_reason(sch_mod) -> str | None:
    try:
        mlcbench.build(sch_mod, target="llvm")
    except MLCBenchError as err:
        return str(err)
    return None


def enclosing_loop_names(mod, block_name, func_name="main") -> list:
    """Names of the loops above block ``block_name``, outermost first."""
    from mlcbench.tir.schedule.ir_utils import find_block
    return [loop.loop_var.name for loop in find_block(mod[func_name], block_name, "test").loops()]


def sampled_trace(mod, seed: int, space_index: int = 0):
    """The full trace (postprocessing included) of a program sampled from a space."""
    generator = post_order_apply(seed)
    spaces = generator.generate_design_space(mod)
    return sample(mod, spaces[space_index % len(spaces)], seed, generator.postprocs).trace


def changed_instructions(old: Trace, new: Trace) -> list:
    """``(old, new)`` instruction pairs that differ in decision or attributes; the two
    traces must otherwise have the same instructions."""
    assert [i.kind for i in old.insts] == [i.kind for i in new.insts]
    return [(a, b) for a, b in zip(old.insts, new.insts)
            if a.decision != b.decision or a.attrs != b.attrs]


def replay_and_postprocess(mod, trace: Trace) -> Schedule:
    """What the search does with a mutated trace: replay up to the postprocessing, then
    run the default postprocessors again."""
    sch = Schedule(mod)
    trace.apply_to_schedule(sch, remove_postproc=True)
    assert ms.postproc.apply_postprocs(sch, post_order_apply(0).postprocs)
    return sch
