"""TVMC's Python API: load, compile, run and tune an ONNX model in four calls.

::

    from mlcbench.driver import tvmc

    model = tvmc.load("my_model.onnx")                       # Step 1: load
    package = tvmc.compile(model, target="llvm")             # Step 2: compile
    result = tvmc.run(package, inputs={"input": x}, device="cpu")
    result.outputs                                           # {"output_0": array, ...}
    records = tvmc.tune(model, target="llvm", enable_autoscheduler=True,
                        tuning_records="records", trials=64) # Step 1.5: tune
    package = tvmc.compile(model, target="llvm", tuning_records=records)

The ``mlcbench compile / run / tune / show`` command line calls these functions. A
package is the ``.tar`` of :mod:`mlcbench.runtime.package`. Tuning records are a
MetaSchedule database directory (``enable_autoscheduler=True``: template-free search,
TVM's auto-scheduler in spirit) or an AutoTVM log file (templates, the default as in
TVM); ``compile`` tells them apart by whether the path is a directory.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

import numpy as np

from ..ir.errors import MLCBenchError
from ..ir.transform import PassContext


class TVMCException(MLCBenchError):
    """A model, package, input or record file the TVMC API cannot use."""


@dataclass
class TVMCModel:
    """An imported model: the Relax module and its weights (``relay.frontend`` style)."""

    mod: object
    params: dict
    name: str = "model"
    path: str | None = None

    def summary(self) -> str:
        """The model's Relax module as TVMScript."""
        return self.mod.script()

    def default_tuning_records_path(self) -> str:
        return os.path.join(tempfile.gettempdir(), f"{self.name}_tuning_records")

    def bound_module(self):
        """The module with the weights bound as constants (what is compiled and tuned)."""
        from ..relay.build_module import bind_params_by_name
        return bind_params_by_name(self.mod, self.params) if self.params else self.mod


def load(path, shape_dict=None, model_format=None, **_frontend_options) -> TVMCModel:
    """Import the model at ``path``; only ONNX (``.onnx``) is read."""
    path = os.fspath(path)
    model_format = model_format or os.path.splitext(path)[1].lstrip(".").lower()
    if model_format != "onnx":
        raise TVMCException(f"load: {path}: mlcbench imports ONNX models (.onnx), found "
                            f"format {model_format or 'unknown'!r}; export the model to ONNX")
    if not os.path.isfile(path):
        raise TVMCException(f"load: no such file: {path}")
    from ..relay.frontend import from_onnx
    mod, params = from_onnx(path, shape_dict)
    name = os.path.splitext(os.path.basename(path))[0]
    return TVMCModel(mod, params, name=name, path=path)


class TVMCPackage:
    """A compiled model on disk (``package_path``), loaded: graph, kernels, params."""

    def __init__(self, package_path):
        from ..runtime.package import load_package
        self.package_path = os.fspath(package_path)
        loaded = load_package(self.package_path)
        self.graph, self.lib, self.params = loaded.graph_json, loaded.lib, loaded.params
        self.metadata = loaded.metadata

    @property
    def inputs(self) -> list[dict]:
        return self.metadata["inputs"]

    @property
    def outputs(self) -> list[dict]:
        return self.metadata["outputs"]

    def __repr__(self) -> str:
        return f"TVMCPackage({self.package_path!r})"


def compile(tvmc_model: TVMCModel, target="llvm", opt_level: int = 3,  # noqa: A001
            tuning_records=None, package_path=None, **_options) -> TVMCPackage:
    """Build ``tvmc_model`` for ``target`` into a package (default: a temporary
    ``module.tar``); ``tuning_records`` (a MetaSchedule directory or an AutoTVM log)
    give the kernels their tuned schedules."""
    from ..relay.build_module import build
    if package_path is None:
        # A directory of its own, so two compiles never write the same file.
        package_path = os.path.join(tempfile.mkdtemp(prefix="mlcbench-tvmc-"), "module.tar")
    with _tuned_context(tuning_records, opt_level):
        factory = build(tvmc_model.mod, target=target, params=tvmc_model.params)
    factory.export_library(os.fspath(package_path))
    return TVMCPackage(package_path)


def _tuned_context(tuning_records, opt_level: int):
    """The context that applies ``tuning_records`` while building."""
    import contextlib
    if tuning_records is None:
        return PassContext(opt_level=opt_level)
    records = os.fspath(tuning_records)
    # A directory is a MetaSchedule database; a file is an AutoTVM log.
    if os.path.isdir(records):
        from ..meta_schedule.database import JSONDatabase
        from ..meta_schedule.relax_integration import schedule_lookup
        from ..relax.vm_build import SCHEDULE_LOOKUP_CONFIG
        database = JSONDatabase(work_dir=records, allow_missing=False)
        return PassContext(opt_level=opt_level,
                           config={SCHEDULE_LOOKUP_CONFIG: schedule_lookup(database)})
    if not os.path.isfile(records):
        raise TVMCException(f"compile: no tuning records at {records} (expected a "
                            f"MetaSchedule directory or an AutoTVM log file)")
    from ..autotvm import apply_history_best
    stack = contextlib.ExitStack()
    # Both contexts for the build: the records, and the opt level.
    stack.enter_context(apply_history_best(records))
    stack.enter_context(PassContext(opt_level=opt_level))
    return stack


@dataclass
class TVMCResult:
    """What :func:`run` returns: ``outputs`` (``output_0``, ... -> numpy) and ``times``
    (a BenchmarkResult in seconds, or None when not timed)."""

    outputs: dict
    times: object = None
    inputs: dict = field(default_factory=dict)

    def get_output(self, name: str) -> np.ndarray:
        return self.outputs[name]

    def format_times(self) -> str:
        if self.times is None:
            return "not timed (run with benchmark=True, or --print-time)"
        return str(self.times)

    def save(self, output_path) -> None:
        """Write the outputs to an ``.npz`` file."""
        np.savez(os.fspath(output_path), **self.outputs)


def run(tvmc_package, device="cpu", inputs=None, fill_mode: str = "random", repeat: int = 1,
        number: int = 1, benchmark: bool = False, **_options) -> TVMCResult:
    """Run a package on ``inputs`` (name -> array; missing inputs are filled per
    ``fill_mode``: ``"random"``, ``"zeros"`` or ``"ones"``)."""
    from ..contrib.graph_executor import create
    from ..runtime.device import device as as_device
    if not isinstance(tvmc_package, TVMCPackage):
        tvmc_package = TVMCPackage(tvmc_package)
    module = create(tvmc_package.graph, tvmc_package.lib, as_device(device))
    module.set_input(**tvmc_package.params)
    feeds = make_inputs(tvmc_package.inputs, inputs or {}, fill_mode)
    module.set_input(**feeds)
    times = None
    if benchmark or repeat > 1:
        times = module.module.time_evaluator("run", device, number=number, repeat=repeat)()
    module.run()
    outputs = {f"output_{i}": module.get_output(i).numpy()
               for i in range(module.get_num_outputs())}
    return TVMCResult(outputs, times, feeds)


def make_inputs(specs: list, given: dict, fill_mode: str) -> dict:
    """The input arrays by name: those ``given`` (checked against ``specs``), the rest
    filled with random values, zeros or ones."""
    fills = {"random": lambda shape, dtype: _random(shape, dtype),
             "zeros": np.zeros, "ones": np.ones}
    if fill_mode not in fills:
        raise TVMCException(f"run: fill_mode is one of {sorted(fills)}, found {fill_mode!r}")
    names = [spec["name"] for spec in specs]
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise TVMCException(f"run: the model has no input(s) {unknown}; its inputs are {names}")
    feeds = {}
    for spec in specs:
        if spec["name"] in given:
            feeds[spec["name"]] = np.asarray(given[spec["name"]])
        else:
            feeds[spec["name"]] = fills[fill_mode](tuple(spec["shape"]), spec["dtype"])
    return feeds


def _random(shape, dtype):
    # Seeded: "random" inputs are the same on every run, so outputs can be compared.
    rng = np.random.default_rng(0)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 10, shape).astype(dtype)
    return rng.random(shape).astype(dtype)


def tune(tvmc_model: TVMCModel, target="llvm", tuning_records=None, prior_records=None,
         enable_autoscheduler: bool = False, trials: int = 64, early_stopping=None,
         min_repeat_ms: float = 0, timeout: float = 10, number: int = 3, repeat: int = 1,
         tuner: str = "xgb", progress_bar: bool = True, **_options) -> str:
    """Tune the kernels of ``tvmc_model``; returns the path of the records.

    ``enable_autoscheduler=True``: MetaSchedule over the whole model with ``trials``
    in all, records in the directory ``tuning_records``. Otherwise AutoTVM templates,
    ``trials`` per task, as in TVM, records appended to the log file ``tuning_records``.
    """
    if not isinstance(trials, int) or trials < 1:
        raise TVMCException(f"tune: trials must be a positive int, found {trials!r}")
    records = os.fspath(tuning_records or tvmc_model.default_tuning_records_path())
    if enable_autoscheduler:
        from .tuning import tune_meta_schedule
        return tune_meta_schedule(tvmc_model.bound_module(), target, records, trials,
                                  progress_bar=progress_bar)
    from .tuning import tune_autotvm
    return tune_autotvm(tvmc_model.bound_module(), target, records, trials,
                        prior_records=prior_records, early_stopping=early_stopping,
                        measure=dict(number=number, repeat=repeat, timeout=timeout,
                                     min_repeat_ms=min_repeat_ms), tuner=tuner,
                        progress_bar=progress_bar)


__all__ = ["TVMCException", "TVMCModel", "TVMCPackage", "TVMCResult", "compile", "load",
           "make_inputs", "run", "tune"]
