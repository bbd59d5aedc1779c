"""Helpers that TVM keeps under ``tvm.contrib``: the graph executor of the older
tutorials (``graph_executor``, and ``graph_runtime``, its name before 2021),
``utils.tempdir`` and ``clang.create_llvm`` (C source to LLVM IR, with clang).

They load on first use: ``from mlcbench.contrib import graph_executor``.
"""
