"""CombineParallelMatmul: sibling matmuls on one input become one matmul and a split.

Numeric checks evaluate ``main`` without the VM: every parameter is bound to an array
(BindParams) and FoldConstant computes each call with its compiled kernel.
"""
import numpy as np
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import relax
from mlcbench.relax import op
from mlcbench.script import ir as I, relax as R


@I.ir_module
class ThreeBranches:
    @R.function
    def main(x: R.Tensor(("n", 3), "float32"), w0: R.Tensor((3, 4), "float32"),
             w1: R.Tensor((3, 5), "float32"), w2: R.Tensor((3, 2), "float32"),
             b0: R.Tensor((4,), "float32"), b1: R.Tensor((5,), "float32"),
             b2: R.Tensor((2,), "float32")):
        with R.dataflow():
            lv0 = R.matmul(x, w0)
            lv1 = R.add(lv0, b0)
            lv2 = R.nn.relu(lv1)
            lv3 = R.matmul(x, w1)
            lv4 = R.add(b1, lv3)
            lv5 = R.nn.relu(lv4)
            lv6 = R.matmul(x, w2)
            lv7 = R.add(lv6, b2)
            lv8 = R.nn.relu(lv7)
            gv = (lv2, lv5, lv8)
            R.output(gv)
        return gv


@I.ir_module
class ThreeBranchesCombined:
    @R.function
    def main(x: R.Tensor(("n", 3), "float32"), w0: R.Tensor((3, 4), "float32"),
             w1: R.Tensor((3, 5), "float32"), w2: R.Tensor((3, 2), "float32"),
             b0: R.Tensor((4,), "float32"), b1: R.Tensor((5,), "float32"),
             b2: R.Tensor((2,), "float32")):
        with R.dataflow():
            combined_weight = R.concat((w0, w1, w2), axis=1)
            combined_matmul = R.matmul(x, combined_weight)
            combined_bias = R.concat((b0, b1, b2), axis=0)
            combined_add = R.add(combined_matmul, combined_bias)
            combined_relu = R.nn.relu(combined_add)
            combined_split = R.split(combined_relu, [4, 9], axis=1)
            lv2 = combined_split[0]
            lv5 = combined_split[1]
            lv8 = combined_split[2]
            gv = (lv2, lv5, lv8)
            R.output(gv)
        return gv


def test_matmul_bias_and_activation_are_combined():
    after = relax.transform.CombineParallelMatmul()(ThreeBranches)
    tvm.ir.assert_structural_equal(after, ThreeBranchesCombined)
    assert relax.transform.CombineParallelMatmul()(after) is after


@I.ir_module
class DifferentActivations:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w0: R.Tensor((3, 4), "float32"),
             w1: R.Tensor((3, 5), "float32")):
        with R.dataflow():
            lv0 = R.matmul(x, w0)
            lv1 = R.nn.relu(lv0)
            lv2 = R.matmul(x, w1)
            lv3 = R.sigmoid(lv2)
            gv = (lv1, lv3)
            R.output(gv)
        return gv


@I.ir_module
class DifferentActivationsCombined:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), w0: R.Tensor((3, 4), "float32"),
             w1: R.Tensor((3, 5), "float32")):
        with R.dataflow():
            combined_weight = R.concat((w0, w1), axis=1)
            combined_matmul = R.matmul(x, combined_weight)
            combined_split = R.split(combined_matmul, [4], axis=1)
            lv0 = combined_split[0]
            lv2 = combined_split[1]
            lv1 = R.nn.relu(lv0)
            lv3 = R.sigmoid(lv2)
            gv = (lv1, lv3)
            R.output(gv)
        return gv


def test_only_the_common_part_is_combined():
    after = relax.transform.CombineParallelMatmul()(DifferentActivations)
    tvm.ir.assert_structural_equal(after, DifferentActivationsCombined)


@I.ir_module
class ConstantWeights:
    @R.function
    def main(x: R.Tensor((1, 2), "float32")):
        with R.dataflow():
            lv0 = R.matmul(x, R.const([[1.0], [2.0]], "float32"))
            lv1 = R.matmul(x, R.const([[3.0, 4.0], [5.0, 6.0]], "float32"))
            gv = R.add(lv0, lv1)
            R.output(gv)
        return gv


@I.ir_module
class ConstantWeightsCombined:
    @R.function
    def main(x: R.Tensor((1, 2), "float32")):
        with R.dataflow():
            combined_matmul = R.matmul(x, R.const([[1.0, 3.0, 4.0], [2.0, 5.0, 6.0]], "float32"))
            combined_split = R.split(combined_matmul, [1], axis=1)
            lv0 = combined_split[0]
            lv1 = combined_split[1]
            gv = R.add(lv0, lv1)
            R.output(gv)
        return gv


def test_constant_weights_are_concatenated_at_compile_time():
    after = relax.transform.CombineParallelMatmul()(ConstantWeights)
    tvm.ir.assert_structural_equal(after, ConstantWeightsCombined)


@I.ir_module
class NotCombinable:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((2, 3), "float32"),
             w0: R.Tensor((3, 4), "float32"), w1: R.Tensor((3, "m"), "float32"),
             w2: R.Tensor((3, 4), "float32"), p: R.Tensor((4, 3), "float32")):
        with R.dataflow():
            lv0 = R.matmul(x, w0)             # the only matmul of x with a static weight
            lv1 = R.matmul(x, w1)             # symbolic width: cannot be split statically
            lv2 = R.matmul(y, w2)             # reads y, not x
            lv3 = R.add(lv0, lv2)
            lv4 = R.matmul(y, R.permute_dims(p))  # its weight is bound after lv3 reads lv2
            gv = (lv1, lv3, lv4)
            R.output(gv)
        return gv


def test_branches_that_do_not_fit_are_left_alone():
    assert relax.transform.CombineParallelMatmul()(NotCombinable) is NotCombinable


@I.ir_module
class SiblingsReadEachOther:
    @R.function
    def main(x: R.Tensor((4, 4), "float32"), w0: R.Tensor((4, 4), "float32"),
             w1: R.Tensor((4, 4), "float32")):
        with R.dataflow():
            a = R.matmul(x, w0)
            b = R.matmul(x, w1)
            c = R.matmul(x, a)                # a sibling's result as weight: left out
            d = R.add(a, b)                   # adds two siblings: a consumer, not a bias
            gv = (c, d)
            R.output(gv)
        return gv


@I.ir_module
class SiblingsReadEachOtherCombined:
    @R.function
    def main(x: R.Tensor((4, 4), "float32"), w0: R.Tensor((4, 4), "float32"),
             w1: R.Tensor((4, 4), "float32")):
        with R.dataflow():
            combined_weight = R.concat((w0, w1), axis=1)
            combined_matmul = R.matmul(x, combined_weight)
            combined_split = R.split(combined_matmul, [4], axis=1)
            a = combined_split[0]
            b = combined_split[1]
            c = R.matmul(x, a)
            d = R.add(a, b)
            gv = (c, d)
            R.output(gv)
        return gv


def test_sibling_results_read_by_siblings_are_not_merged_into_the_chain():
    after = relax.transform.CombineParallelMatmul()(SiblingsReadEachOther)
    tvm.ir.assert_structural_equal(after, SiblingsReadEachOtherCombined)
    rng = np.random.default_rng(1)
    arrays = {n: rng.standard_normal((4, 4)).astype("float32") for n in ("x", "w0", "w1")}
    x, w0, w1 = arrays["x"], arrays["w0"], arrays["w1"]
    for got, want in zip(evaluate(after, arrays), [x @ (x @ w0), x @ w0 + x @ w1]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def evaluate(mod, arrays: dict):
    """The values ``main`` returns for ``arrays`` (a tuple of numpy arrays)."""
    mod = relax.transform.BindParams("main", arrays)(mod)
    result = relax.transform.FoldConstant()(mod)["main"].body.body
    assert isinstance(result, relax.Tuple), "main did not fold to constants"
    return [field.data.numpy() for field in result.fields]


def test_combined_module_computes_the_same_values():
    rng = np.random.default_rng(0)
    arrays = {p.name_hint: rng.standard_normal(
        p.struct_info.static_shape() or (2, 3)).astype("float32")
        for p in ThreeBranches["main"].params}
    after = relax.transform.CombineParallelMatmul()(ThreeBranches)
    x = arrays["x"]
    expected = [np.maximum(x @ arrays[f"w{k}"] + arrays[f"b{k}"], 0) for k in range(3)]
    for got, want in zip(evaluate(after, arrays), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


ACTIVATIONS = {"relu": (op.nn.relu, lambda v: np.maximum(v, 0)),
               "tanh": (op.tanh, np.tanh), None: (None, None)}


def _branches_module(widths, biased, activations, constant_weights, rng, add_first_two=False):
    x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    weights = [rng.uniform(-1, 1, (3, w)).astype("float32") for w in widths]
    biases = [rng.uniform(-1, 1, (w,)).astype("float32") for w in widths]
    params = {"x": rng.uniform(-1, 1, (2, 3)).astype("float32")}
    weight_vars = [relax.Var(f"w{k}", relax.TensorStructInfo((3, w), "float32"))
                   for k, w in enumerate(widths)]
    if not constant_weights:
        params.update({v.name_hint: w for v, w in zip(weight_vars, weights)})
    bb = relax.BlockBuilder()
    with bb.function("main", [x] + ([] if constant_weights else weight_vars)):
        with bb.dataflow():
            outs = []
            for k in range(len(widths)):
                w = relax.const(weights[k]) if constant_weights else weight_vars[k]
                value = bb.emit(op.matmul(x, w))
                if biased[k]:
                    value = bb.emit(op.add(value, relax.const(biases[k])))
                if activations[k] is not None:
                    value = bb.emit(ACTIVATIONS[activations[k]][0](value))
                outs.append(value)
            if add_first_two:        # a consumer of two siblings, which may look like a bias
                outs = [bb.emit(op.add(outs[0], outs[1]))] + outs[2:]
            gv = bb.emit_output(relax.Tuple(outs))
        bb.emit_func_output(gv)
    expected = []
    for k in range(len(widths)):
        value = params["x"] @ weights[k] + (biases[k] if biased[k] else 0)
        expected.append(ACTIVATIONS[activations[k]][1](value) if activations[k] else value)
    if add_first_two:
        expected = [expected[0] + expected[1]] + expected[2:]
    return bb.get(), params, expected


@settings(max_examples=10, deadline=None)
@given(data=st.data(), count=st.integers(2, 5), constant_weights=st.booleans(),
       add_first_two=st.booleans())
def test_random_sibling_matmuls(data, count, constant_weights, add_first_two):
    widths = data.draw(st.lists(st.integers(1, 4), min_size=count, max_size=count))
    biased = data.draw(st.lists(st.booleans(), min_size=count, max_size=count))
    activations = data.draw(st.lists(st.sampled_from(["relu", "tanh", None]),
                                     min_size=count, max_size=count))
    if add_first_two:   # add(matmul(x, w0), matmul(x, w1)): the add reads two siblings
        widths[1] = widths[0]
        biased[:2], activations[:2] = [False, False], [None, None]
    rng = np.random.default_rng(count)
    mod, params, expected = _branches_module(widths, biased, activations, constant_weights,
                                             rng, add_first_two)
    after = relax.transform.CombineParallelMatmul()(mod)
    matmuls = [b for b in after["main"].body.blocks[0].bindings
               if isinstance(b.value, relax.Call) and b.value.op.name == "relax.matmul"]
    assert len(matmuls) == 1
    assert matmuls[0].value.struct_info.static_shape() == (2, sum(widths))
    for got, want in zip(evaluate(after, params), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
