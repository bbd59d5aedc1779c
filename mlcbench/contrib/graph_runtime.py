"""``tvm.contrib.graph_runtime``: the graph executor's name before TVM 0.8.

``graph_runtime.create(graph, lib, ctx)`` is :func:`.graph_executor.create`.
"""
from .graph_executor import GraphExecutor, GraphModule, create

__all__ = ["GraphExecutor", "GraphModule", "create"]
