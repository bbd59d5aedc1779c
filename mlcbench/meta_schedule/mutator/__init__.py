"""Mutators: one-decision changes of a trace for the evolutionary search (``ms.mutator``).

``Mutator.create("llvm")`` gives ``{MutateTileSize(): 0.9, MutateComputeLocation(): 0.05,
MutateUnroll(): 0.03, MutateParallel(max_jobs_per_core=16): 0.02}``; for a GPU target
(``"cuda"``) ``{MutateTileSize(): 0.9, MutateUnroll(): 0.08, MutateThreadBinding(): 0.02}``.
"""
from .mutate_compute_location import MutateComputeLocation
from .mutate_parallel import MutateParallel
from .mutate_thread_binding import MutateThreadBinding
from .mutate_tile_size import MutateTileSize
from .mutate_unroll import MutateUnroll
from .mutator import Mutator

__all__ = ["Mutator", "MutateComputeLocation", "MutateParallel", "MutateThreadBinding",
           "MutateTileSize", "MutateUnroll"]
