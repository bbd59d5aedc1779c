"""Model packages (.tar of mod.so, mod.json, mod.params) and kernel libraries as .tar."""
import io
import json
import tarfile

import numpy as np
import pytest

import mlcbench.runtime as rt
from mlcbench.runtime import ndarray as nd
from mlcbench.runtime.package import PackageError, write_package

GRAPH = {"format": "mlcbench.graph", "version": 1, "entry": "main", "target": "llvm",
         "inputs": [{"name": "data", "shape": [16], "dtype": "float32"}],
         "outputs": [{"name": "output_0", "shape": [16], "dtype": "float32"}],
         "params": [{"name": "p0", "shape": [2], "dtype": "float32"}],
         "program": {"format": 1, "functions": {}}}


def _add_one_works(lib):
    a, b = nd.array(np.arange(16, dtype="float32")), nd.empty((16,))
    lib["add_one"](a, b)
    np.testing.assert_allclose(b.numpy(), np.arange(16) + 1)


def test_package_round_trip(kernels, tmp_path):
    params = {"p0": np.array([1.5, -2.0], "float32")}
    path = write_package(tmp_path / "model.tar", json.dumps(GRAPH), kernels, params)
    with tarfile.open(path) as archive:
        assert sorted(archive.getnames()) == ["mod.json", "mod.params", "mod.so"]
    package = rt.load_package(path)
    assert package.metadata == GRAPH
    np.testing.assert_array_equal(package.params["p0"].numpy(), params["p0"])
    _add_one_works(package.lib)
    assert "inputs: data(16,)" in repr(package) and "1 parameter(s)" in repr(package)


def test_a_loaded_package_library_exports_again(kernels, tmp_path):
    package = rt.load_package(write_package(tmp_path / "m.tar", json.dumps(GRAPH), kernels, {}))
    package.lib.export_library(tmp_path / "again.so")
    _add_one_works(rt.load_module(tmp_path / "again.so"))


def test_kernel_library_exports_and_loads_as_tar(kernels, tmp_path):
    kernels.export_library(tmp_path / "lib.tar")
    with tarfile.open(tmp_path / "lib.tar") as archive:
        assert archive.getnames() == ["lib.so"]
    _add_one_works(rt.load_module(tmp_path / "lib.tar"))


def _tar(path, members: dict):
    with tarfile.open(path, "w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_missing_and_non_tar_files_get_one_line_errors(tmp_path):
    with pytest.raises(PackageError, match="no such file"):
        rt.load_package(tmp_path / "absent.tar")
    (tmp_path / "text.tar").write_text("hello")
    with pytest.raises(PackageError, match="is not a package"):
        rt.load_package(tmp_path / "text.tar")


def test_a_package_without_a_member_names_it(tmp_path):
    path = _tar(tmp_path / "partial.tar", {"mod.json": json.dumps(GRAPH).encode()})
    with pytest.raises(PackageError, match=r"has no 'mod.params' \(it has: mod.json\)"):
        rt.load_package(path)


@pytest.mark.parametrize("graph, message", [
    (b"{not json", "not JSON"),
    (json.dumps({**GRAPH, "format": "tvm"}).encode(), "expected a graph of format"),
    (json.dumps({**GRAPH, "version": 99}).encode(), "graph version 99"),
    (json.dumps({k: v for k, v in GRAPH.items() if k != "program"}).encode(), "no 'program'"),
])
def test_a_wrong_graph_is_refused(kernels, tmp_path, graph, message):
    kernels.export_library(tmp_path / "k.so")
    path = _tar(tmp_path / "bad.tar", {"mod.json": graph, "mod.so": (tmp_path / "k.so").read_bytes(),
                                       "mod.params": rt.save_param_dict({})})
    with pytest.raises(PackageError, match=message):
        rt.load_package(path)


def test_members_with_paths_are_never_extracted(kernels, tmp_path):
    kernels.export_library(tmp_path / "k.so")
    path = _tar(tmp_path / "evil.tar", {"../../escape.so": (tmp_path / "k.so").read_bytes(),
                                        "x/../lib.so": b"junk"})
    with pytest.raises(PackageError, match="expected one .so"):
        rt.load_module(path)
    assert not (tmp_path.parent.parent / "escape.so").exists()
