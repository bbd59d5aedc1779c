import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mlcbench.runtime as rt
from mlcbench.ir.errors import RuntimeError_
from mlcbench.runtime import METADATA_SYMBOL
from mlcbench.runtime import ndarray as nd


def _check_loaded(loaded):
    a, b = nd.array(np.arange(16, dtype="float32")), nd.empty((16,))
    loaded["add_one"](a, b)
    np.testing.assert_allclose(b.numpy(), np.arange(16) + 1)
    b8 = nd.empty((8,))
    loaded["axpb"](a.copyto(rt.cpu()).numpy()[:8].copy(), b8, 2.0, 1)
    np.testing.assert_allclose(b8.numpy(), np.arange(8) * 2 + 1)
    with pytest.raises(ValueError, match="dim 0 is n=16"):
        loaded["axpb"](a, b8, 2.0, 1)


@pytest.mark.parametrize("pointer_metadata", [False, True])
def test_export_and_load_round_trip(make_module, tmp_path, pointer_metadata):
    path = tmp_path / f"kernels_{pointer_metadata}.so"
    make_module(pointer_metadata=pointer_metadata).export_library(path)
    loaded = rt.load_module(path)
    assert loaded.type_key == "library" and loaded.library_path == str(path)
    assert loaded.kernel_specs == make_module().kernel_specs
    _check_loaded(loaded)


def test_loaded_library_works_in_a_fresh_process(kernels, tmp_path):
    path = tmp_path / "fresh.so"
    kernels.export_library(str(path))
    script = textwrap.dedent(f"""
        import numpy as np, mlcbench.runtime as rt
        lib = rt.load_module({str(path)!r})
        a = rt.ndarray.array(np.ones(16, "float32")); b = rt.ndarray.empty((16,))
        lib["add_one"](a, b)
        print(b.numpy().sum())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == 32.0


def test_export_object_file(kernels, tmp_path):
    path = tmp_path / "kernels.o"
    kernels.export_library(path)
    assert path.read_bytes()[:4] == b"\x7fELF"


def test_loaded_module_reexports_as_copy(kernels, tmp_path):
    kernels.export_library(tmp_path / "a.so")
    loaded = rt.load_module(tmp_path / "a.so")
    loaded.export_library(tmp_path / "b.so")
    assert (tmp_path / "b.so").read_bytes() == (tmp_path / "a.so").read_bytes()
    with pytest.raises(RuntimeError_, match="no source"):
        loaded.get_source()


def test_custom_fcompile_receives_object(kernels, tmp_path):
    seen = []
    kernels.export_library(tmp_path / "x.so", fcompile=lambda out, objs: seen.append((out, objs)))
    assert seen[0][0] == str(tmp_path / "x.so") and seen[0][1][0].endswith(".o")


def test_export_without_metadata_refused(make_module, tmp_path):
    with pytest.raises(RuntimeError_, match=METADATA_SYMBOL):
        make_module(with_metadata=False).export_library(tmp_path / "x.so")


def test_export_without_compiler_says_install_gcc(kernels, tmp_path, monkeypatch):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(RuntimeError_, match="apt-get install gcc"):
        kernels.export_library(tmp_path / "x.so")
    monkeypatch.delenv("CC")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError_, match="no C compiler found.*apt-get install gcc"):
        kernels.export_library(tmp_path / "x.so")


def test_link_failure_shows_compiler_output(kernels, tmp_path):
    with pytest.raises(RuntimeError_, match="linking failed"):
        kernels.export_library(tmp_path / "x.so", options=["-lno_such_library_anywhere"])


def test_export_module_without_artifact_refused(tmp_path):
    with pytest.raises(RuntimeError_, match="no compiled object"):
        rt.Module({}).export_library(tmp_path / "x.so")


def test_load_missing_file(tmp_path):
    with pytest.raises(RuntimeError_, match="no such file"):
        rt.load_module(tmp_path / "missing.so")


def test_load_non_library(tmp_path):
    path = tmp_path / "text.so"
    path.write_text("not an ELF file")
    with pytest.raises(RuntimeError_, match="cannot load"):
        rt.load_module(path)


def test_load_library_without_metadata(tmp_path):
    source = tmp_path / "plain.c"
    source.write_text("int plain(void) { return 0; }\n")
    path = tmp_path / "plain.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(path), str(source)], check=True)
    with pytest.raises(RuntimeError_, match=f"no {METADATA_SYMBOL} symbol"):
        rt.load_module(path)
    assert os.path.exists(path)
