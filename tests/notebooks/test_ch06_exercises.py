"""Reference solutions of notebook 6's exercises, checked by the notebook's own checks."""
import pytest

pytest.importorskip("torch")
import torch  # noqa: E402

from mlcbench import relax, topi  # noqa: E402
from mlcbench.ir.errors import MLCBenchError  # noqa: E402
from helpers.exercise_cells import exercise_namespace  # noqa: E402

NB = exercise_namespace("06_frameworks.ipynb")


def map_nn_linear_te(bb, node_map, node, nn_mod):
    x = node_map[node.args[0]]
    weight, bias = NB["map_param"](nn_mod.weight), NB["map_param"](nn_mod.bias)
    return bb.emit_te(NB["te_bias_add"], bb.emit_te(topi.nn.dense, x, weight), bias)


def map_nn_relu_te(bb, node_map, node, nn_mod):
    return bb.emit_te(NB["te_relu"], node_map[node.args[0]])


def build_module():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((4, 8), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((8, 16), "float32"))
    b = relax.Var("b", relax.TensorStructInfo((16,), "float32"))
    with bb.function("main", [x, w, b]):
        with bb.dataflow():
            lv = bb.emit_te(NB["te_matmul"], x, w)
            lv1 = bb.emit_te(NB["te_bias_add"], lv, b)
            lv2 = bb.emit_te(NB["te_relu"], lv1)
            gv = bb.emit_output(lv2)
        bb.emit_func_output(gv)
    return bb.get()


def emitter(op):
    return lambda bb, node_map, node: bb.emit(op(*(node_map[a] for a in node.args)))


EXERCISE_3_MAP = {torch.add: emitter(relax.op.add), torch.sigmoid: emitter(relax.op.sigmoid),
                  torch.mul: emitter(relax.op.multiply)}


def test_exercise_1_reference_solution_passes():
    assert NB["check_exercise_1"](map_nn_linear_te, map_nn_relu_te) is True


def test_exercise_1_rejects_high_level_operators():
    def map_linear_op(bb, node_map, node, nn_mod):
        return bb.emit(relax.op.linear(node_map[node.args[0]], NB["map_param"](nn_mod.weight),
                                       NB["map_param"](nn_mod.bias)))
    with pytest.raises(AssertionError, match="expected only R.call_tir"):
        NB["check_exercise_1"](map_linear_op, map_nn_relu_te)


def test_exercise_1_rejects_a_linear_without_bias():
    def no_bias(bb, node_map, node, nn_mod):
        return bb.emit_te(topi.nn.dense, node_map[node.args[0]], NB["map_param"](nn_mod.weight))
    with pytest.raises(AssertionError):
        NB["check_exercise_1"](no_bias, map_nn_relu_te)


def test_exercise_2_reference_solution_passes():
    assert NB["check_exercise_2"](build_module) is True


def test_exercise_2_rejects_a_module_without_the_bias():
    def without_bias():
        bb = relax.BlockBuilder()
        x = relax.Var("x", relax.TensorStructInfo((4, 8), "float32"))
        w = relax.Var("w", relax.TensorStructInfo((8, 16), "float32"))
        with bb.function("main", [x, w]):
            with bb.dataflow():
                gv = bb.emit_output(bb.emit_te(NB["te_relu"], bb.emit_te(NB["te_matmul"], x, w)))
            bb.emit_func_output(gv)
        return bb.get()
    with pytest.raises((AssertionError, MLCBenchError)):
        NB["check_exercise_2"](without_bias)


def test_exercise_3_reference_solution_passes():
    assert NB["check_exercise_3"](EXERCISE_3_MAP) is True


def test_exercise_3_rejects_a_wrong_operator():
    wrong = {**EXERCISE_3_MAP, torch.sigmoid: emitter(relax.op.nn.relu)}
    with pytest.raises(AssertionError):
        NB["check_exercise_3"](wrong)


def test_unattempted_exercises_report_so(capsys):
    def todo(*args):
        raise NotImplementedError
    assert not NB["check_exercise_1"](todo, todo)
    assert not NB["check_exercise_2"](todo)
    assert not NB["check_exercise_3"]({torch.add: todo, torch.sigmoid: todo, torch.mul: todo})
    assert capsys.readouterr().out.count("not attempted yet") == 3
