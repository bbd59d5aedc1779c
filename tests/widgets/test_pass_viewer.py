"""PassViewer: the records of a pipeline run, selection, before/after, changed passes."""
import pytest

import mlcbench as tvm
from mlcbench.ir import MLCBenchError
from mlcbench.script import tir as T
from mlcbench.tir.transform import (ConvertBlocksToOpaque, LowerInitBlock, Simplify,
                                    default_lowering_pipeline)
from mlcbench_widgets import PassViewer


@T.prim_func
def init_lowered(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                 C: T.Buffer((128, 128), "float32")):
    # what LowerInitBlock makes of the matmul: the init runs when k is at its start
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            if vk == 0:
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_default_pipeline_is_the_lowering_of_build(matmul):
    viewer = PassViewer(matmul)
    assert viewer.passes == [p.info.name for p in default_lowering_pipeline().passes]
    tvm.ir.assert_structural_equal(viewer.output, tvm.lower(matmul))
    tvm.ir.assert_structural_equal(viewer.records[-1].after, viewer.output)


def test_select_by_index_and_by_name(matmul):
    viewer = PassViewer(matmul)
    assert viewer.select(1).name == "tir.LowerInitBlock" and viewer.index == 1
    tvm.ir.assert_structural_equal(viewer.after["main"], init_lowered)
    assert viewer.records[0].before is matmul
    assert viewer.select("FlattenBuffer") is viewer.records[viewer.passes.index(
        "tir.FlattenBuffer")]
    second = [k for k, name in enumerate(viewer.passes) if name == "tir.Simplify"][1]
    assert viewer.select("tir.Simplify#2") is viewer.records[second]
    assert viewer.select(-1).name == "tir.RemoveNoOp"
    with pytest.raises(MLCBenchError, match=r"no pass 'Tile'; the passes are"):
        viewer.select("Tile")
    with pytest.raises(MLCBenchError, match="no pass at index 40"):
        viewer.select(40)


def test_each_pass_starts_where_the_previous_ended(matmul):
    viewer = PassViewer(matmul)
    for earlier, later in zip(viewer.records, viewer.records[1:]):
        assert later.before is earlier.after


def test_changed_flags_agree_with_structural_equality(matmul):
    viewer = PassViewer(matmul)
    flags = [viewer.changed_at(k) for k in range(len(viewer.passes))]
    assert flags == [not tvm.ir.structural_equal(r.before, r.after) for r in viewer.records]
    assert viewer.select("LowerInitBlock") and viewer.changed
    assert "tir.VerifyCPUCompatible" in viewer.unchanged


def test_diff_and_scripts_of_the_selected_pass(matmul):
    viewer = PassViewer(matmul)
    viewer.select("LowerInitBlock")
    assert viewer.before_script == matmul.script()
    assert "-                with T.init():" in viewer.diff
    assert "+                if vk == 0:" in viewer.diff
    viewer.select("VerifyCPUCompatible")
    assert viewer.diff == ""
    assert viewer.seconds >= 0


def test_any_list_of_passes_and_a_prim_func(matmul):
    @tvm.transform.module_pass(opt_level=0, name="Nothing")
    def nothing(mod, ctx):
        return mod

    viewer = PassViewer(matmul["main"], [nothing, LowerInitBlock(),
                                         tvm.transform.Sequential([Simplify(),
                                                                   ConvertBlocksToOpaque()])])
    assert viewer.passes == ["Nothing", "tir.LowerInitBlock", "tir.Simplify",
                             "tir.ConvertBlocksToOpaque"]
    assert viewer.unchanged[0] == "Nothing"
    with pytest.raises(MLCBenchError, match="expected a Pass, a Sequential or a list"):
        PassViewer(matmul, pipeline="O2")


def test_disabled_passes_of_the_enclosing_context_stay_disabled(matmul):
    with tvm.transform.PassContext(disabled_pass=["tir.Simplify"]):
        viewer = PassViewer(matmul)
    assert "tir.Simplify" not in viewer.passes and "tir.FlattenBuffer" in viewer.passes


def test_slider_dropdown_and_panes(matmul):
    viewer = PassViewer(matmul)
    ui = viewer.widget
    ui.slider.value = 1
    assert viewer.index == 1 and ui.dropdown.value == 1
    assert "tir.LowerInitBlock" in ui.info.value and "changed the IR" in ui.info.value
    assert "before tir.LowerInitBlock" in ui.panes.value
    assert "after tir.LowerInitBlock" in ui.panes.value
    ui.dropdown.value = 0
    assert viewer.index == 0 and ui.slider.value == 0
    assert "changed nothing" in ui.info.value and "no change" in ui.diff_view.value
    viewer.select("FlattenBuffer")
    assert ui.slider.value == viewer.index


def test_unchanged_passes_are_dimmed_in_the_list(matmul):
    viewer = PassViewer(matmul)
    lines = viewer.widget.pass_list.value.split("<div")[2:]
    assert len(lines) == len(viewer.passes)
    for k, line in enumerate(lines):
        assert ("opacity: 0.45" in line) == (not viewer.changed_at(k)), viewer.passes[k]
    assert "font-weight: bold" in lines[0]
