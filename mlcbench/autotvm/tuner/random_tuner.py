"""RandomTuner and GridSearchTuner: the baselines a model-based tuner must beat."""
from __future__ import annotations

from .tuner import Tuner

__all__ = ["RandomTuner", "GridSearchTuner"]


class RandomTuner(Tuner):
    """Configs in random order, each once.

    >>> tuner = RandomTuner(task, seed=0)         # doctest: +SKIP
    """

    def __init__(self, task, range_idx=None, seed: int | None = None):
        super().__init__(task, seed)
        self.range_idx = range_idx

    def _random_unvisited(self) -> int:
        if self.range_idx is None:
            return super()._random_unvisited()
        low, high = self.range_idx
        while True:
            index = int(self.rng.integers(low, high + 1))
            if index not in self.visited:
                return index

    def has_next(self) -> bool:
        if self.range_idx is None:
            return super().has_next()
        low, high = self.range_idx
        return sum(1 for i in self.visited if low <= i <= high) < high - low + 1

    def next_batch(self, batch_size: int) -> list:
        batch = []
        while len(batch) < batch_size and self.has_next():
            batch.append(self._take(self._random_unvisited()))
        return batch


class GridSearchTuner(Tuner):
    """Configs in index order."""

    def __init__(self, task, seed: int | None = None):
        super().__init__(task, seed)
        self.counter = 0

    def next_batch(self, batch_size: int) -> list:
        batch = []
        while len(batch) < batch_size and self.counter < len(self.space):
            if self.counter not in self.visited:
                batch.append(self._take(self.counter))
            self.counter += 1
        return batch

    def has_next(self) -> bool:
        return self.counter < len(self.space) and super().has_next()
