"""graph_model: the Relax dataflow graph as plain data, annotated by the fusion report."""
import pytest

from mlcbench import relax
from mlcbench.driver.models import export_digits_model
from mlcbench.ir import MLCBenchError
from mlcbench.script import ir as I, relax as R
from mlcbench_widgets.graph_model import build_graph, main_function_name, to_dot, to_text

T = relax.transform


@I.ir_module
class Chain:
    @R.function
    def main(x: R.Tensor((4, 8), "float32"), w: R.Tensor((8, 8), "float32"),
             b: R.Tensor((8,), "float32")) -> R.Tensor((4, 8), "float32"):
        with R.dataflow():
            lv = R.matmul(x, w)
            lv1 = R.add(lv, b)
            lv2 = R.nn.relu(lv1)
            lv3 = R.exp(lv)
            gv = R.add(lv2, lv3)
            R.output(gv)
        return gv


def annotated(mod):
    return T.AnnotateTIROpPattern()(T.LegalizeOps()(mod))


@pytest.fixture(scope="module")
def mlp():
    mod, _ = export_digits_model("mlp", 1)
    return annotated(mod)


def test_chain_nodes_and_edges_follow_the_bindings():
    graph = build_graph(annotated(Chain))
    assert [n.name for n in graph.nodes] == ["x", "w", "b", "lv", "lv1", "lv2", "lv3", "gv"]
    assert [n.name for n in graph.nodes if n.is_input] == ["x", "w", "b"]
    assert {(e.src, e.dst) for e in graph.edges} == {
        ("x", "lv"), ("w", "lv"), ("lv", "lv1"), ("b", "lv1"), ("lv1", "lv2"),
        ("lv", "lv3"), ("lv2", "gv"), ("lv3", "gv")}
    patterns = {n.name: n.pattern for n in graph.bindings}
    assert patterns["lv"] == "out_ewise_fusable" and patterns["lv2"] == "elemwise"
    assert graph.kernel_count == 5
    assert all(e.fused is None for e in graph.edges)      # no report given


def test_unlegalized_module_has_ops_and_no_kernels():
    graph = build_graph(Chain)
    assert [n.op for n in graph.bindings] == ["matmul", "add", "nn.relu", "exp", "add"]
    assert graph.kernel_count == 0


def test_mlp_edges_carry_the_fusion_report(mlp):
    report = T.fusion_report(mlp)
    graph = build_graph(mlp, report=report)
    bindings = {n.name for n in graph.bindings}
    inner = {(e.src, e.dst): e for e in graph.edges if e.src in bindings}
    assert set(inner) == {(r.producer, r.consumer) for r in report.edges}
    for record in report.edges:
        edge = inner[(record.producer, record.consumer)]
        assert (edge.fused, edge.reason, edge.rule) == (record.fused, record.reason, record.rule)
        assert edge.reason
    assert [(g.name, g.nodes) for g in graph.groups] == \
        [(g.name, tuple(g.bindings)) for g in report.groups]
    assert len(graph.groups) == 2


def test_names_are_the_printed_ones(mlp):
    graph = build_graph(mlp)
    names = [n.name for n in graph.nodes]
    assert len(names) == len(set(names))                  # matmul, matmul1 ...
    script = mlp.script()
    for name in names:
        assert f"{name}: R.Tensor" in script


def test_kernel_count_drops_after_fusion(mlp):
    fused = T.FuseTIR()(T.FuseOps()(mlp))
    before, after = build_graph(mlp), build_graph(fused)
    assert before.kernel_count > after.kernel_count
    assert after.kernel_count == fused["forward"].script().count("R.call_tir(")
    assert {n.pattern for n in after.bindings if n.op.startswith("fused_")} == {"fused"}


def test_dot_has_one_cluster_per_group(mlp):
    graph = build_graph(mlp, report=T.fusion_report(mlp))
    dot = to_dot(graph, "before")
    assert dot.startswith('digraph "before" {') and dot.rstrip().endswith("}")
    for index, group in enumerate(graph.groups):
        cluster = dot.split(f"subgraph cluster_{index} {{")[1].split("  }")[0]
        assert f'label="{group.name}"' in cluster
        for member in group.nodes:
            assert f'"{member}" [label=' in cluster
    assert "style=bold" in dot and "style=dashed" in dot
    assert "tooltip=" in dot


def test_text_has_groups_as_sections_and_reasons(mlp):
    report = T.fusion_report(mlp)
    text = to_text(build_graph(mlp, report=report), "before")
    for group in report.groups:
        assert f"+-- group {group.name} ({len(group.bindings)} bindings)" in text
    for record in report.edges:
        assert record.reason in text


def test_main_function_name():
    assert main_function_name(Chain) == "main"
    with pytest.raises(MLCBenchError, match="expected a module with a Relax function"):
        main_function_name(I.ir_module(type("Empty", (), {})))
