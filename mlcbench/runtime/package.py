"""Model packages: one ``.tar`` file holding a compiled model, and ``load_package``.

``mlcbench compile model.onnx -o model.tar`` (and ``tvmc.compile``) write a package;
``mlcbench run model.tar`` and ``tvmc.run`` read it. It is the triple the older TVM
tutorials save by hand (``graph, lib, params = relay.build(...)``), in one archive:

============  ==========================================================================
member        contents
============  ==========================================================================
``mod.so``    the kernels: a shared library written by ``Module.export_library``
``mod.json``  the graph (UTF-8 JSON): ``format`` ``"mlcbench.graph"``, ``version`` 1,
              ``entry`` (the function run), ``target``, ``inputs`` / ``outputs`` /
              ``params`` (lists of ``{"name", "shape", "dtype"}``) and ``program``, the
              VM code of the model, whose constants are the ``params`` in order
``mod.params`` the weights: an ``.npz`` archive (see :mod:`.param_dict`)
============  ==========================================================================

Reading a package reads only these three members by name (nothing is extracted to a
path the archive chooses), parses the graph as JSON and the weights with numpy's
``allow_pickle=False``: the archive's data is never evaluated. The library is machine
code and runs when loaded, so load packages you trust, as with any shared library.

>>> package = load_package("model.tar")                      # doctest: +SKIP
>>> package.metadata["inputs"]                               # doctest: +SKIP
[{'name': 'data', 'shape': [1, 3, 224, 224], 'dtype': 'float32'}]

A plain kernel library can be exported as ``.tar`` too (``lib.export_library("lib.tar")``,
an archive with one ``lib.so``); :func:`load_tar_module` loads it back.
"""
from __future__ import annotations

import atexit
import io
import json
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass

from ..ir.errors import RuntimeError_
from .module import Module
from .param_dict import load_param_dict, save_param_dict

GRAPH_FORMAT = "mlcbench.graph"
GRAPH_VERSION = 1
LIB_MEMBER, GRAPH_MEMBER, PARAMS_MEMBER = "mod.so", "mod.json", "mod.params"


class PackageError(RuntimeError_):
    """A package file that cannot be read: missing, not a tar, or a member is wrong."""


@dataclass
class Package:
    """A loaded package: the graph JSON, the kernel library, and the weights."""

    path: str
    graph_json: str
    lib: Module
    params: dict

    def __repr__(self) -> str:
        graph = self.metadata
        inputs = ", ".join(f"{e['name']}{tuple(e['shape'] or ())}" for e in graph["inputs"])
        return (f"Package({self.path!r}, inputs: {inputs}, {len(graph['outputs'])} "
                f"output(s), {len(self.params)} parameter(s), target {graph.get('target')!r})")

    @property
    def metadata(self) -> dict:
        """The parsed graph: entry, target, inputs, outputs, params, program."""
        return json.loads(self.graph_json)


def write_package(path, graph_json: str, lib: Module, params: dict) -> str:
    """Write the package ``path`` (a ``.tar``) from the triple; returns the path."""
    path = os.fspath(path)
    # Checked before writing, so no package is written that load_package would refuse.
    check_graph(json.loads(graph_json), path)
    with tempfile.TemporaryDirectory() as tmp:
        lib_path = os.path.join(tmp, LIB_MEMBER)
        lib.export_library(lib_path)
        with tarfile.open(path, "w") as archive:
            archive.add(lib_path, arcname=LIB_MEMBER)
            _add_bytes(archive, GRAPH_MEMBER, graph_json.encode("utf-8"))
            _add_bytes(archive, PARAMS_MEMBER, save_param_dict(params))
    return path


def load_package(path) -> Package:
    """Read a package written by :func:`write_package` (see the module docstring)."""
    path = os.fspath(path)
    with _open_tar(path) as archive:
        # Undecodable bytes become U+FFFD here; the JSON and graph checks below judge the text.
        graph_text = _member_bytes(archive, GRAPH_MEMBER, path).decode("utf-8", "replace")
        params = load_param_dict(_member_bytes(archive, PARAMS_MEMBER, path))
        lib = _load_library_member(archive, LIB_MEMBER, path)
    try:
        graph = json.loads(graph_text)
    except ValueError as err:
        raise PackageError(f"load_package: {path}: {GRAPH_MEMBER} is not JSON: {err}") from None
    check_graph(graph, path)
    return Package(path, graph_text, lib, params)


def check_graph(graph, where: str) -> None:
    """Refuse a graph that is not a mlcbench graph of a version this code reads."""
    if not isinstance(graph, dict) or graph.get("format") != GRAPH_FORMAT:
        found = graph.get("format") if isinstance(graph, dict) else type(graph).__name__
        raise PackageError(f"{where}: expected a graph of format {GRAPH_FORMAT!r}, found "
                           f"{found!r}")
    if graph.get("version") != GRAPH_VERSION:
        raise PackageError(f"{where}: graph version {graph.get('version')!r}; this mlcbench "
                           f"reads version {GRAPH_VERSION}")
    for key in ("entry", "inputs", "outputs", "params", "program"):
        if key not in graph:
            raise PackageError(f"{where}: the graph has no {key!r} entry")


def export_tar(module: Module, path) -> None:
    """``module.export_library("x.tar")``: an archive holding the library as ``lib.so``."""
    with tempfile.TemporaryDirectory() as tmp:
        lib_path = os.path.join(tmp, "lib.so")
        module.export_library(lib_path)
        with tarfile.open(os.fspath(path), "w") as archive:
            archive.add(lib_path, arcname="lib.so")


def load_tar_module(path) -> Module:
    """Load the one shared library inside a ``.tar`` written by :func:`export_tar`."""
    path = os.fspath(path)
    with _open_tar(path) as archive:
        names = [m.name for m in archive.getmembers() if m.isfile() and m.name.endswith(".so")]
        if len(names) != 1:
            raise PackageError(f"load_module: {path}: expected one .so in the archive, "
                               f"found {names or 'none'}")
        return _load_library_member(archive, names[0], path)


def _open_tar(path: str):
    if not os.path.isfile(path):
        raise PackageError(f"no such file: {path}")
    try:
        return tarfile.open(path, "r")
    except tarfile.TarError as err:
        reason = str(err).splitlines()[0].rstrip(":")
        raise PackageError(f"{path} is not a package (a .tar archive): {reason}") from None


def _member_bytes(archive, name: str, path: str) -> bytes:
    try:
        member = archive.getmember(name)
    except KeyError:
        raise PackageError(f"{path}: the package has no {name!r} (it has: "
                           f"{', '.join(archive.getnames()) or 'nothing'})") from None
    handle = archive.extractfile(member) if member.isfile() else None
    if handle is None:
        raise PackageError(f"{path}: {name!r} is not a regular file")
    return handle.read()


def _load_library_member(archive, name: str, path: str) -> Module:
    from .library import load_module
    data = _member_bytes(archive, name, path)
    # The library keeps its file for the life of the process, so that the loaded Module
    # can be exported again (export copies its library file); removed at exit.
    tmp = tempfile.mkdtemp(prefix="mlcbench-package-")
    atexit.register(shutil.rmtree, tmp, True)
    lib_path = os.path.join(tmp, os.path.basename(name))
    with open(lib_path, "wb") as handle:
        handle.write(data)
    return load_module(lib_path)


def _add_bytes(archive, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    # tarfile reads exactly size bytes from the stream: it must be set first.
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


__all__ = ["Package", "PackageError", "export_tar", "load_package", "load_tar_module",
           "write_package"]
