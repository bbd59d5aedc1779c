"""GATuner: a genetic algorithm over knob positions."""
from __future__ import annotations

import numpy as np

from .tuner import Tuner

__all__ = ["GATuner"]


class GATuner(Tuner):
    """Each generation breeds ``pop_size`` unmeasured configs from the measured ones:
    parents drawn in proportion to their throughput (the ``elite_num`` best always among
    them), one-point crossover of knob positions, then each knob re-drawn with
    probability ``mutation_prob``.

    >>> tuner = GATuner(task, pop_size=32, elite_num=2, mutation_prob=0.1)   # doctest: +SKIP
    """

    def __init__(self, task, pop_size: int = 100, elite_num: int = 3,
                 mutation_prob: float = 0.1, seed: int | None = None):
        super().__init__(task, seed)
        self.pop_size = max(1, min(pop_size, len(self.space)))
        self.elite_num = min(elite_num, self.pop_size)
        self.mutation_prob = mutation_prob
        self.dims = [len(knob) for knob in self.space.space_map.values()]
        self.queue: list[int] = self._random_population()
        self.measured: dict[int, float] = {}          # index -> flops (0: failed)

    def _random_population(self) -> list:
        picked: set = set()
        while len(picked) < min(self.pop_size, len(self.space) - len(self.visited)):
            index = self._random_unvisited()
            picked.add(index)
        return list(picked)

    def next_batch(self, batch_size: int) -> list:
        batch = []
        while len(batch) < batch_size and self.has_next():
            if not self.queue:
                self.queue = self._next_generation()
            index = self.queue.pop(0)
            if index not in self.visited:
                batch.append(self._take(index))
        return batch

    def update(self, inputs, results) -> None:
        for inp, result in zip(inputs, results):
            flops = 0.0 if result.error_no != 0 else \
                self.task.flop / float(np.mean(result.costs))
            self.measured[inp.config.index] = flops

    def _next_generation(self) -> list:
        if not self.measured:
            return self._random_population()
        indices = np.array(list(self.measured))
        # Failed configs score 0: the epsilon keeps the probabilities defined.
        scores = np.array([self.measured[i] for i in indices]) + 1e-9
        elites = indices[np.argsort(-scores)[:self.elite_num]]
        probs = scores / scores.sum()
        children: set = set()
        # Bounded: in a nearly exhausted space children repeat; random configs fill up below.
        for _ in range(self.pop_size * 20):
            if len(children) >= self.pop_size or \
                    len(self.visited) + len(children) >= len(self.space):
                break
            # Half the first parents are elites, so the best configs keep breeding.
            first = elites[self.rng.integers(len(elites))] if self.rng.random() < 0.5 \
                else self.rng.choice(indices, p=probs)
            child = self._mutate(self._crossover(first, self.rng.choice(indices, p=probs)))
            if child not in self.visited:
                children.add(child)
        while len(children) < self.pop_size and \
                len(self.visited) + len(children) < len(self.space):
            children.add(self._random_unvisited())
        return list(children)

    def _crossover(self, first: int, second: int) -> list:
        a, b = self.space.point2knob(int(first)), self.space.point2knob(int(second))
        point = int(self.rng.integers(len(a) + 1))
        return a[:point] + b[point:]

    def _mutate(self, genes: list) -> int:
        for k, dim in enumerate(self.dims):
            if self.rng.random() < self.mutation_prob:
                genes[k] = int(self.rng.integers(dim))
        return self.space.knob2point(genes)
