"""TVMScript for Relax: the ``R`` namespace, the printer and the parser.

Importing this package registers them with the script layer: Relax nodes print through
``repr``/``script()``, Relax functions print inside ``@I.ir_module`` classes next to
PrimFuncs, and ``@R.function`` parses (decorated, in a module class, or in
``mlcbench.script.from_source`` text).
"""
from ...ir.node import register_printer
from ...script.parser.entry import register_function_parser
from ...script.printer.module import register_function_printer
from ..expr import Function
from . import namespace, parser, printer

register_printer(printer.script)
register_function_printer(Function, printer.module_function_printer, printer.RELAX_IMPORT,
                          takes_module_name=True)
register_function_parser(namespace.function, parser.parse_relax_function)
