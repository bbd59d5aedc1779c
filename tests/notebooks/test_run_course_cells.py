"""notebooks/tools/run_course_cells.py: the course's cells as a learner runs them."""
import importlib.util
import pathlib

import nbformat
import numpy as np
import pytest

from mlcbench.datasets import load_digits, mlp_forward

TOOL = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "tools" / "run_course_cells.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("run_course_cells", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("written, rewritten", [
    ("import tvm", "import mlcbench as tvm"),
    ("import tvm  # the compiler", "import mlcbench as tvm  # the compiler"),
    ("from tvm import relax, te", "from mlcbench import relax, te"),
    ("    from tvm.script import tir as T", "    from mlcbench.script import tir as T"),
    ("import tvm.testing as tt", "import mlcbench.testing as tt"),
    ("import tvmx\nx = 'import tvm'", "import tvmx\nx = 'import tvm'"),
])
def test_tvm_imports_become_mlcbench_imports(tool, written, rewritten):
    assert tool.learner_imports(written) == rewritten


def test_stand_in_weights_compute_the_digits_mlp_on_the_drawn_digit(tool):
    params = tool.stand_in_params()
    assert {k: v.shape for k, v in params.items()} == {
        "w0": (128, 784), "b0": (128,), "w1": (10, 128), "b1": (10,)}
    namespace: dict = {}
    exec(tool.STAND_IN_IMAGE, namespace)
    img = namespace["img"]
    assert img.shape == (1, 28, 28) and namespace["class_names"][3] == "3"
    ours = np.maximum(img.reshape(1, 784) @ params["w0"].T + params["b0"], 0) \
        @ params["w1"].T + params["b1"]
    x_test = load_digits()[2]
    from mlcbench.datasets import load_mlp_params
    expected = mlp_forward(x_test[:1].reshape(1, 64), load_mlp_params())
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-4)


def _notebook(path, sources):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nbformat.write(nb, str(path))
    return path


def test_cells_run_in_order_and_failures_are_reported_per_cell(tool, tmp_path):
    notebook = _notebook(tmp_path / "2_example.ipynb", [
        "!pip install something",
        "from __future__ import annotations\nimport tvm\nfrom tvm.script import tir as T",
        "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n"
        "    for i in range(4):\n        with T.block('A'):\n            vi = T.axis.remap('S', [i])\n"
        "            A[vi] = T.float32(1)\nf",
        "x = 1\nx / 0",
        "class Bad:\n    def __repr__(self):\n        raise ValueError('cannot print')\nBad()",
        "!wget -nc https://example.org/fasionmnist_mlp_params.pkl",
        "import pickle\nparams = pickle.load(open('fasionmnist_mlp_params.pkl', 'rb'))\n"
        "assert params['w0'].shape == (128, 784)",
        "def g(a: NotDefinedAnywhere): pass",   # annotations stay lazy, as in the course
    ])
    results = tool.run_chapter(notebook, verbose=False)
    assert [r["ok"] for r in results] == [True, True, True, False, False, True, True, True]
    assert results[3]["error"] == "line 2: ZeroDivisionError: division by zero"
    assert "ValueError: cannot print" in results[4]["error"]
    assert results[0]["note"].startswith("shell line not run")
    assert "stand-in" in results[5]["note"]
    assert tool.report(2, results, 1.0).startswith("chapter 2: 6/8 cells ran (1 s")


def test_data_download_cell_keeps_its_other_imports(tool):
    src = ("import torchvision\nimport torch\n"
           "test_data = torchvision.datasets.FashionMNIST(root='data', download=True)\n"
           "img, label = next(iter(torch.utils.data.DataLoader(test_data)))")
    code, note = tool.prepare_cell(src)
    assert code.startswith("import torch\n") and "torchvision" not in code
    assert "download" not in code and note.startswith("stand-in")
