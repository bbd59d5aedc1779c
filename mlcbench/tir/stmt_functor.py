"""TVM's ``tir.stmt_functor`` names for walking and rewriting TensorIR, as tutorials and
the MLC course use them (``tvm.tir.stmt_functor.post_order_visit(func.body, fn)``)."""
from .functor import post_order_visit, pre_order_visit, substitute

__all__ = ["post_order_visit", "pre_order_visit", "substitute"]
