"""FuseTransposeMatmul: ``matmul(x, permute_dims(w))`` becomes one kernel reading ``w``."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench
from mlcbench import relax
from mlcbench.ir.op import Op
from mlcbench.relax.analysis import post_order_visit
from mlcbench.relax.transform.fuse_transpose_matmul import swaps_last_two
from mlcbench.relax.frontend import nn
from mlcbench.script import ir as I, relax as R
from mlcbench.target import Target
from mlcbench.tir import PrimFunc


def _ops(mod, name="main") -> list:
    names = []
    post_order_visit(mod[name], lambda e: names.append(e.op.name)
                     if isinstance(e, relax.Call) and isinstance(e.op, Op) else None)
    return names


def _kernels(mod) -> dict:
    return {gv.name_hint: f for gv, f in mod.items() if isinstance(f, PrimFunc)}


@I.ir_module
class Linear:
    @R.function
    def main(x: R.Tensor((3, 5), "float32"), w: R.Tensor((4, 5), "float32")):
        with R.dataflow():
            wt = R.permute_dims(w)
            gv = R.matmul(x, wt)
            R.output(gv)
        return gv


@I.ir_module
class TransposeAlsoReturned:
    @R.function
    def main(x: R.Tensor((3, 5), "float32"), w: R.Tensor((4, 5), "float32")):
        with R.dataflow():
            wt = R.permute_dims(w, [1, 0])
            lv = R.matmul(x, wt)
            gv = (lv, wt)
            R.output(gv)
        return gv


@I.ir_module
class OtherPermutation:
    @R.function
    def main(x: R.Tensor((2, 3, 5), "float32"), w: R.Tensor((4, 2, 5), "float32")):
        with R.dataflow():
            wt = R.permute_dims(w, [1, 2, 0])
            gv = R.matmul(x, wt)
            R.output(gv)
        return gv


def test_transpose_is_gone_and_the_kernel_reads_the_weight_by_rows():
    after = relax.transform.FuseTransposeMatmul()(Linear)
    assert "relax.permute_dims" not in _ops(after) and "relax.matmul" not in _ops(after)
    (kernel,) = _kernels(after).values()
    script = kernel.script()
    assert "B[v_j, v_k]" in script and "T_transpose" not in script


def test_transpose_read_elsewhere_is_kept():
    after = relax.transform.FuseTransposeMatmul()(TransposeAlsoReturned)
    assert _ops(after).count("relax.permute_dims") == 1
    assert "relax.matmul" not in _ops(after)


def test_other_permutations_are_left_alone():
    after = relax.transform.FuseTransposeMatmul()(OtherPermutation)
    assert _ops(after).count("relax.permute_dims") == 1 and "relax.matmul" in _ops(after)


@pytest.mark.parametrize("axes, ndim, expected", [
    (None, 2, True), ([1, 0], 2, True), ([-1, -2], 2, True), (None, 3, False),
    ([0, 2, 1], 3, True), ([1, 0, 2], 3, False), (None, 1, False),
])
def test_swaps_last_two(axes, ndim, expected):
    assert swaps_last_two(axes, ndim) is expected


class _Net(nn.Module):
    def __init__(self, n_in, hidden, n_out):
        self.fc1 = nn.Linear(n_in, hidden)
        self.fc2 = nn.Linear(hidden, n_out)

    def forward(self, x):
        return self.fc2(nn.ReLU()(self.fc1(x)))


def _run(mod, arrays):
    vm = relax.VirtualMachine(relax.build(mod, Target("llvm")), mlcbench.cpu())
    return vm["forward"](*[mlcbench.nd.array(a) for a in arrays]).numpy()


@settings(max_examples=5, deadline=None)
@given(lead=st.lists(st.integers(1, 5), min_size=1, max_size=2),
       n_in=st.integers(1, 40), hidden=st.integers(1, 40), n_out=st.integers(1, 20))
def test_linear_layers_with_weights_as_arguments_match_numpy(lead, n_in, hidden, n_out):
    rng = np.random.default_rng(n_in * 100 + hidden)
    net = _Net(n_in, hidden, n_out)
    mod, params = net.export_tvm(spec={"forward": {
        "x": nn.spec.Tensor((*lead, n_in), "float32")}})
    built = relax.get_pipeline("zero")(mod)
    assert not any("transpose" in name for name in _kernels(built))
    weights = {name: rng.standard_normal(p.shape).astype("float32") for name, p in params}
    x = rng.standard_normal((*lead, n_in)).astype("float32")
    got = _run(mod, [x, *weights.values()])
    h = np.maximum(x @ weights["fc1.weight"].T + weights["fc1.bias"], 0)
    np.testing.assert_allclose(got, h @ weights["fc2.weight"].T + weights["fc2.bias"],
                               rtol=1e-4, atol=1e-4)


@I.ir_module
class BatchedTransposed:
    @R.function
    def forward(x: R.Tensor((2, 3, 5), "float32"), w: R.Tensor((2, 4, 5), "float32")):
        with R.dataflow():
            wt = R.permute_dims(w, [0, 2, 1])
            gv = R.matmul(x, wt)
            R.output(gv)
        return gv


def test_batched_transpose_matches_numpy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 5)).astype("float32")
    w = rng.standard_normal((2, 4, 5)).astype("float32")
    after = relax.transform.FuseTransposeMatmul()(BatchedTransposed)
    assert "relax.permute_dims" not in _ops(after, "forward")
    np.testing.assert_allclose(_run(BatchedTransposed, [x, w]), x @ w.transpose(0, 2, 1),
                               rtol=1e-4, atol=1e-4)

