"""Reference solutions of notebook 1's exercises, checked by the notebook's own checks."""
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.relax.frontend import nn
from helpers.exercise_cells import exercise_namespace

NB = exercise_namespace("01_overview.ipynb")


class DeepMLP(nn.Module):
    def __init__(self):
        self.fc1, self.fc2, self.fc3 = nn.Linear(64, 128), nn.Linear(128, 64), nn.Linear(64, 10)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))


def build_and_run(x, p):
    model = DeepMLP()
    model.load_state_dict({f"fc{i + 1}.{kind}": p[f"{kind[0]}{i}"]
                           for i in range(3) for kind in ("weight", "bias")})
    mod, named = model.export_tvm(spec={"forward": {"x": nn.spec.Tensor(x.shape, "float32")}})
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    return vm["forward"](x, *[value.data for _, value in named]).numpy()


def count_kernels(mod):
    fused = relax.get_pipeline("zero")(mod)
    return sum(isinstance(f, tvm.tir.PrimFunc) for f in fused.functions.values())


def first_pass_without_blocks(kernel):
    from mlcbench_widgets import PassViewer
    viewer = PassViewer(kernel)
    return next(r.name for r in viewer.records if "T.block" not in r.after.script())


def test_exercise_1_reference_solution_passes():
    assert NB["check_exercise_1"](build_and_run) is True


def test_exercise_1_rejects_the_two_layer_model():
    def two_layers(x, p):
        hidden = NB["np"].maximum(x @ p["w0"].T + p["b0"], 0)
        return hidden[:, :10]
    with pytest.raises(AssertionError):
        NB["check_exercise_1"](two_layers)


def test_exercise_2_reference_solution_passes():
    assert NB["check_exercise_2"](count_kernels) is True


def test_exercise_2_rejects_the_count_before_fusion():
    def unfused_count(mod):
        legalized = relax.transform.LegalizeOps()(mod)
        return sum(isinstance(f, tvm.tir.PrimFunc) for f in legalized.functions.values())
    with pytest.raises(AssertionError, match="count_kernels gave"):
        NB["check_exercise_2"](unfused_count)


def test_exercise_3_reference_solution_passes():
    assert NB["check_exercise_3"](first_pass_without_blocks) is True


def test_exercise_3_rejects_the_first_pass():
    with pytest.raises(AssertionError, match="blocks go at"):
        NB["check_exercise_3"](lambda kernel: "tir.LowerInitBlock")


def test_unattempted_exercises_report_so(capsys):
    def todo(*args):
        raise NotImplementedError
    assert not any(NB[f"check_exercise_{k}"](todo) for k in (1, 2, 3))
    assert capsys.readouterr().out.count("not attempted yet") == 3
