"""StaticPlanBlockMemory writes an elementwise kernel's output over an input that dies there."""
import numpy as np
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import relax
from mlcbench.driver.models import export_digits_model
from mlcbench.relax.transform.legalize_ops import LegalizeOps
from mlcbench.script import ir as I, relax as R, tir as T


@T.prim_func
def flip(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "flip", "tir.noalias": True})
    for i in range(8):
        with T.block("Y"):
            vi = T.axis.remap("S", [i])
            Y[vi] = X[7 - vi]


@T.prim_func
def relu(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "relu", "tir.noalias": True})
    for i in range(8):
        with T.block("Y"):
            vi = T.axis.remap("S", [i])
            Y[vi] = T.max(X[vi], T.float32(0))


@T.prim_func
def add(X: T.Buffer((8,), "float32"), Z: T.Buffer((8,), "float32"),
        Y: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "add", "tir.noalias": True})
    for i in range(8):
        with T.block("Y"):
            vi = T.axis.remap("S", [i])
            Y[vi] = X[vi] + Z[vi]


def module(main):
    return tvm.IRModule({"flip": flip, "relu": relu, "add": add, "main": main})


@I.ir_module
class FlipRelu:
    @T.prim_func
    def flip(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
        T.func_attr({"global_symbol": "flip", "tir.noalias": True})
        for i in range(8):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[7 - vi]

    @T.prim_func
    def relu(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
        T.func_attr({"global_symbol": "relu", "tir.noalias": True})
        for i in range(8):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = T.max(X[vi], T.float32(0))

    @R.function
    def main(x: R.Tensor((8,), "float32")):
        a = R.builtin.alloc_tensor(R.shape([8]), dtype="float32", runtime_device_index=0)
        _: R.Object = cls.flip(x, a)
        b = R.builtin.alloc_tensor(R.shape([8]), dtype="float32", runtime_device_index=0)
        _1: R.Object = cls.relu(a, b)
        c = R.builtin.alloc_tensor(R.shape([8]), dtype="float32", runtime_device_index=0)
        _2: R.Object = cls.flip(b, c)
        return c


@I.ir_module
class FlipReluPlanned:
    @T.prim_func
    def flip(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
        T.func_attr({"global_symbol": "flip", "tir.noalias": True})
        for i in range(8):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = X[7 - vi]

    @T.prim_func
    def relu(X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
        T.func_attr({"global_symbol": "relu", "tir.noalias": False})
        for i in range(8):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = T.max(X[vi], T.float32(0))

    @R.function
    def main(x: R.Tensor((8,), "float32")):
        storage = R.memory.alloc_storage(R.shape([32]), virtual_device_index=0,
                                         storage_scope="global", dtype="float32")
        a = R.memory.alloc_tensor(storage, R.shape([8]), offset=0, dtype="float32")
        _: R.Object = cls.flip(x, a)
        b = R.memory.alloc_tensor(storage, R.shape([8]), offset=0, dtype="float32")
        _1: R.Object = cls.relu(a, b)
        c = R.builtin.alloc_tensor(R.shape([8]), dtype="float32", runtime_device_index=0)
        _2: R.Object = cls.flip(b, c)
        return c


def test_relu_writes_over_its_dying_input_and_loses_noalias():
    planned = relax.transform.StaticPlanBlockMemory()(FlipRelu)
    tvm.ir.assert_structural_equal(planned, FlipReluPlanned)


def storage_of(mod, func="main"):
    """{tensor name: storage variable} of a planned function."""
    bindings = [b for block in mod[func].body.blocks for b in block.bindings]
    return {b.var.name_hint: b.value.args[0] for b in bindings
            if getattr(b.value, "op", None) == tvm.ir.Op.get("relax.memory.alloc_tensor")}


def plan(steps):
    """Plan a function of ``steps``: (kernel name, names of its inputs, output name)."""
    x = relax.Var("x", relax.TensorStructInfo((8,), "float32"))
    bb, made = relax.BlockBuilder(), {"x": x}
    mod = module(None)
    with bb.function("main", [x]):
        for kernel, reads, name in steps:
            made[name] = bb.emit(relax.op.builtin.alloc_tensor((8,), "float32"), name)
            bb.emit(relax.Call(mod.get_global_var(kernel), [made[r] for r in reads]
                               + [made[name]]))
        bb.emit_func_output(made[steps[-1][2]])
    mod["main"] = bb.get()["main"]
    return storage_of(relax.transform.StaticPlanBlockMemory()(mod))


def test_a_kernel_reading_other_elements_never_writes_over_its_input():
    storages = plan([("relu", ["x"], "a"), ("flip", ["a"], "b"), ("relu", ["b"], "out")])
    assert storages["b"] is not storages["a"]


def test_an_input_still_used_later_is_not_written_over():
    storages = plan([("relu", ["x"], "a"), ("relu", ["a"], "b"), ("add", ["a", "b"], "c"),
                     ("relu", ["c"], "out")])
    assert storages["b"] is not storages["a"]
    assert storages["c"] in (storages["a"], storages["b"])      # add may take either


def test_a_function_parameter_is_never_written_over():
    storages = plan([("relu", ["x"], "a"), ("relu", ["a"], "out")])
    assert list(storages) == ["a"]       # a has a storage of its own; x is the caller's


def test_an_input_passed_twice_is_not_written_over():
    storages = plan([("relu", ["x"], "a"), ("add", ["a", "a"], "b"), ("relu", ["b"], "out")])
    assert storages["b"] is not storages["a"]


def test_unfused_cnn_bias_add_and_relu_write_over_the_conv_output():
    mod, _ = export_digits_model("cnn", 64)
    lowered = relax.get_pipeline("vm_lowering")(LegalizeOps()(mod))
    storages = storage_of(lowered, "forward")
    bindings = [b for block in lowered["forward"].body.blocks for b in block.bindings]
    output_of = {b.value.op.name_hint: b.value.args[-1].name_hint for b in bindings
                 if isinstance(getattr(b.value, "op", None), relax.GlobalVar)}
    conv = storages[output_of["conv2d"]]
    assert storages[output_of["add"]] is conv and storages[output_of["relu"]] is conv
    assert lowered["relu"].attrs["tir.noalias"] is False
    assert lowered["conv2d"].attrs["tir.noalias"]


# -- property: random chains of elementwise and other ops compute what numpy does ----------

OPS = {   # name: (relax op on (latest, earlier value), numpy of the same)
    "relu": (lambda a, b: relax.op.nn.relu(a), lambda a, b: np.maximum(a, 0)),
    "add": (lambda a, b: relax.op.add(a, b), lambda a, b: a + b),
    "bias": (lambda a, b: relax.op.add(a, relax.op.sum(b, axis=[0])), lambda a, b: a + b.sum(0)),
    "flip": (lambda a, b: relax.op.permute_dims(a), lambda a, b: a.T),
    "tanh": (lambda a, b: relax.op.tanh(a), lambda a, b: np.tanh(a)),
    "matmul": (lambda a, b: relax.op.matmul(a, relax.op.permute_dims(b)), lambda a, b: a @ b.T),
    "softmax": (lambda a, b: relax.op.nn.softmax(a),
                lambda a, b: np.exp(a) / np.exp(a).sum(-1, keepdims=True)),
}


@st.composite
def chains(draw):
    side = draw(st.sampled_from([1, 3, 8]))
    steps = [(draw(st.sampled_from(sorted(OPS))), draw(st.integers(0, 5)))
             for _ in range(draw(st.integers(1, 6)))]
    return side, steps


def chain_module(side, steps):
    """Square (side x side) tensors: step k applies its op to the latest value and one
    drawn earlier, which keeps that earlier value alive."""
    x = relax.Var("x", relax.TensorStructInfo((side, side), "float32"))
    bb, values = relax.BlockBuilder(), [x]
    with bb.function("main", [x]):
        with bb.dataflow():
            for name, back in steps:
                earlier = values[-1 - back % len(values)]
                values.append(bb.emit(OPS[name][0](values[-1], earlier)))
            out = bb.emit_output(values[-1])
        bb.emit_func_output(out)
    return bb.get()


@settings(max_examples=12, deadline=None)
@given(chains())
def test_random_chains_compute_what_numpy_computes(chain):
    side, steps = chain
    x = np.random.default_rng(0).uniform(-1, 1, (side, side)).astype("float32")
    values = [x]
    for name, back in steps:
        values.append(OPS[name][1](values[-1], values[-1 - back % len(values)]))
    ex = relax.build(LegalizeOps()(chain_module(side, steps)), "llvm", pipeline="vm_lowering")
    out = relax.VirtualMachine(ex, tvm.cpu())["main"](x)
    np.testing.assert_allclose(out.numpy(), values[-1], rtol=1e-4, atol=1e-4)
