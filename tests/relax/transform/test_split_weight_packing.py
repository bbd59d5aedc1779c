"""SplitWeightPacking and prepack_weights: the packing of a constant weight leaves the
scheduled kernel and is computed once at build time; the kernels still compute what
numpy does; weights that are not constants keep their packing."""
import numpy as np
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import dlight, relax, te, topi
from mlcbench.dlight.cpu.gemv import CONSTANT_PARAMS
from mlcbench.relax import op
from mlcbench.relax.transform.split_weight_packing import prepack_weights, split_packing
from mlcbench.script import tir as T
from mlcbench.target import Target
from mlcbench.tir import stmt as S
from mlcbench.tir.functor import post_order_visit
from mlcbench.topi.testing import conv2d_nchw_python

# The panel width depends on the vector width; name the target so it does not.
TARGET = Target("llvm -mcpu=znver3")


def _blocks(func) -> list:
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, S.Block) else None)
    return found


def _scheduled_dense(m, k, n):
    """The default schedule of a dense whose weight is a constant, as PrepackWeights
    marks it (``CONSTANT_PARAMS``)."""
    x, w = te.placeholder((m, k), name="x"), te.placeholder((n, k), name="w")
    func = te.create_prim_func([x, w, topi.nn.dense(x, w)]).with_attr(CONSTANT_PARAMS, [1])
    mod = tvm.IRModule({"main": func})
    with TARGET:
        return dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(mod)["main"]


def test_split_packing_gives_a_packing_function_and_a_kernel_reading_the_panels():
    func = _scheduled_dense(64, 32, 48)
    pack, kernel = split_packing(func, 1)
    assert [b.name_hint for b in _blocks(pack)] == ["w_global", "root"]
    panels = pack.buffer_map[pack.params[1]]
    assert [int(s.value) for s in panels.shape] == [3, 32, 16]
    assert kernel.buffer_map[kernel.params[1]] is panels
    assert all(b.name_hint != "w_global" for b in _blocks(kernel))
    assert split_packing(func, 0) is None          # x is not packed
    assert split_packing(pack, 0) is None          # nothing after the packing


def _check_pack_then_kernel(pack, kernel, m, k, n, seed):
    """The packing then the kernel, built, compute ``x @ w.T`` for random ``x``, ``w``."""
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal((m, k), "float32"), rng.standard_normal((n, k), "float32")
    built = {name: tvm.build(tvm.IRModule({"main": f.with_attr("global_symbol", "main")}),
                             target=TARGET)["main"] for name, f in
             (("pack", pack), ("kernel", kernel))}
    shape = [int(s.value) for s in pack.buffer_map[pack.params[1]].shape]
    panels, out = np.zeros(shape, "float32"), np.zeros((m, n), "float32")
    built["pack"](w, panels)
    built["kernel"](x, panels, out)
    np.testing.assert_allclose(out, x @ w.T, rtol=1e-4, atol=1e-4)


def test_packing_then_kernel_computes_what_the_original_kernel_computes():
    pack, kernel = split_packing(_scheduled_dense(64, 32, 48), 1)
    _check_pack_then_kernel(pack, kernel, 64, 32, 48, seed=0)


def _root_nests(func) -> list:
    body = func.body.block.body
    return list(body.seq) if isinstance(body, S.SeqStmt) else [body]


def test_a_panel_packed_in_each_task_leaves_with_the_loops_around_it():
    """A dense weight packed a panel per parallel task (dlight's ``pack_in_tasks``): the
    packing function runs the same loops with the copy alone; the kernel keeps the
    loops with the products alone."""
    func = _scheduled_dense(64, 70, 512)
    (nest,) = _root_nests(func)
    assert {"w_global", "T_matmul_NT_update"} <= {b.name_hint for b in _blocks(nest)}
    pack, kernel = split_packing(func, 1)
    # the block read into registers, then stored transposed into the panel
    assert [b.name_hint for b in _blocks(pack)] == ["w_local", "w_global", "root"]
    assert [b.name for b in pack.body.block.alloc_buffers] == ["w_local"]
    assert {b.name for b in kernel.body.block.alloc_buffers} == {"T_matmul_NT_local"}
    (pack_loop,), (kernel_loop,) = _root_nests(pack), _root_nests(kernel)
    assert pack_loop.kind == kernel_loop.kind == S.ForKind.PARALLEL
    assert pack_loop.extent == kernel_loop.extent
    assert all(b.name_hint != "w_global" for b in _blocks(kernel))
    panels = pack.buffer_map[pack.params[1]]
    assert [int(s.value) for s in panels.shape] == [32, 70, 16]
    _check_pack_then_kernel(pack, kernel, 64, 70, 512, seed=4)


@T.prim_func
def _panel_reused_by_each_task(x: T.Buffer((8, 4), "float32"), w: T.Buffer((8, 4), "float32"),
                               y: T.Buffer((8, 8), "float32")):
    panel = T.alloc_buffer((4, 4))
    for j0 in T.parallel(2):
        for k, j1 in T.grid(4, 4):
            with T.block("panel"):
                vj = T.axis.spatial(8, j0 * 4 + j1)
                vk = T.axis.spatial(4, k)
                panel[vk, vj % 4] = w[vj, vk]
        for i, j1, k in T.grid(8, 4, 4):
            with T.block("y"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(8, j0 * 4 + j1)
                vk = T.axis.reduce(4, k)
                with T.init():
                    y[vi, vj] = T.float32(0)
                y[vi, vj] = y[vi, vj] + x[vi, vk] * panel[vk, vj % 4]


def test_a_panel_each_task_overwrites_stays_in_the_kernel():
    """Run ahead of the loop, the second task's copy would overwrite the first's panel
    before the first task's products read it."""
    assert split_packing(_panel_reused_by_each_task, 1) is None


def test_prepacked_dense_packed_in_tasks_matches_numpy():
    rng = np.random.default_rng(5)
    xv, wv = rng.standard_normal((64, 70), "float32"), rng.standard_normal((512, 70), "float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(xv.shape, "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(bb.emit_te(topi.nn.dense, x, relax.const(wv)))
        bb.emit_func_output(gv)
    mod = _prepacked(bb.get())
    assert not _kernels_pack(mod)
    np.testing.assert_allclose(_run(mod, xv), xv @ wv.T, rtol=1e-4, atol=1e-4)


def _dense_module(xv, wv, constant: bool):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(xv.shape, "float32"))
    w = relax.Var("w", relax.TensorStructInfo(wv.shape, "float32"))
    with bb.function("main", [x] if constant else [x, w]):
        with bb.dataflow():
            gv = bb.emit_output(bb.emit_te(topi.nn.dense, x, relax.const(wv) if constant else w))
        bb.emit_func_output(gv)
    return bb.get()


def _has_partial_sums(mod) -> bool:
    return any(b.name_hint.endswith("_rf_update") for gv, f in mod.items()
               if hasattr(f, "buffer_map") for b in _blocks(f))


def test_a_few_row_dense_packs_a_constant_weight_once_and_reads_an_argument_in_place():
    """16 rows: with the weight a constant the kernel is scheduled knowing it (the
    CONSTANT_PARAMS attribute), packs it, and the packing moves to build time; with the
    weight an argument the kernel reads it unpacked in tiles of rows (dlight's gemv), on
    AVX2 and AVX-512 targets."""
    rng = np.random.default_rng(9)
    xv, wv = rng.standard_normal((16, 96), "float32"), rng.standard_normal((256, 96), "float32")
    constant = _prepacked(_dense_module(xv, wv, constant=True))
    kernels = [f for gv, f in constant.items() if gv.name_hint != "main" and
               hasattr(f, "buffer_map") and "_pack" not in gv.name_hint]
    assert any(list((f.attrs or {}).get(CONSTANT_PARAMS) or []) == [1] for f in kernels)
    assert not _kernels_pack(constant) and not _has_partial_sums(constant)
    np.testing.assert_allclose(_run(constant, xv), xv @ wv.T, rtol=1e-4, atol=1e-4)
    argument = _dense_module(xv, wv, constant=False)
    vm = relax.VirtualMachine(relax.build(argument, TARGET), tvm.cpu())
    np.testing.assert_allclose(vm["main"](tvm.nd.array(xv), tvm.nd.array(wv)).numpy(),
                               xv @ wv.T, rtol=1e-4, atol=1e-4)
    zero = relax.get_pipeline("zero")(argument)
    for mcpu, tiles_of_rows in [("znver4", True), ("znver3", True), ("generic", False)]:
        with Target(f"llvm -mcpu={mcpu}"):
            scheduled = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(zero)
        assert _has_partial_sums(scheduled) == tiles_of_rows
        assert _kernels_pack(scheduled) != tiles_of_rows


def _matmul_module(x_shape, weight, bias=None):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(x_shape, "float32"))
    params = [x]
    if weight is None:
        params.append(relax.Var("w", relax.TensorStructInfo((x_shape[1], 40), "float32")))
    with bb.function("main", params):
        with bb.dataflow():
            w = params[1] if weight is None else relax.const(weight)
            out = bb.emit(op.matmul(x, w))
            if bias is not None:
                out = bb.emit(op.add(out, relax.const(bias)))
            gv = bb.emit_output(op.nn.relu(out))
        bb.emit_func_output(gv)
    return bb.get()


def _prepacked(mod):
    return prepack_weights(relax.get_pipeline("zero")(mod), TARGET)


def _run(mod, *arrays, pipeline="vm_lowering"):
    vm = relax.VirtualMachine(relax.build(mod, TARGET, pipeline=pipeline), tvm.cpu())
    return vm["main"](*(tvm.nd.array(a) for a in arrays)).numpy()


def _kernels_pack(mod) -> bool:
    """Whether a kernel of ``mod`` still packs a panel buffer."""
    return any(b.name_hint.endswith("_global")
               for gv, f in mod.items() if gv.name_hint != "main" for b in _blocks(f)
               if hasattr(f, "buffer_map"))


@settings(max_examples=5, deadline=None)
@given(m=st.sampled_from([8, 33, 64]), k=st.sampled_from([16, 70]),
       n=st.sampled_from([32, 40, 100, 1024]), seed=st.integers(0, 2**16))
def test_prepacked_matmul_matches_numpy(m, k, n, seed):
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal((m, k), "float32"), rng.standard_normal((k, n), "float32")
    bias = rng.standard_normal((n,), "float32")
    mod = _prepacked(_matmul_module((m, k), w, bias))
    assert not _kernels_pack(mod)
    assert [gv.name_hint for gv in mod.get_global_vars() if "_pack_" in gv.name_hint] == []
    np.testing.assert_allclose(_run(mod, x), np.maximum(x @ w + bias, 0), rtol=1e-4,
                               atol=1e-4)


def test_prepacked_conv2d_matches_numpy():
    rng = np.random.default_rng(3)
    data = rng.standard_normal((1, 8, 10, 10), "float32")
    weight = rng.standard_normal((32, 8, 3, 3), "float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(data.shape, "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(op.nn.conv2d(x, relax.const(weight), padding=1))
        bb.emit_func_output(gv)
    mod = _prepacked(bb.get())
    assert not _kernels_pack(mod)
    expected = conv2d_nchw_python(data, weight, 1, (1, 1, 1, 1))
    np.testing.assert_allclose(_run(mod, data), expected, rtol=1e-4, atol=1e-4)


def test_weights_that_are_not_constants_keep_their_packing():
    zero = relax.get_pipeline("zero")(_matmul_module((64, 32), None))
    assert prepack_weights(zero, TARGET) is zero
    scheduled = _run(zero, np.ones((64, 32), "float32"), np.ones((32, 40), "float32"))
    np.testing.assert_allclose(scheduled, np.full((64, 40), 32.0), rtol=1e-6)


def test_a_kernel_given_a_constant_by_only_some_calls_is_not_split():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((48, 32), "float32")
    xt, wt = te.placeholder((64, 32), name="x"), te.placeholder((48, 32), name="w")
    bb = relax.BlockBuilder()
    dense = bb.add_func(te.create_prim_func([xt, wt, topi.nn.dense(xt, wt)]), "dense")
    x = relax.Var("x", relax.TensorStructInfo((64, 32), "float32"))
    v = relax.Var("v", relax.TensorStructInfo((48, 32), "float32"))
    out = relax.TensorStructInfo((64, 48), "float32")
    with bb.function("main", [x, v]):
        with bb.dataflow():
            a = bb.emit(relax.call_tir(dense, (x, relax.const(w)), out))
            b = bb.emit(relax.call_tir(dense, (x, v), out))
            gv = bb.emit_output(relax.Tuple([a, b]))
        bb.emit_func_output(gv)
    mod = bb.get()
    assert prepack_weights(mod, TARGET) is mod


def test_the_pass_adds_a_packing_call_that_fold_constant_folds():
    # Rows of 4 KB: packed (shorter rows are read in place, see dlight's packing).
    rng = np.random.default_rng(2)
    w = rng.standard_normal((32, 1024), "float32")
    zero = relax.get_pipeline("zero")(_matmul_module((64, 32), w))
    (gv,) = [gv for gv in zero.get_global_vars() if gv.name_hint != "main"]
    with TARGET:
        zero[gv] = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(
            tvm.IRModule({"k": zero[gv]}))["k"]
    split = relax.transform.SplitWeightPacking()(zero)
    pack = split.get_global_var(f"{gv.name_hint}_pack_1")
    first, second = split["main"].body.blocks[0].bindings
    assert first.value.args[0] == pack and isinstance(first.value.args[1].fields[0], relax.Constant)
    assert second.value.args[0] == gv and second.value.args[1].fields[1] is first.var
    folded = relax.transform.FoldConstant()(split)
    (only,) = folded["main"].body.blocks[0].bindings
    assert only.value.args[0] == gv and isinstance(only.value.args[1].fields[1], relax.Constant)
    x = rng.standard_normal((64, 32), "float32")
    np.testing.assert_allclose(_run(folded, x), np.maximum(x @ w, 0), rtol=1e-4, atol=1e-4)


def _packed_shapes(mod) -> list:
    """The shapes of the panel buffers the kernels of ``mod`` allocate."""
    return [[int(s.value) for s in buf.shape] for gv, f in mod.items()
            if gv.name_hint != "main" and hasattr(f, "buffer_map") for b in _blocks(f)
            for buf in b.alloc_buffers if buf.name.endswith("_global")]


def test_a_dense_of_64_rows_packs_a_constant_weight_once_and_x_for_an_argument():
    """64 rows, 256 columns: a constant weight is packed at build time and the kernel
    packs nothing; a weight passed in is read where it lies while the kernel packs x
    (dlight's ``swap_packed_operand``) on both register files."""
    rng = np.random.default_rng(11)
    xv, wv = rng.standard_normal((64, 96), "float32"), rng.standard_normal((256, 96), "float32")
    constant = _prepacked(_dense_module(xv, wv, constant=True))
    assert not _kernels_pack(constant)
    np.testing.assert_allclose(_run(constant, xv), xv @ wv.T, rtol=1e-4, atol=1e-4)
    argument = _dense_module(xv, wv, constant=False)
    zero = relax.get_pipeline("zero")(argument)
    for mcpu in ("znver3", "znver4"):
        with Target(f"llvm -mcpu={mcpu}"):
            scheduled = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(zero)
        cols = 2 * Target(f"llvm -mcpu={mcpu}").vector_lanes(32)
        assert _packed_shapes(scheduled) == [[64 // cols, 96, cols]], mcpu
    vm = relax.VirtualMachine(relax.build(argument, TARGET), tvm.cpu())
    np.testing.assert_allclose(vm["main"](tvm.nd.array(xv), tvm.nd.array(wv)).numpy(),
                               xv @ wv.T, rtol=1e-4, atol=1e-4)
