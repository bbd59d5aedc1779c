"""Helpers of the PyTorch frontend tests: run an imported module on the VM, and compare
a ``torch.nn.Module`` with what both frontends make of it.

torch is imported inside the helpers, so collecting this directory never needs it; each
test file skips itself (``pytest.importorskip``) where torch is absent.
"""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax


def run_on_vm(mod, inputs, extra=()):
    """Build ``mod`` for the host and run ``main``; outputs as a list of numpy arrays."""
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
    out = vm["main"](*(tvm.nd.array(np.ascontiguousarray(x)) for x in inputs), *extra)
    if isinstance(out, (list, tuple)):
        return [o.numpy() for o in out]
    return [out.numpy()]


def torch_outputs(model, inputs):
    import torch
    with torch.no_grad():
        out = model(*(torch.from_numpy(x) for x in inputs))
    out = out if isinstance(out, (list, tuple)) else (out,)
    return [o.numpy() for o in out]


def import_both(model, inputs):
    """``{"fx": mod, "export": mod}`` for ``model`` in eval mode on ``inputs``."""
    import torch
    from mlcbench.relax.frontend.torch import from_exported_program, from_fx
    model = model.eval()
    info = [(x.shape, str(x.dtype)) for x in inputs]
    with torch.no_grad():
        fx_mod = from_fx(torch.fx.symbolic_trace(model), info)
        program = torch.export.export(model, tuple(torch.from_numpy(x) for x in inputs))
        ep_mod = from_exported_program(program)
    return {"fx": fx_mod, "export": ep_mod}


def random_inputs(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype("float32") for s in shapes]


def merged(mods: dict):
    """One IRModule holding each module's ``main`` under its key: one build compiles
    the kernels the two frontends share once."""
    out = tvm.IRModule()
    for name, mod in mods.items():
        out[name] = mod["main"].with_attr("global_symbol", name)
    return out


@pytest.fixture
def assert_like_torch():
    """``assert_like_torch(model, inputs, rtol, atol)``: both frontends' modules, built
    and run, give torch's outputs."""
    def check(model, inputs, rtol=1e-5, atol=1e-5):
        expected = torch_outputs(model.eval(), inputs)
        mods = import_both(model, inputs)
        vm = relax.VirtualMachine(relax.build(merged(mods), target="llvm"), tvm.cpu())
        for name in mods:
            got = vm[name](*(tvm.nd.array(np.ascontiguousarray(x)) for x in inputs))
            got = [g.numpy() for g in got] if isinstance(got, (list, tuple)) \
                else [got.numpy()]
            assert len(got) == len(expected), name
            for g, e in zip(got, expected):
                np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=name)
        return expected
    return check
