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
