"""The command line on ONNX models: compile / run / tune / show, exit codes, messages."""
import numpy as np
import onnx
import pytest

from mlcbench.driver.cli import main
from mlcbench.driver.model_commands import parse_input_shapes
from mlcbench.relay.testing import reference_outputs, tiny_matmul, tiny_mlp


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli")
    onnx.save(tiny_mlp(), path / "mlp.onnx")
    np.savez(path / "x.npz", input=np.full((1, 10), 0.5, "float32"))
    assert main(["compile", str(path / "mlp.onnx"), "-o", str(path / "mlp.tar")]) == 0
    return path


def _expected():
    return reference_outputs(tiny_mlp(), {"input": np.full((1, 10), 0.5, "float32")})[0]


def test_compile_then_run_with_inputs_and_outputs(workdir, capsys):
    out = workdir / "out.npz"
    assert main(["run", str(workdir / "mlp.tar"), "--inputs", str(workdir / "x.npz"),
                 "--outputs", str(out), "--print-time", "--repeat", "2"]) == 0
    printed = capsys.readouterr().out
    assert "mean (ms)" in printed and f"wrote {out}" in printed
    with np.load(out, allow_pickle=False) as saved:
        np.testing.assert_allclose(saved["output_0"], _expected(), rtol=1e-5, atol=1e-5)


def test_run_prints_outputs_and_top_entries(workdir, capsys):
    assert main(["run", str(workdir / "mlp.tar"), "--inputs", str(workdir / "x.npz")]) == 0
    assert "output_0: shape (1, 4), float32" in capsys.readouterr().out
    assert main(["run", str(workdir / "mlp.tar"), "--inputs", str(workdir / "x.npz"),
                 "--print-top", "1"]) == 0
    assert capsys.readouterr().out.strip() == f"class={int(np.argmax(_expected()))} " \
                                              f"score={float(np.max(_expected())):.6g}"


def test_show_prints_relax_and_the_ir_after_a_pass(workdir, capsys):
    assert main(["show", str(workdir / "mlp.onnx")]) == 0
    assert "R.matmul" in capsys.readouterr().out
    assert main(["show", str(workdir / "mlp.onnx"), "--after", "FuseOps"]) == 0
    assert "@T.prim_func" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["run", "{d}/absent.tar"], "no such file"),
    (["run", "{d}/mlp.onnx"], "compile it first: mlcbench compile"),
    (["compile", "{d}/mlp.onnx", "-o", "{d}/m.so"], "compiles to a package (.tar)"),
    (["show", "{d}/mlp.onnx", "--after", "Nope"], "no pass 'Nope' runs; the passes are"),
    (["run", "{d}/mlp.tar", "--inputs", "{d}/absent.npz"], "--inputs: no such file"),
    (["run", "{d}/mlp.tar", "--repeat", "0"], "--repeat and --number must be >= 1"),
    (["compile", "{d}/mlp.onnx", "--input-shapes", "input=(1,10)"], "expected NAME:[D,D,...]"),
    (["tune", "{d}/x.npz", "-o", "{d}/r"], "expected an ONNX model"),
])
def test_usage_errors_exit_2_with_one_line(workdir, capsys, argv, message):
    assert main([a.format(d=workdir) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("mlcbench ")


def test_failures_exit_1_with_one_line(workdir, capsys, tmp_path):
    np.savez(tmp_path / "wrong.npz", input=np.ones((2, 10), "float32"))
    assert main(["run", str(workdir / "mlp.tar"), "--inputs", str(tmp_path / "wrong.npz")]) == 1
    err = capsys.readouterr().err
    assert "has shape (1, 10), found (2, 10)" in err and err.count("\n") == 1
    (tmp_path / "broken.tar").write_bytes(b"not a tar")
    assert main(["run", str(tmp_path / "broken.tar")]) == 1
    assert "is not a package" in capsys.readouterr().err
    (tmp_path / "broken.onnx").write_bytes(b"\x00garbage")
    assert main(["compile", str(tmp_path / "broken.onnx"), "-o", str(tmp_path / "b.tar")]) == 1
    assert "not an ONNX model" in capsys.readouterr().err


def test_a_pickled_npz_is_refused(workdir, tmp_path, capsys):
    np.savez(tmp_path / "evil.npz", input=np.array([object()], dtype=object))
    assert main(["run", str(workdir / "mlp.tar"), "--inputs", str(tmp_path / "evil.npz")]) == 2
    assert "allow_pickle" in capsys.readouterr().err


def test_help_and_bad_options(capsys):
    assert main(["--help"]) == 0
    assert "mlcbench compile resnet50.onnx -o resnet50.tar" in capsys.readouterr().out
    assert main(["run", "--bogus"]) == 2


def test_tune_then_compile_with_the_records(workdir, capsys):
    model = tiny_matmul()           # one kernel: one task, tuned in a few seconds
    onnx.save(model, workdir / "mm.onnx")
    records = workdir / "records"
    assert main(["tune", str(workdir / "mm.onnx"), "--trials", "1", "-o", str(records)]) == 0
    assert f"--tuning-records {records}" in capsys.readouterr().out
    assert (records / "database_tuning_record.json").stat().st_size > 0
    assert main(["compile", str(workdir / "mm.onnx"), "-o", str(workdir / "tuned.tar"),
                 "--tuning-records", str(records)]) == 0
    assert main(["run", str(workdir / "tuned.tar"), "--inputs", str(workdir / "x.npz"),
                 "--outputs", str(workdir / "tuned.npz")]) == 0
    expected = reference_outputs(model, {"input": np.full((1, 10), 0.5, "float32")})[0]
    with np.load(workdir / "tuned.npz", allow_pickle=False) as saved:
        np.testing.assert_allclose(saved["output_0"], expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("text, shapes", [
    ("data:[1,3,224,224]", {"data": (1, 3, 224, 224)}),
    ("a:[1, 4] b:[2]", {"a": (1, 4), "b": (2,)}),
    ("a:[1,4],b:[]", {"a": (1, 4), "b": ()}),
    ("input:0:[1,10]", {"input:0": (1, 10)}),
])
def test_parse_input_shapes(text, shapes):
    assert parse_input_shapes(text) == shapes
