"""The ``mlcbench`` command line.

``mlcbench demo``            walk through what the compiler does, headless, with a progress bar
``mlcbench show FILE``       parse a TVMScript file and print it back (canonical form)
``mlcbench lower FILE``      print the IR after each lowering pass
``mlcbench compile FILE -o lib.so``   build a TVMScript file into a shared library
"""
from __future__ import annotations

import argparse
import sys
import time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="mlcbench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="show, headless, what the compiler can do")
    demo.add_argument("--size", type=int, default=512,
                      help="matrix size of the parallel, vectorized matmul (default 512)")
    show = sub.add_parser("show", help="parse a TVMScript file and print it")
    show.add_argument("file")
    lower = sub.add_parser("lower", help="print the IR after each lowering pass")
    lower.add_argument("file")
    comp = sub.add_parser("compile", help="build a TVMScript file into a shared library")
    comp.add_argument("file")
    comp.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except Exception as err:  # the command line reports, it does not dump a traceback
        from ..ir.errors import MLCBenchError
        if not isinstance(err, (MLCBenchError, OSError, ValueError, TypeError)):
            raise
        print(f"mlcbench {args.command}: {err}", file=sys.stderr)
        return 1


def _read_module(path: str):
    from ..ir.module import IRModule
    from ..script import from_source
    with open(path, encoding="utf-8") as handle:
        parsed = from_source(handle.read(), source_name=path)
    return parsed if isinstance(parsed, IRModule) else IRModule.from_expr(parsed)


def cmd_show(args) -> int:
    print(_read_module(args.file).script())
    return 0


def cmd_lower(args) -> int:
    from ..ir.instrument import PrintAfterAll
    from ..ir.transform import PassContext
    from ..tir.transform import lower
    with PassContext(instruments=[PrintAfterAll()]):
        lower(_read_module(args.file))
    return 0


def cmd_compile(args) -> int:
    from .build import build
    lib = build(_read_module(args.file), target="llvm")
    lib.export_library(args.output)
    print(f"wrote {args.output}")
    return 0


def cmd_demo(args) -> int:
    from .demo import run_demo
    return run_demo(size=args.size)


COMMANDS = {"demo": cmd_demo, "show": cmd_show, "lower": cmd_lower, "compile": cmd_compile}

if __name__ == "__main__":
    sys.exit(main())
