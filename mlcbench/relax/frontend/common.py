"""What every frontend shares: weights kept as parameters are handed out the same way."""
from __future__ import annotations


def detach_params(mod):
    """``(mod, {"main": [weights...]})``: the ``params`` attribute that
    ``keep_params_as_input=True`` (torch) or ``keep_params_in_input=True`` (ONNX) leaves
    on each function, moved out, as TVM's ``relax.frontend.detach_params`` does.

    >>> mod, params = detach_params(from_fx(gm, info, keep_params_as_input=True))
    ... # doctest: +SKIP
    >>> vm["main"](x, *params["main"])                                 # doctest: +SKIP
    """
    detached, out = {}, mod.copy()
    for gv, func in mod.functions.items():
        attrs = getattr(func, "attrs", None) or {}
        if "params" in attrs:
            name = gv.name_hint if hasattr(gv, "name_hint") else str(gv)
            detached[name] = list(attrs["params"])
            out[gv] = func.without_attr("params")
    return out, detached
