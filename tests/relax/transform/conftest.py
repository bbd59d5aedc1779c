"""Fixtures for the Relax pass tests.

``run_kernels(mod, *arrays)`` runs ``mod["main"]`` without the VM: it builds the
module's PrimFuncs with ``mlcbench.build`` and walks main's bindings, calling each
``call_tir`` kernel in order (and the Relax functions main calls, such as FuseOps'
primitive functions). It returns ``(result as numpy, number of kernel calls)``;
``lib=`` gives an already built library holding the kernels.
"""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir.op import Op
from mlcbench.tir import PrimFunc


class _KernelRunner:
    def __init__(self, mod, lib=None):
        self.mod = mod
        self.lib = lib if lib is not None else tvm.build(mod)
        self.calls = 0

    def function(self, func, args):
        env = dict(zip(func.params, args))
        for block in func.body.blocks:
            for binding in block.bindings:
                env[binding.var] = self.value(binding.value, env)
        return self.value(func.body.body, env)

    def value(self, expr, env):
        if isinstance(expr, relax.Var):
            return env[expr]
        if isinstance(expr, relax.Constant):
            return expr.data
        if isinstance(expr, relax.Tuple):
            return tuple(self.value(f, env) for f in expr.fields)
        if isinstance(expr, relax.TupleGetItem):
            return self.value(expr.tuple_value, env)[expr.index]
        if isinstance(expr, relax.Call) and isinstance(expr.op, Op):
            assert expr.op.name == "relax.call_tir", f"cannot run {expr.op.name}"
            return self.call_tir(expr, env)
        if isinstance(expr, relax.Call):
            return self.function(self.mod[expr.op], [self.value(a, env) for a in expr.args])
        raise AssertionError(f"cannot run {type(expr).__name__}")

    def call_tir(self, call, env):
        gvar, packed = call.args[0], call.args[1]
        inputs = self.value(packed, env)
        inputs = inputs if isinstance(inputs, tuple) else (inputs,)
        sinfo = call.sinfo_args[0]
        fields = sinfo.fields if isinstance(sinfo, relax.TupleStructInfo) else [sinfo]
        outputs = [tvm.nd.empty(s.static_shape(), s.dtype) for s in fields]
        func = self.mod[gvar]
        assert isinstance(func, PrimFunc)
        self.lib[func.attrs.get("global_symbol") or gvar.name_hint](*inputs, *outputs)
        self.calls += 1
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _to_numpy(value):
    if isinstance(value, tuple):
        return tuple(_to_numpy(v) for v in value)
    return value.numpy()


@pytest.fixture
def run_kernels():
    def run(mod, *arrays, lib=None):
        runner = _KernelRunner(mod, lib)
        result = runner.function(mod["main"], [tvm.nd.array(np.asarray(a)) for a in arrays])
        return _to_numpy(result), runner.calls
    return run
