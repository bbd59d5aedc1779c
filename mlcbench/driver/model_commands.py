"""The model commands of the command line: ``show``, ``compile``, ``run`` and ``tune`` of
ONNX models and packages, on top of :mod:`mlcbench.driver.tvmc`."""
from __future__ import annotations

import os
import re
import sys

import numpy as np

from . import tvmc
from .cli import EXIT_OK, UsageError

# The name may end in :N (TensorFlow's output names); the last colon opens the shape.
_SHAPE_ENTRY = re.compile(r"\s*([^\s:\[\]]+(?::\d+)?)\s*:\s*\[([\d\s,]*)\]\s*")


def parse_input_shapes(text: str | None) -> dict | None:
    """``"data:[1,3,224,224] mask:[1,8]"`` -> ``{"data": (1, 3, 224, 224), ...}``.

    A name may itself end in ``:0`` (``input:0:[1,10]``), as TensorFlow's exports do.
    """
    if not text:
        return None
    shapes, position = {}, 0
    while position < len(text):
        match = _SHAPE_ENTRY.match(text, position)
        if match is None:
            raise UsageError(f"--input-shapes: expected NAME:[D,D,...] at "
                             f"{text[position:]!r} (e.g. 'data:[1,3,224,224]')")
        dims = [d for d in re.split(r"[\s,]+", match.group(2).strip()) if d]
        shapes[match.group(1)] = tuple(int(d) for d in dims)
        position = match.end()
        if position < len(text) and text[position] == ",":
            position += 1
    return shapes


def _load(args) -> "tvmc.TVMCModel":
    return tvmc.load(args.file, shape_dict=parse_input_shapes(args.input_shapes))


def ir_after(pipeline, mod, pass_name: str):
    """The IR right after the pass called ``pass_name`` when ``pipeline`` runs on ``mod``."""
    from ..ir.instrument import RecordingInstrument
    from ..ir.transform import PassContext
    recorder = RecordingInstrument()
    with PassContext(instruments=[recorder]):
        pipeline(mod)
    names = [record.name for record in recorder.records]
    for record in recorder.records:
        # "Simplify" finds "tir.Simplify": the short name is enough.
        if record.name == pass_name or record.name.split(".")[-1] == pass_name:
            return record.after
    raise UsageError(f"--after: no pass {pass_name!r} runs; the passes are "
                     f"{', '.join(dict.fromkeys(names))}")


def show_model(args) -> int:
    model = _load(args)
    mod = model.mod
    if args.after:
        from ..relax.pipeline import get_pipeline
        from ..target import Target
        with Target(getattr(args, "target", None) or "llvm"):
            mod = ir_after(get_pipeline("default"), mod, args.after)
    print(mod.script())
    return EXIT_OK


def compile_model(args) -> int:
    from tqdm import tqdm
    output = args.output or "module.tar"
    if not output.endswith(".tar"):
        raise UsageError(f"a model compiles to a package (.tar), found -o {output}")
    steps = tqdm(total=2, desc="mlcbench compile", unit="step", disable=None, file=sys.stderr)
    steps.set_postfix_str(f"import {os.path.basename(args.file)}")
    model = _load(args)
    steps.update()
    steps.set_postfix_str(f"build for {args.target}")
    tvmc.compile(model, target=args.target, tuning_records=args.tuning_records,
                 package_path=output)
    steps.update()
    steps.close()
    print(f"wrote {output}")
    return EXIT_OK


def read_inputs(path: str | None) -> dict:
    """The arrays of an ``.npz`` file, read without unpickling."""
    if path is None:
        return {}
    if not os.path.isfile(path):
        raise UsageError(f"--inputs: no such file: {path}")
    try:
        # Inputs come from the user's files: arrays only, nothing unpickled.
        loaded = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as err:
        raise UsageError(f"--inputs: {path} is not an .npz file of arrays: {err}") from None
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise UsageError(f"--inputs: {path} holds one array; save inputs by name with "
                         f"numpy.savez({os.path.basename(path)!r}, data=x)")
    with loaded:
        try:
            return {name: loaded[name] for name in loaded.files}
        except ValueError as err:
            raise UsageError(f"--inputs: {path}: {err}") from None


def run_package(args) -> int:
    if not os.path.isfile(args.file):
        raise UsageError(f"no such file: {args.file}")
    if not args.file.endswith(".tar"):
        stem = os.path.splitext(args.file)[0]
        raise UsageError(f"expected a package (.tar) written by `mlcbench compile`, found "
                         f"{args.file}; compile it first: mlcbench compile {args.file} "
                         f"-o {stem}.tar")
    if args.repeat < 1 or args.number < 1:
        raise UsageError(f"--repeat and --number must be >= 1, found "
                         f"{args.repeat} and {args.number}")
    result = tvmc.run(args.file, device="cpu", inputs=read_inputs(args.inputs),
                      fill_mode=args.fill_mode, repeat=args.repeat, number=args.number,
                      benchmark=args.print_time)
    if args.outputs:
        result.save(args.outputs)
        print(f"wrote {args.outputs}")
    if args.print_top:
        print(top_entries(result.outputs["output_0"], args.print_top))
    if args.print_time:
        print(result.format_times())
    if not (args.outputs or args.print_top or args.print_time):
        for name, value in result.outputs.items():
            print(f"{name}: shape {value.shape}, {value.dtype}\n{value}")
    return EXIT_OK


def top_entries(output: np.ndarray, count: int) -> str:
    """The ``count`` largest entries of the first row of ``output``, largest first."""
    # The first row of a batch; a 1-D output is one row.
    row = np.asarray(output).reshape(output.shape[0] if output.ndim > 1 else 1, -1)[0]
    order = np.argsort(row)[::-1][:count]
    return "\n".join(f"class={int(i)} score={float(row[i]):.6g}" for i in order)


def tune_model(args) -> int:
    model = _load(args)
    records = tvmc.tune(model, target=args.target, tuning_records=args.output,
                        enable_autoscheduler=not args.autotvm, trials=args.trials)
    print(f"wrote tuning records to {records}; build with: mlcbench compile {args.file} "
          f"--tuning-records {records} -o {model.name}.tar")
    return EXIT_OK


__all__ = ["compile_model", "ir_after", "parse_input_shapes", "read_inputs", "run_package",
           "show_model", "top_entries", "tune_model"]
