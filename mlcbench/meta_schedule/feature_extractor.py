"""Feature extractors: candidate schedules in, one numeric matrix per candidate out.

A cost model never sees IR; it sees what a :class:`FeatureExtractor` makes of it.
:class:`PerStoreFeature` (TVM's ``ms.feature_extractor.PerStoreFeature``) lowers each
candidate up to flattening -- loops keep their kinds, buffers are flat -- and gives one
row per buffer store (see :mod:`~mlcbench.meta_schedule.per_store_feature`)::

    >>> from mlcbench import meta_schedule as ms
    >>> extractor = ms.feature_extractor.PerStoreFeature()
    >>> features = extractor.extract_from(context, candidates)     # doctest: +SKIP
    >>> features[0].shape                    # (stores of candidate 0, len(feature_names))
    (3, 164)
    >>> extractor.feature_names[:3]
    ('float_mad', 'float_addsub', 'float_mul')
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..ir.errors import TuningError
from ..ir.module import IRModule
from ..ir.transform import PassContext, Sequential
from ..tir.function import PrimFunc
from ..tir.transform.flatten_buffer import FlattenBuffer
from ..tir.transform.lower_init_block import LowerInitBlock
from ..tir.transform.lower_opaque_block import ConvertBlocksToOpaque, LowerOpaqueBlock
from ..tir.transform.simplify import Simplify
from ..tir.transform.storage_align import StorageAlign
from .per_store_feature import StoreFeatureCollector, feature_names, log_mask

__all__ = ["FeatureExtractor", "PerStoreFeature", "PyFeatureExtractor", "candidate_module",
           "feature_lowering_pipeline"]


class FeatureExtractor:
    """Base of feature extractors: subclass and define :meth:`extract_from`."""

    def extract_from(self, context, candidates) -> list:
        """One ``float32`` matrix per candidate (rows: whatever unit the extractor counts).

        ``context`` is the task's ``TuneContext`` (may be None); a candidate is a
        ``MeasureCandidate``, a ``Schedule``, an ``IRModule`` or a ``PrimFunc``.
        """
        raise NotImplementedError

    @staticmethod
    def create(kind: str = "per-store-feature", *args, **kwargs) -> "FeatureExtractor":
        """``FeatureExtractor.create("per-store-feature")`` -> PerStoreFeature()."""
        if kind == "per-store-feature":
            return PerStoreFeature(*args, **kwargs)
        raise TuningError(f"FeatureExtractor.create: unknown kind {kind!r}; expected "
                          "'per-store-feature'")


PyFeatureExtractor = FeatureExtractor     # TVM's name for the subclassable base


def feature_lowering_pipeline() -> Sequential:
    """The lowering passes up to flattening: the default pipeline minus unroll/vectorize,
    whose loops the features describe, minus the CPU check, which codegen does, and
    minus CompactBufferAllocation: it took 80% of the time on conv2d candidates (100 ms
    each), and the access regions per loop level already measure what a compacted
    buffer would hold (ranking accuracy unchanged on benchmarks/cost_model.py)."""
    return Sequential([LowerInitBlock(), ConvertBlocksToOpaque(), StorageAlign(),
                       LowerOpaqueBlock(), FlattenBuffer(), Simplify()],
                      name="meta_schedule.feature_lowering")


def candidate_module(candidate) -> IRModule:
    """The IRModule of a MeasureCandidate (its ``sch``), Schedule, IRModule or PrimFunc."""
    sch = getattr(candidate, "sch", candidate)
    mod = getattr(sch, "mod", sch)
    if isinstance(mod, PrimFunc):
        return IRModule.from_expr(mod, "main")
    if isinstance(mod, IRModule):
        return mod
    raise TuningError(f"feature extraction expects a MeasureCandidate, Schedule, IRModule or "
                      f"PrimFunc, found {type(candidate).__name__}")


class PerStoreFeature(FeatureExtractor):
    """One row per buffer store of the lowered candidate, Ansor-style.

    Parameters
    ----------
    buffers_per_store
        How many buffers of each store get access features (those touching the most
        cache lines first; fewer are padded with zeros).
    arith_intensity_curve_num_samples
        Points sampled on the flops-per-byte curve along the loop nest.
    cache_line_bytes
        Cache line size used to count touched lines.

    Examples
    --------
    >>> rows = PerStoreFeature().extract_mod(sch.mod)   # doctest: +SKIP
    >>> dict(zip(PerStoreFeature().feature_names, rows[0]))["vec_len"]   # log2(16 + 1)
    4.087...
    """

    def __init__(self, buffers_per_store: int = 5, arith_intensity_curve_num_samples: int = 10,
                 cache_line_bytes: int = 64):
        self.buffers_per_store = buffers_per_store
        self.arith_intensity_curve_num_samples = arith_intensity_curve_num_samples
        self.cache_line_bytes = cache_line_bytes
        self.feature_names = feature_names(buffers_per_store, arith_intensity_curve_num_samples)
        self.feature_vector_length = len(self.feature_names)
        self._log_columns = log_mask(self.feature_names)
        self._pipeline = feature_lowering_pipeline()
        # A search predicts a candidate, then measures it and updates the model with it:
        # remember recent results, keyed by the (immutable) functions of the module.
        self._cache: OrderedDict = OrderedDict()
        self.cache_size = 4096

    def extract_from(self, context, candidates) -> list:
        return [self.extract_mod(candidate_module(c)) for c in candidates]

    def extract_mod(self, mod) -> np.ndarray:
        """The ``(stores, feature_vector_length)`` matrix of one (scheduled) module."""
        mod = candidate_module(mod)
        functions = tuple(mod.functions.items())
        key = tuple((gv.name_hint, id(f)) for gv, f in functions)
        hit = self._cache.get(key)
        if hit is not None and all(a[1] is b for a, b in zip(functions, hit[0])):
            self._cache.move_to_end(key)
            return hit[1]
        matrix = self._extract(mod)
        self._cache[key] = (tuple(f for _, f in functions), matrix)
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return matrix

    def _extract(self, mod: IRModule) -> np.ndarray:
        with PassContext():               # the user's instruments need not see these passes
            lowered = self._pipeline(mod)
        rows = []
        for _, func in lowered.items():
            if isinstance(func, PrimFunc):
                rows += StoreFeatureCollector(func, self.buffers_per_store,
                                              self.arith_intensity_curve_num_samples,
                                              self.cache_line_bytes).collect()
        matrix = np.array(rows, dtype=np.float64).reshape(len(rows), self.feature_vector_length)
        logged = np.log2(np.abs(matrix) + 1.0) * np.sign(matrix)
        return np.where(self._log_columns, logged, matrix).astype(np.float32)
