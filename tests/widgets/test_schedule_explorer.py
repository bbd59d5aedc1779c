"""ScheduleExplorer: the Python API under every click, and the clicks themselves."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import mlcbench as tvm
from mlcbench.script import tir as T
from mlcbench_widgets import HistoryError, ScheduleExplorer
from mlcbench_widgets.measure import KernelRunner
from helpers.schedule_testing import mm_relu_decomposed


@T.prim_func
def split_reorder_vectorize(A: T.Buffer((128, 128), "float32"),
                            B: T.Buffer((128, 128), "float32"),
                            C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j_0, k in T.grid(128, 32, 128):
        for j_1 in T.vectorized(4):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + j_1)
                vk = T.axis.reduce(128, k)
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def replay(explorer, code: str, original):
    """Run exported ``apply_trace`` code on a fresh schedule of ``original``."""
    namespace = {}
    exec(code, namespace)
    sch = tvm.tir.Schedule(original)
    namespace["apply_trace"](sch)
    return sch.mod


# -- the Python API ------------------------------------------------------------------------
def test_primitives_by_printed_names(matmul):
    explorer = ScheduleExplorer(matmul)
    explorer.apply("split", loop="j", factors=[None, 4])
    explorer.apply("reorder", loops=["j_0", "k", "j_1"])
    step = explorer.apply("vectorize", loop="j_1")
    assert step.label == 'vectorize(loop="j_1")' and step.index == 3
    tvm.ir.assert_structural_equal(explorer.mod["main"], split_reorder_vectorize)
    assert [r.name for r in explorer.tree.loops] == ["i", "j_0", "k", "j_1"]
    assert explorer.tree.loop("j_1").kind == "vectorized"


def test_trace_reuses_handles_and_exports_replayable_code(mm_relu):
    explorer = ScheduleExplorer(mm_relu)
    explorer.apply("split", loop="j@Y", factors=[None, 4])
    explorer.apply("reorder", loops=["j_0", "k", "j_1"])
    explorer.apply("reverse_compute_at", block="C", loop="j_0")
    explorer.apply("decompose_reduction", block="Y", loop="k")
    tvm.ir.assert_structural_equal(explorer.mod["mm_relu"], mm_relu_decomposed)
    code = explorer.export()
    assert code.count("get_loops") == 1 and code.count('get_block(name="Y"') == 1
    assert code.splitlines()[-1] == "  b7 = sch.decompose_reduction(block=b0, loop=l3)"
    tvm.ir.assert_structural_equal(replay(explorer, code, mm_relu), explorer.mod)
    # an earlier step exports its own, shorter path
    tvm.ir.assert_structural_equal(replay(explorer, explorer.export(1), mm_relu),
                                   explorer.history[1].state.mod)


def test_renamed_blocks_stay_reachable(mm_relu):
    explorer = ScheduleExplorer(mm_relu)
    explorer.apply("decompose_reduction", block="Y", loop="k")
    assert [b.name for b in explorer.tree.blocks] == ["Y_init", "Y_update", "C"]
    explorer.apply("parallel", loop="i@Y_update")          # any block below qualifies
    explorer.apply("unroll", loop="k")
    assert explorer.tree.loop("i@Y_init").kind == "parallel"
    assert explorer.tree.loop("k").kind == "unroll"
    assert explorer.export().count("get_block") == 1   # Y's handle followed the rename


def test_refused_primitive_changes_nothing(mm_relu):
    explorer = ScheduleExplorer(mm_relu)
    explorer.apply("decompose_reduction", block="Y", loop="k")
    before, count = explorer.current, len(explorer.history)
    with pytest.raises(tvm.tir.ScheduleError, match="apply cache_write before "
                                                    "decompose_reduction"):
        explorer.apply("cache_write", block="Y_update", write_buffer_index=0,
                       storage_scope="local")
    with pytest.raises(tvm.tir.ScheduleError, match="reduce iter var"):
        explorer.apply("vectorize", loop="k")
    assert explorer.current is before and len(explorer.history) == count
    assert "cache_write" not in explorer.export()


def test_bad_arguments_are_schedule_errors(matmul):
    explorer = ScheduleExplorer(matmul)
    with pytest.raises(tvm.tir.ScheduleError, match=r"unknown primitive 'tile'"):
        explorer.apply("tile", loop="i")
    with pytest.raises(tvm.tir.ScheduleError, match=r"missing argument\(s\) \['factors'\]"):
        explorer.apply("split", loop="i")
    with pytest.raises(tvm.tir.ScheduleError, match=r"unknown argument\(s\) \['factor'\]"):
        explorer.apply("split", loop="i", factors=[2, None], factor=2)
    with pytest.raises(tvm.tir.ScheduleError, match="no loop 'q'"):
        explorer.apply("parallel", loop="q")
    assert len(explorer.history) == 1


def test_undo_redo_fork_and_compare(matmul):
    explorer = ScheduleExplorer(matmul)
    explorer.apply("split", loop="j", factors=[None, 4])
    explorer.apply("parallel", loop="i")
    assert explorer.undo().index == 1 and explorer.redo().index == 2
    explorer.fork(1)
    explorer.apply("vectorize", loop="j_1")
    assert [s.index for s in explorer.history.path()] == [0, 1, 3]
    comparison = explorer.compare(2, 3)
    assert "-    for i in T.parallel(128):" in comparison.diff
    assert "+        for j_1 in T.vectorized(4):" in comparison.diff
    assert "+  sch.vectorize(loop=l5)" in comparison.trace_diff
    assert comparison.speedup is None and "not run" in comparison.summary()
    explorer.fork(0)
    with pytest.raises(HistoryError):
        explorer.undo()


def test_schedule_property_is_a_copy(matmul):
    explorer = ScheduleExplorer(matmul)
    sch = explorer.schedule
    sch.parallel(sch.get_loops("C")[0])
    assert explorer.tree.loops[0].kind == "serial"
    assert isinstance(sch, tvm.tir.Schedule)


def test_diff_shows_the_last_step(matmul):
    explorer = ScheduleExplorer(matmul)
    assert explorer.diff() == ""
    explorer.apply("unroll", loop="k")
    assert explorer.diff().splitlines()[:2] == ["--- step 0", "+++ step 1"]
    assert "+        for k in T.unroll(128):" in explorer.diff()


def test_run_checks_against_the_unscheduled_module(mm_relu, peaks):
    explorer = ScheduleExplorer(mm_relu, peaks=peaks)
    explorer.apply("split", loop="j@Y", factors=[None, 8])
    explorer.apply("reorder", loops=["j_0", "k", "j_1"])
    explorer.apply("vectorize", loop="j_1")
    measurement = explorer.run()
    assert measurement.correct and measurement.max_abs_error < 1e-3
    assert measurement.seconds > 0 and measurement.gflops == pytest.approx(
        (2 * 128**3 + 128**2) / measurement.seconds / 1e9)
    assert explorer.current.measurement is measurement
    explorer.run(0)
    assert [s.index for s, _ in explorer.measurements] == [0, 3]
    assert explorer.compare(0, 3).speedup == pytest.approx(
        explorer.history[0].measurement.seconds / measurement.seconds)


@T.prim_func
def matmul_missing_last_k(A: T.Buffer((128, 128), "float32"),
                          B: T.Buffer((128, 128), "float32"),
                          C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j, k in T.grid(128, 128, 127):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_runner_notices_a_different_result(matmul):
    # every buffer is compared with the unscheduled run on the same arguments
    runner = KernelRunner(matmul, "main")
    a, b, _ = runner.arguments()
    np.testing.assert_allclose(runner.reference()[2], a @ b, rtol=1e-4)
    measurement = runner.measure(tvm.IRModule({"main": matmul_missing_last_k}))
    assert not measurement.correct
    assert measurement.max_abs_error == pytest.approx(np.abs(np.outer(a[:, 127], b[127])).max(),
                                                      rel=1e-3)
    assert "DIFFERS" in str(measurement)


def test_func_name_chooses_among_several_functions(matmul, mm_relu):
    both = tvm.IRModule({"main": matmul["main"], "mm_relu": mm_relu["mm_relu"]})
    assert ScheduleExplorer(both).func_name == "main"
    explorer = ScheduleExplorer(both, func_name="mm_relu")
    explorer.apply("parallel", loop="i@C")
    assert 'func_name="mm_relu"' in explorer.export()
    with pytest.raises(tvm.tir.ScheduleError, match="no PrimFunc 'f'"):
        ScheduleExplorer(both, func_name="f")


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from([2, 4, 8])), min_size=1,
                max_size=4))
def test_random_splits_replay_from_the_export(matmul, steps):
    explorer = ScheduleExplorer(matmul)
    for which, factor in steps:
        loops = [r for r in explorer.tree.loops if r.extent % factor == 0 and r.extent > factor]
        if loops:
            explorer.apply("split", loop=loops[which % len(loops)].ref,
                           factors=[None, factor])
    names = [r.ref for r in explorer.tree.loops]
    explorer.apply("reorder", loops=names[::-1][:2])
    tvm.ir.assert_structural_equal(replay(explorer, explorer.export(), matmul), explorer.mod)


# -- the widget ------------------------------------------------------------------------------
def test_clicks_in_the_tree_keep_their_order(matmul):
    ui = ScheduleExplorer(matmul).widget
    ui.tree.value = (2,)
    ui.tree.value = (0, 2)
    assert ui.selection.value == "k, i"
    assert ui.click_primitive("reorder")
    assert [r.name for r in ui.explorer.tree.loops] == ["k", "j", "i"]
    assert ui.selection.value == "" and ui.tree.value == ()   # the tree was rebuilt
    assert "k" in ui.tree.options[0][0]


def test_buttons_apply_primitives_and_update_the_views(matmul):
    explorer = ScheduleExplorer(matmul)
    ui = explorer.widget
    ui.select("j")
    ui.factors.value = "None, 4"
    ui.buttons["split"].click()
    ui.select("j_0", "k", "j_1")
    ui.buttons["reorder"].click()
    ui.select("j_1")
    ui.buttons["vectorize"].click()
    tvm.ir.assert_structural_equal(explorer.mod["main"], split_reorder_vectorize)
    assert "vectorized" in ui.script_view.value       # (pygments splits T.vectorized)
    assert "vectorize" in ui.trace_view.value and "vectorized" in ui.diff_view.value
    assert "step 3" in ui.status.value and ui.message.value == ""
    assert not ui.undo_button.disabled and ui.redo_button.disabled


def test_a_refused_click_shows_the_error_inline(mm_relu):
    explorer = ScheduleExplorer(mm_relu)
    ui = explorer.widget
    ui.select("k")
    assert not ui.click_primitive("vectorize")
    assert "ScheduleError" in ui.message.value and "reduce iter var" in ui.message.value
    assert len(explorer.history) == 1
    ui.select()
    assert not ui.click_primitive("split")
    assert "split needs a loop" in ui.message.value


def test_block_and_loop_from_one_selection(mm_relu):
    explorer = ScheduleExplorer(mm_relu)
    ui = explorer.widget
    ui.select("C", "j@Y")               # a block and a loop: reverse_compute_at(C, j)
    ui.buttons["reverse_compute_at"].click()
    assert explorer.current.label == 'reverse_compute_at(block="C", loop="j@Y", ' \
                                     'preserve_unit_loops=False)'
    ui.select("Y", "k")                 # the loop clicked first still fills `loop`
    ui.buttons["decompose_reduction"].click()
    assert ui.message.value == ""
    assert [b.name for b in explorer.tree.blocks] == ["Y_init", "Y_update", "C"]
    ui.select("A")
    ui.buttons["compute_inline"].click()
    assert "&#x27;A&#x27; is neither a block" in ui.message.value


def test_history_buttons_compare_and_export(matmul, peaks):
    explorer = ScheduleExplorer(matmul, peaks=peaks)
    ui = explorer.widget
    ui.select("i")
    ui.buttons["parallel"].click()
    ui.undo_button.click()
    assert explorer.current.index == 0 and not ui.redo_button.disabled
    ui.redo_button.click()
    assert explorer.current.index == 1
    ui.history_select.value = 0
    ui.goto_button.click()
    ui.select("k")
    ui.buttons["unroll"].click()
    assert ui.history_select.options[-1][0].replace("\u00a0", " ").endswith(
        '2: unroll(loop="k")   (branch from 0)')
    ui.compare_a.value, ui.compare_b.value = 1, 2
    ui.compare_button.click()
    assert "T.unroll" in ui.compare_view.value and "T.parallel" in ui.compare_view.value
    ui.export_button.click()
    assert ui.export_view.value == explorer.export()
    assert "sch.unroll" in ui.export_view.value and "parallel" not in ui.export_view.value


def test_run_button_measures_and_draws_the_roofline(matmul, peaks):
    explorer = ScheduleExplorer(matmul, peaks=peaks)
    ui = explorer.widget
    ui.run_button.click()
    assert "matches the unscheduled function" in ui.status.value
    assert explorer.current.measurement.correct
    assert bytes(ui.roofline_view.value) == b""        # drawn when its tab is opened
    ui.tabs.selected_index = ui.TABS.index("roofline")
    first = bytes(ui.roofline_view.value)
    assert first.startswith(b"\x89PNG")
    ui.run_button.click()                              # the open tab redraws at once
    assert bytes(ui.roofline_view.value) != first


def test_the_widget_follows_the_python_api(matmul):
    explorer = ScheduleExplorer(matmul)
    ui = explorer.widget
    explorer.apply("fuse", loops=["i", "j"])
    labels = [label.replace("\u00a0", " ") for label, _ in ui.tree.options]
    assert labels[0] == "for i_j_fused in 16384"
    assert "step 1" in ui.status.value and "fuse" in ui.trace_view.value
    explorer.undo()
    assert [label for label, _ in ui.tree.options][0].replace("\u00a0", " ") == "for i in 128"


def test_a_measurement_is_the_best_repeat_and_says_when_repeats_disagree():
    from mlcbench_widgets.measure import Measurement
    steady = Measurement(1e-3, None, True, 0.0, 0.1, results=(1.1e-3, 1e-3, 1.05e-3))
    busy = Measurement(1e-3, None, True, 0.0, 0.1, results=(1e-3, 3e-3, 2e-3))
    assert "unsteady" not in str(steady) and str(steady).startswith("1 ms")
    assert "unsteady: the best repeats differ by 100%" in str(busy)
