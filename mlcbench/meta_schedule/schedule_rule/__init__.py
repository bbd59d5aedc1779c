"""Schedule rules: what a design space tries on each block (``ms.schedule_rule``).

``ScheduleRule.create("llvm")`` gives the CPU defaults in the order they apply:
``AutoInline``, ``AddRFactor``, ``MultiLevelTiling`` (``"SSRSRS"``),
``ParallelizeVectorizeUnroll``, ``RandomComputeLocation``. ``ScheduleRule.create("cuda")``
(and the ``nvidia/...`` tags) the GPU ones: ``AutoInline``, ``MultiLevelTiling``
(``"SSSRRSRS"`` bound to blockIdx / vthread / threadIdx, inputs in shared memory),
``AutoInline``, ``ParallelizeVectorizeUnroll`` (unroll only), ``AutoBind``.
"""
from .add_rfactor import AddRFactor
from .auto_bind import AutoBind
from .auto_inline import AutoInline
from .multi_level_tiling import MultiLevelTiling, ReuseType
from .parallel_vectorize_unroll import ParallelizeVectorizeUnroll
from .random_compute_location import RandomComputeLocation
from .schedule_rule import ScheduleRule

__all__ = ["AddRFactor", "AutoBind", "AutoInline", "MultiLevelTiling",
           "ParallelizeVectorizeUnroll", "RandomComputeLocation", "ReuseType", "ScheduleRule"]
