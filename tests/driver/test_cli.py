"""The ``mlcbench`` command line: show, lower, compile and the headless demo."""

import re

import numpy as np
import pytest

from mlcbench.driver.cli import main
from mlcbench.driver.kernels import MM_RELU

HEADER = "from mlcbench.script import ir as I\nfrom mlcbench.script import tir as T\n"


def _write(tmp_path, text):
    path = tmp_path / "kernel.py"
    path.write_text(HEADER + text)
    return path


def test_show_prints_the_canonical_script(tmp_path, capsys):
    assert main(["show", str(_write(tmp_path, MM_RELU))]) == 0
    out = capsys.readouterr().out
    assert "T.reads(A[vi, vk], B[vk, vj])" in out and "@I.ir_module" in out


def test_lower_prints_every_pass(tmp_path, capsys):
    assert main(["lower", str(_write(tmp_path, MM_RELU))]) == 0
    out = capsys.readouterr().out
    assert "After Running Pass: tir.LowerInitBlock" in out
    assert "After Running Pass: tir.FlattenBuffer" in out


def test_compile_writes_a_loadable_library(tmp_path, capsys):
    import mlcbench
    output = tmp_path / "mm_relu.so"
    assert main(["compile", str(_write(tmp_path, MM_RELU)), "-o", str(output)]) == 0
    lib = mlcbench.load_module(str(output))
    a, b = (np.random.rand(128, 128).astype("float32") for _ in range(2))
    c = np.zeros((128, 128), "float32")
    lib["mm_relu"](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4)


def test_a_parse_error_is_reported_not_raised(tmp_path, capsys):
    broken = MM_RELU.replace("T.axis.remap(\"SSR\"", "T.axis.remap(\"SS\"")
    assert main(["show", str(_write(tmp_path, broken))]) == 1
    err = capsys.readouterr().err
    assert "kernel.py:" in err and "error" in err


def test_demo_runs_headless(capsys):
    assert main(["demo", "--size", "128"]) == 0
    out = capsys.readouterr().out
    for step in ("parsed mm_relu", "lowering passes", "matches numpy", "def apply_trace(sch):",
                 "default schedule", "digits MLP (nn.Module -> relax.build"):
        assert step in out
    # One ratio convention: speed against numpy, from interleaved best rounds.
    ratios = re.findall(r"\d+\.\d\dx (?:faster|slower) than numpy|as fast as numpy \(1\.00x\)", out)
    assert len(ratios) == 5 and "time ratio" not in out


COMMANDS = ("demo", "show", "lower", "compile", "run", "tune")


@pytest.mark.parametrize("command", ("",) + COMMANDS)
def test_every_help_reads_as_plain_text_with_an_example(command, capsys):
    """`mlcbench --help` and each command's help: a description, help for every option,
    an example of the command itself, no markup."""
    assert main([command, "--help"] if command else ["--help"]) == 0
    text = capsys.readouterr().out
    assert "examples:\n" in text and "``" not in text
    assert f"  mlcbench {command}" in text.split("examples:\n", 1)[1]
    lines = text.split("options:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    for line, following in zip(lines, lines[1:] + [""]):
        if line.startswith("  -"):
            has_help = re.search(r"\S\s{2,}\S", line.strip()) or following.startswith(" " * 8)
            assert has_help, f"mlcbench {command}: an option without help: {line.strip()}"
