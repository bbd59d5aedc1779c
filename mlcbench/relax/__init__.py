"""The graph IR (Relax): whole models as functions of tensor-valued bindings.

``from mlcbench import relax`` gives TVM's names: expressions (``Var``, ``Call``,
``Function`` ...), struct info (``TensorStructInfo`` ...), ``relax.op`` (the op registry
with shape inference and legalization), ``BlockBuilder``, ``PyExprMutator``,
``relax.analysis`` and the pattern language ``relax.dpl``. TVMScript spells the same IR
with ``from mlcbench.script import relax as R``.
"""
from . import op
from .op import call_dps_packed, call_pure_packed, call_tir
from .block_builder import BlockBuilder
from .expr import (Attrs, BindingBlock, Call, Constant, DataflowBlock, DataflowVar, Expr,
                   ExternFunc, Function, GlobalVar, If, MatchCast, PrimValue, SeqExpr,
                   ShapeExpr, StringImm, Tuple, TupleGetItem, Var, VarBinding, const)
from .struct_info import (FuncStructInfo, ObjectStructInfo, PrimStructInfo, ShapeStructInfo,
                          StructInfo, TensorStructInfo, TupleStructInfo)
from . import analysis, dpl, expr_functor
from .expr_functor import ExprMutator, ExprVisitor, PyExprMutator, PyExprVisitor
from . import tvmscript as _tvmscript  # registers the R.* printer and parser
from . import transform
from .executable import Executable
from .pipeline import get_pipeline
from .vm import VirtualMachine
from .vm_build import build
from .compat import DynTensorType, add, dataflow, divide, multiply, output, subtract
from . import vm as _vm
_vm.build = build       # the 2022 course's relax.vm.build(mod, target)


def __getattr__(name):
    """``relax.frontend`` on first use: its importers load onnx or torch only when used."""
    if name == "frontend":
        import importlib
        return importlib.import_module(f"{__name__}.frontend")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
