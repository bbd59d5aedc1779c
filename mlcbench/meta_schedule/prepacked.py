"""Measure a kernel of a model as the model runs it: with its constant weight packed once.

``relax.build`` packs a model's constant weights at build time (``PrepackWeights``): a
scheduled kernel that copies a weight into panels at its head is split into that packing,
run once, and the rest, which reads the packed weight. A tuning task of the same kernel
measured whole would pay the packing on every call: the default convolution schedules of
ResNet-50 pack their weights, so they were measured slower than candidates that read the
weight in place, and the tuned model ran slower than the untuned one (48.9 ms against
41.2 on a 2-core Zen 4 host, 600 trials).

So a task knows which of its kernel's parameters the model passes constants for
(``TuneContext.constant_params``), and each candidate is built as the model would run
it::

    mod = split_for_measurement(candidate.mod, (1,))
    # mod["main"]          the kernel, reading the packed weight where the weight was
    # mod["main_prepack"]  the packing: (weight, packed weight)

The runner's worker (:func:`prepacked_arguments`) fills the arguments of the unsplit
kernel as usual, packs the weight with ``main_prepack`` once, and times ``main`` alone;
the outputs are compared with the reference's as before. A candidate whose packing does
not split (or a task without constants) is built and measured whole, as the model will
run it too.
"""
from __future__ import annotations

from ..ir.module import IRModule
from ..tir.function import PrimFunc

__all__ = ["PREPACK_FUNCTION", "measured_module", "prepacked_arguments",
           "split_for_measurement"]

# The packing function's name in a candidate's library.
PREPACK_FUNCTION = "main_prepack"


def measured_module(context, mod: IRModule) -> IRModule:
    """What a candidate ``mod`` of the task ``context`` is built as: split when the task
    runs on a CPU and its model passes constants (:func:`split_for_measurement`)."""
    target = context.target
    if target is None or not target.is_cpu:
        return mod
    return split_for_measurement(mod, context.constant_params)


def split_for_measurement(mod: IRModule, constant_params) -> IRModule:
    """``mod`` (one scheduled kernel, ``main``) with the packing of its first packed
    constant parameter split off into ``main_prepack``; ``mod`` itself when no
    parameter of ``constant_params`` is packed at the top of the kernel."""
    funcs = [(gv, f) for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
    if not constant_params or len(funcs) != 1:
        return mod
    # Here, not at the top: the runner's workers import this module for
    # prepacked_arguments alone, and need not load the graph IR's passes.
    from ..relax.transform.split_weight_packing import first_split
    (gv, func), = funcs
    # The parameter the model's build splits off.
    found = first_split(func, constant_params)
    if found is None:
        return mod
    _, pack, kernel = found
    symbol = func.attrs.get("global_symbol", gv.name_hint)
    return IRModule({gv.name_hint: kernel.with_attr("global_symbol", symbol),
                     PREPACK_FUNCTION: pack.with_attr("global_symbol", PREPACK_FUNCTION)})


def prepacked_arguments(lib, func, args):
    """The arguments ``func`` (a candidate's kernel in ``lib``) is called with: ``args``
    themselves, or, when ``lib`` holds a packing, ``args`` with the weight replaced by
    its packed copy (packed here, once). ``args`` stay those of the unsplit kernel, so
    the outputs among them compare with the reference's."""
    if PREPACK_FUNCTION not in lib.function_names:
        return args
    from ..runtime import ndarray as nd
    pack = lib[PREPACK_FUNCTION]
    packed = pack.spec.params[1]          # (weight, packed weight)
    names = [p.name for p in func.spec.params]
    # The kernel reads the packed buffer at the position the weight had.
    position = names.index(packed.name)
    buffer = nd.empty(tuple(int(d) for d in packed.shape), packed.dtype)
    pack(args[position], buffer)
    return [buffer if n == position else a for n, a in enumerate(args)]
