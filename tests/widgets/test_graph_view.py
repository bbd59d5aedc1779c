"""GraphView: before / after fusion, kernel counts, drawings with and without graphviz."""
import sys
import types

import pytest

from mlcbench import relax
from mlcbench.driver.models import export_digits_model
from mlcbench.ir import MLCBenchError
from mlcbench_widgets import GraphView
from mlcbench_widgets import graph_view

T = relax.transform


@pytest.fixture(scope="module")
def mlp():
    mod, _ = export_digits_model("mlp", 1)
    return mod


@pytest.fixture(scope="module")
def view(mlp):
    return GraphView(mlp)


def test_kernel_counts_before_and_after(view):
    counts = view.kernel_counts
    assert set(counts) == {"before", "after"}
    assert counts["before"] > counts["after"] > 0
    assert counts["after"] == view.after["forward"].script().count("R.call_tir(")
    assert "2 fused groups" in repr(view)


def test_given_after_module_is_used(mlp, view):
    fused = T.FuseTIR()(T.FuseOps()(T.AnnotateTIROpPattern()(T.LegalizeOps()(mlp))))
    other = GraphView(mlp, fused)
    assert other.after is fused
    assert other.kernel_counts == view.kernel_counts


def test_edges_are_the_fusion_report(view):
    rows = view.edges()
    assert [(r["producer"], r["consumer"], r["fused"]) for r in rows] == \
        [(e.producer, e.consumer, e.fused) for e in view.report.edges]
    assert any(r["fused"] for r in rows) and not all(r["fused"] for r in rows)
    assert all(r["reason"] for r in rows)


def test_dot_before_has_clusters_and_after_has_fused_kernels(view):
    assert "subgraph cluster_0" in view.dot("before")
    assert "subgraph cluster" not in view.dot("after")
    assert "fused_matmul_add_relu" in view.dot("after")
    with pytest.raises(MLCBenchError, match="expected 'before' or 'after'"):
        view.dot("middle")


def test_falls_back_to_text_without_dot(view, monkeypatch):
    monkeypatch.setattr(graph_view.shutil, "which", lambda name: None)
    assert not graph_view.graphviz_available()
    page = view.html()
    assert "apt-get install graphviz" in page and "pip install graphviz" in page
    assert "+-- group fused_matmul_add_relu" in page
    assert "<table>" in page and view.report.edges[0].reason.split(";")[0] in page
    assert f"{view.kernel_counts['before']} before fusion" in page


def test_graphviz_needs_both_package_and_dot(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", types.ModuleType("graphviz"))
    monkeypatch.setattr(graph_view.shutil, "which", lambda name: None)
    assert not graph_view.graphviz_available()
    monkeypatch.setattr(graph_view.shutil, "which", lambda name: "/usr/bin/dot")
    assert graph_view.graphviz_available()


def test_renders_svg_through_graphviz_when_available(view, monkeypatch):
    sources = []

    class Source:
        def __init__(self, text):
            sources.append(text)

        def pipe(self, format):
            return b"<svg>graph</svg>"

    fake = types.ModuleType("graphviz")
    fake.Source = Source
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    monkeypatch.setattr(graph_view.shutil, "which", lambda name: "/usr/bin/dot")
    assert view.render("before") == "<svg>graph</svg>"
    assert sources == [view.dot("before")]


@pytest.mark.skipif(not graph_view.graphviz_available(),
                    reason="needs graphviz: apt-get install graphviz; pip install graphviz")
def test_real_dot_draws_fused_groups_as_boxes(view):
    before, after = view.render("before"), view.render("after")
    assert before.lstrip().startswith(("<?xml", "<svg", "<!--")) and "</svg>" in before
    assert 'class="cluster"' in before and 'class="cluster"' not in after
    assert "fused_matmul_add_relu" in after and "relu" in before


def test_measure_times_both_and_outputs_agree(view):
    timing = view.measure(number=2)
    assert timing.before_seconds > 0 and timing.after_seconds > 0
    assert timing.speedup == pytest.approx(timing.before_seconds / timing.after_seconds)
    assert timing.max_abs_error < 1e-4
    assert "speedup" in str(timing)


def test_rejects_a_non_module():
    with pytest.raises(MLCBenchError, match="expected an IRModule"):
        GraphView("not a module")


def test_widget_is_html(view, monkeypatch):
    pytest.importorskip("ipywidgets")
    monkeypatch.setattr(graph_view.shutil, "which", lambda name: None)
    assert "fused_matmul1_add1" in view.widget.value


def test_measure_runs_the_unfused_module_unfused(view, monkeypatch):
    """relax.build's default pipeline fuses; the "before" timing must not."""
    kernels = []
    build = graph_view.GraphView._build

    def counting_build(mod, target):
        executable = build(mod, target)
        kernels.append(executable.as_text().count("  kernel "))
        return executable
    monkeypatch.setattr(graph_view.GraphView, "_build", staticmethod(counting_build))
    view.measure(number=1)
    assert kernels == [view.kernel_counts["before"], view.kernel_counts["after"]]
