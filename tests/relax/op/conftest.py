"""``run_relax(build, *arrays)``: one Relax function of ``build(*params)``, built with
``relax.build`` and run in the VM on numpy ``arrays``."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax


def _run(build, *arrays):
    bb = relax.BlockBuilder()
    params = [relax.Var(f"p{k}", relax.TensorStructInfo(a.shape, str(a.dtype)))
              for k, a in enumerate(arrays)]
    with bb.function("main", params):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(build(*params)))
        bb.emit_func_output(out)
    vm = relax.VirtualMachine(relax.build(bb.get(), "llvm"), tvm.cpu())
    return vm["main"](*(tvm.nd.array(np.ascontiguousarray(a)) for a in arrays)).numpy()


@pytest.fixture(scope="session")
def run_relax():
    return _run


@pytest.fixture(scope="session")
def rng():
    return np.random.default_rng(0)
