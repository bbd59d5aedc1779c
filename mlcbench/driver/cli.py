"""The ``mlcbench`` command line.

``mlcbench demo``                          walk through what the compiler does, headless
``mlcbench show FILE [--after PASS]``      print a TVMScript file or an ONNX model's Relax IR
``mlcbench lower FILE``                    print the IR after each lowering pass
``mlcbench compile FILE -o OUT``           TVMScript -> a shared library; ONNX -> a package
``mlcbench run PACKAGE``                   run a compiled model package
``mlcbench tune MODEL --trials N -o DIR``  tune an ONNX model's kernels

Exit status: 0 on success, 1 when the work failed (a model that does not import,
compile or run), 2 for a wrong command line (unknown option, missing file, a file of
the wrong kind), 130 when interrupted.
"""
from __future__ import annotations

import argparse
import os
import sys

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

EXAMPLES = """examples:
  mlcbench compile resnet50.onnx -o resnet50.tar
  mlcbench compile resnet50.onnx -o resnet50.tar --tuning-records records/
  mlcbench run resnet50.tar --inputs image.npz --print-time --repeat 10 --outputs out.npz
  mlcbench tune resnet50.onnx --trials 64 -o records/
  mlcbench show resnet50.onnx --after FuseOps
  mlcbench compile kernel.py -o kernel.so          (a TVMScript file)
"""


EXIT_STATUS = """exit status:
  0 success, 1 the work failed (a model that does not import, compile or run),
  2 a wrong command line (unknown option, missing file, a file of the wrong kind),
  130 interrupted. `mlcbench COMMAND --help` shows each command's options."""


def _command(sub, name: str, summary: str, description: str, examples: str):
    """A subcommand whose --help reads as plain text: what it does, then examples."""
    return sub.add_parser(name, help=summary, description=description,
                          epilog="examples:\n" + examples,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


class UsageError(Exception):
    """A command line that cannot work: exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlcbench", description="mlcbench, a machine-learning compiler: compile, run "
                                     "and tune ONNX models; show, lower and compile TVMScript.",
        epilog=EXAMPLES + "\n" + EXIT_STATUS, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traceback", action="store_true",
                        help="on an error, show Python's traceback instead of one line")
    # required: a bare `mlcbench` prints the usage and exits 2 instead of doing nothing.
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = _command(sub, "demo", "show, headless, what the compiler can do",
                    "Walk through the compiler in the terminal: mm_relu parsed from TVMScript, "
                    "printed,\nlowered, scheduled, built and timed against numpy; a dense "
                    "layer with the default\nschedules; the digits MLP through Relax and the VM.",
                    "  mlcbench demo\n  mlcbench demo --size 256      (a smaller matmul)")
    demo.add_argument("--size", type=int, default=512,
                      help="matrix size of the parallel, vectorized matmul (default 512)")
    show = _command(sub, "show", "print a TVMScript file, or an ONNX model as Relax",
                    "Print a TVMScript file as the parser understood it, or an ONNX model "
                    "imported as Relax\n(optionally after a pass of the build pipeline).",
                    "  mlcbench show kernel.py\n  mlcbench show model.onnx --after FuseOps")
    show.add_argument("file", help="a TVMScript file (.py) or an ONNX model (.onnx)")
    show.add_argument("--after", metavar="PASS",
                      help="the IR after this pass of the build pipeline")
    _model_options(show)
    lower = _command(sub, "lower", "print the IR after each lowering pass",
                     "Print a TVMScript file's IR after each pass that lowers it to "
                     "code generation.", "  mlcbench lower kernel.py | less")
    lower.add_argument("file", help="a TVMScript file (.py)")
    comp = _command(sub, "compile", "build a TVMScript file or an ONNX model",
                    "Build a TVMScript file into a shared library, or an ONNX model into a "
                    "package (.tar)\nthat `mlcbench run` and mlcbench.runtime.load_package "
                    "load.",
                    "  mlcbench compile model.onnx -o model.tar\n"
                    "  mlcbench compile model.onnx -o model.tar --tuning-records records/\n"
                    "  mlcbench compile kernel.py -o kernel.so")
    comp.add_argument("file", help="a TVMScript file (.py) or an ONNX model (.onnx)")
    comp.add_argument("-o", "--output", help="the library (.so) or package (.tar) to "
                                             "write (default: module.tar for a model)")
    comp.add_argument("--target", default="llvm", help="target (default: llvm, the host)")
    comp.add_argument("--tuning-records", metavar="PATH",
                      help="records of `mlcbench tune` (a directory) or an AutoTVM log")
    _model_options(comp)
    _run_parser(sub)
    _tune_parser(sub)
    return parser


def _model_options(parser) -> None:
    parser.add_argument("--input-shapes", metavar="SHAPES",
                        help="static input shapes, e.g. 'data:[1,3,224,224]' "
                             "(several: 'a:[1,4] b:[1,8]')")


def _run_parser(sub) -> None:
    run = _command(sub, "run", "run a compiled model package (.tar)",
                   "Run a package written by `mlcbench compile` on inputs from a .npz file "
                   "(or filled),\nand print, time or save its outputs.",
                   "  mlcbench run model.tar --inputs x.npz --outputs out.npz\n"
                   "  mlcbench run model.tar --print-time --repeat 10 --print-top 5")
    run.add_argument("file", help="a package written by `mlcbench compile`")
    run.add_argument("--inputs", metavar="NPZ", help="input arrays by name (.npz); inputs "
                                                     "not in it are filled (--fill-mode)")
    run.add_argument("--fill-mode", choices=["random", "zeros", "ones"], default="random",
                     help="values of inputs not in --inputs (default random)")
    run.add_argument("--outputs", metavar="NPZ", help="write the outputs (output_0, ...)")
    run.add_argument("--print-time", action="store_true", help="time the model and print it")
    run.add_argument("--print-top", type=int, metavar="N",
                     help="print the N largest entries of output_0 (class scores)")
    run.add_argument("--repeat", type=int, default=1, help="timed repeats (default 1)")
    run.add_argument("--number", type=int, default=1, help="runs per repeat (default 1)")


def _tune_parser(sub) -> None:
    tune = _command(sub, "tune", "tune an ONNX model's kernels",
                    "Search schedules for an ONNX model's kernels and keep the measured "
                    "records,\nwhich `mlcbench compile --tuning-records` then uses.",
                    "  mlcbench tune model.onnx --trials 64 -o records/\n"
                    "  mlcbench tune model.onnx --trials 16 --autotvm -o model.log")
    tune.add_argument("file", help="an ONNX model (.onnx)")
    tune.add_argument("-o", "--output", required=True, metavar="PATH",
                      help="records: a directory (MetaSchedule) or, with --autotvm, a log")
    tune.add_argument("--trials", type=int, default=64,
                      help="measured candidates: in all (MetaSchedule) or per task (AutoTVM)")
    tune.add_argument("--target", default="llvm", help="target (default: llvm, the host)")
    tune.add_argument("--autotvm", action="store_true",
                      help="tune AutoTVM templates into a log file instead")
    _model_options(tune)


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:          # --help (0) or a wrong command line (2)
        # Returned, not raised: main() is also called from tests and other Python code.
        return int(exit_.code or 0)
    try:
        return COMMANDS[args.command](args)
    except BrokenPipeError:          # `mlcbench show model.onnx | head`: stop quietly
        # Python flushes stdout at exit; into a closed pipe that would raise once more.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print(f"mlcbench {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except UsageError as err:
        print(f"mlcbench {args.command}: {err}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as err:  # the command line reports, it does not dump a traceback
        if args.traceback:
            raise
        print(f"mlcbench {args.command}: {_describe(err)}", file=sys.stderr)
        return EXIT_FAILURE


def _describe(err: Exception) -> str:
    from ..ir.errors import MLCBenchError
    # These carry messages meant for the user; anything else is an internal error.
    if isinstance(err, (MLCBenchError, OSError, ValueError, TypeError)):
        return str(err)
    return (f"internal error: {type(err).__name__}: {err} (run with --traceback for "
            f"details)")


def _existing(path: str) -> str:
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    return path


def is_model(path: str) -> bool:
    return path.lower().endswith(".onnx")


def _read_module(path: str):
    from ..ir.module import IRModule
    from ..script import from_source
    with open(_existing(path), encoding="utf-8") as handle:
        parsed = from_source(handle.read(), source_name=path)
    return parsed if isinstance(parsed, IRModule) else IRModule.from_expr(parsed)


def cmd_show(args) -> int:
    if is_model(_existing(args.file)):
        from .model_commands import show_model
        return show_model(args)
    mod = _read_module(args.file)
    if args.after:
        from .model_commands import ir_after
        from ..tir.transform import lower
        mod = ir_after(lower, mod, args.after)
    print(mod.script())
    return EXIT_OK


def cmd_lower(args) -> int:
    from ..ir.instrument import PrintAfterAll
    from ..ir.transform import PassContext
    from ..tir.transform import lower
    with PassContext(instruments=[PrintAfterAll()]):
        lower(_read_module(args.file))
    return EXIT_OK


def cmd_compile(args) -> int:
    if is_model(_existing(args.file)):
        from .model_commands import compile_model
        return compile_model(args)
    if not args.output:
        raise UsageError("give the library to write: -o FILE.so")
    from .build import build
    lib = build(_read_module(args.file), target=args.target)
    lib.export_library(args.output)
    print(f"wrote {args.output}")
    return EXIT_OK


def cmd_run(args) -> int:
    from .model_commands import run_package
    return run_package(args)


def cmd_tune(args) -> int:
    if not is_model(_existing(args.file)):
        raise UsageError(f"expected an ONNX model (.onnx), found {args.file}")
    from .model_commands import tune_model
    return tune_model(args)


def cmd_demo(args) -> int:
    from .demo import run_demo
    return run_demo(size=args.size)


COMMANDS = {"demo": cmd_demo, "show": cmd_show, "lower": cmd_lower, "compile": cmd_compile,
            "run": cmd_run, "tune": cmd_tune}

if __name__ == "__main__":
    sys.exit(main())
