"""StaticPlanBlockMemory: dead intermediates hand their storage to later tensors."""
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import relax
from mlcbench.relax.op import builtin
from mlcbench.relax.transform.static_plan_block_memory import plan_function
from mlcbench.script import ir as I, relax as R


@I.ir_module
class Chain:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        a = R.builtin.alloc_tensor(R.shape([4]), dtype="float32", runtime_device_index=0)
        _: R.Object = R.ExternFunc("f")(x, a)
        b = R.builtin.alloc_tensor(R.shape([4]), dtype="float32", runtime_device_index=0)
        _1: R.Object = R.ExternFunc("f")(a, b)
        c = R.builtin.alloc_tensor(R.shape([4]), dtype="float32", runtime_device_index=0)
        _2: R.Object = R.ExternFunc("f")(b, c)
        d = R.builtin.alloc_tensor(R.shape([4]), dtype="float32", runtime_device_index=0)
        _3: R.Object = R.ExternFunc("f")(c, d)
        return d


@I.ir_module
class ChainPlanned:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        storage = R.memory.alloc_storage(R.shape([16]), virtual_device_index=0,
                                         storage_scope="global", dtype="float32")
        a = R.memory.alloc_tensor(storage, R.shape([4]), offset=0, dtype="float32")
        _: R.Object = R.ExternFunc("f")(x, a)
        storage1 = R.memory.alloc_storage(R.shape([16]), virtual_device_index=0,
                                          storage_scope="global", dtype="float32")
        b = R.memory.alloc_tensor(storage1, R.shape([4]), offset=0, dtype="float32")
        _1: R.Object = R.ExternFunc("f")(a, b)
        c = R.memory.alloc_tensor(storage, R.shape([4]), offset=0, dtype="float32")
        _2: R.Object = R.ExternFunc("f")(b, c)
        d = R.builtin.alloc_tensor(R.shape([4]), dtype="float32", runtime_device_index=0)
        _3: R.Object = R.ExternFunc("f")(c, d)
        return d


def test_dead_tensor_storage_is_reused_and_the_result_is_not_planned():
    planned = relax.transform.StaticPlanBlockMemory()(Chain)
    tvm.ir.assert_structural_equal(planned, ChainPlanned)


def test_plan_round_trips_through_text():
    planned = relax.transform.StaticPlanBlockMemory()(Chain)
    tvm.ir.assert_structural_equal(tvm.script.from_source(planned.script()), planned)


def test_estimate_reports_planned_peak_below_the_sum():
    usage = relax.analysis.estimate_memory_usage(relax.transform.StaticPlanBlockMemory()(Chain))
    main = usage["main"]
    assert (main.intermediate_bytes, main.num_intermediates) == (48, 3)
    assert (main.storage_bytes, main.num_storages) == (32, 2)
    assert (main.fresh_bytes, main.num_fresh) == (16, 1)
    assert main.planned_bytes < main.unplanned_bytes
    assert "reduces constant memory size to 75.0%" in str(usage)


def test_estimate_lowers_a_module_still_in_call_tir_form(course_mlp):
    main = relax.analysis.estimate_memory_usage(course_mlp)["main"]
    # relu0 writes lv1 over lv0, which dies there; out is the result and is not planned.
    assert (main.intermediate_bytes, main.storage_bytes, main.fresh_bytes) == (1024, 512, 40)


# -- token choice ------------------------------------------------------------------------

def build_function(steps, returned):
    """A function of ``steps``: (name, shape, dtype, names of the tensors it reads).

    Each step allocates its tensor and fills it by a packed call on what it reads.
    """
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    bb, made = relax.BlockBuilder(), {"x": x}
    with bb.function("main", [x]):
        for name, shape, dtype, reads in steps:
            made[name] = bb.emit(builtin.alloc_tensor(shape, dtype), name)
            bb.emit(relax.Call(relax.ExternFunc("f"), [made[r] for r in reads] + [made[name]]))
        bb.emit_func_output(made[returned])
    return bb.get()["main"]


def storages_of(func):
    """{tensor name: (storage variable, storage bytes)} of a planned function."""
    bindings = [b for block in func.body.blocks for b in block.bindings]

    def op_name(binding):
        return getattr(getattr(binding.value, "op", None), "name", None)

    sizes = {b.var: b.value.args[0].values[0].value for b in bindings
             if op_name(b) == "relax.memory.alloc_storage"}
    return {b.var.name_hint: (b.value.args[0], sizes[b.value.args[0]])
            for b in bindings if op_name(b) == "relax.memory.alloc_tensor"}


def test_exact_size_is_preferred_over_a_larger_free_storage():
    func = plan_function(build_function([
        ("big", (64,), "float32", ["x"]), ("small", (16,), "float32", ["x"]),
        ("keep", (4,), "float32", ["big", "small"]),      # big and small die here
        ("want", (16,), "float32", ["keep"]), ("out", (4,), "float32", ["want"])], "out"))
    storages = storages_of(func)
    assert storages["want"] == storages["small"]


def test_smallest_larger_storage_serves_a_request_without_exact_match():
    func = plan_function(build_function([
        ("big", (64,), "float32", ["x"]), ("mid", (32,), "float32", ["x"]),
        ("keep", (4,), "float32", ["big", "mid"]),
        ("want", (16,), "float32", ["keep"]), ("out", (4,), "float32", ["want"])], "out"))
    storages = storages_of(func)
    assert storages["want"] == storages["mid"]


def test_smaller_storage_grows_instead_of_adding_one():
    func = plan_function(build_function([
        ("a", (4,), "float32", ["x"]), ("keep", (2,), "float32", ["a"]),
        ("b", (32,), "float32", ["keep"]), ("out", (4,), "float32", ["b"])], "out"))
    storages = storages_of(func)
    assert storages["b"][0] is storages["a"][0] and storages["b"][1] == 128


def test_dtypes_do_not_share_storage():
    func = plan_function(build_function([
        ("a", (4,), "float32", ["x"]), ("keep", (2,), "float32", ["a"]),
        ("b", (4,), "int32", ["keep"]), ("out", (4,), "float32", ["b"])], "out"))
    storages = storages_of(func)
    assert storages["b"][0] is not storages["a"][0]


def test_tensors_reaching_the_result_through_tuples_and_aliases_are_not_planned():
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        a = bb.emit(builtin.alloc_tensor((4,), "float32"), "a")
        alias = bb.emit(a, "alias")
        bb.emit_func_output(relax.Tuple([x, alias]))
    func = bb.get()["main"]
    assert plan_function(func) is func


# -- property: no two live tensors share storage ---------------------------------------

@st.composite
def programs(draw):
    count = draw(st.integers(2, 9))
    steps = []
    for k in range(count):
        earlier = [s[0] for s in steps] or ["x"]
        reads = draw(st.lists(st.sampled_from(earlier), min_size=1, max_size=3, unique=True))
        shape = (draw(st.sampled_from([1, 2, 4, 8, 16, 40])),)
        steps.append((f"t{k}", shape, draw(st.sampled_from(["float32", "int32"])), reads))
    return steps


@settings(max_examples=60, deadline=None)
@given(programs())
def test_live_tensors_never_share_a_storage(steps):
    func = plan_function(build_function(steps, steps[-1][0]))
    storages = storages_of(func)
    order = {name: k for k, (name, *_rest) in enumerate(steps)}
    last_use = {name: max([k for k, s in enumerate(steps) if name in s[3]], default=k)
                for name, k in order.items()}
    nbytes = {name: shape[0] * 4 for name, shape, _, _ in steps}
    for name, (storage, size) in storages.items():
        assert size >= nbytes[name]
        for other, (other_storage, _) in storages.items():
            if other != name and storage is other_storage:
                first, second = sorted([name, other], key=order.get)
                assert last_use[first] < order[second], (first, second)
    assert steps[-1][0] not in storages          # the result is never planned
    planned = sum({id(var): size for var, size in storages.values()}.values())
    assert planned <= sum(nbytes[n] for n in storages)
