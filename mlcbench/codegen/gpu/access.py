"""What a warp's memory access costs, and the shared-memory race and bounds checks.

Every function takes the addresses of one access by the active threads of a block:
``threads`` (k,) linear thread ids and ``addrs`` (k, lanes) element indices.

* Global memory moves in 32-byte sectors: a warp's access costs as many transactions as
  distinct sectors it touches (32 threads reading 32 consecutive floats: 4 sectors; with
  a stride of 32 floats: 32 sectors).
* Shared memory has 32 banks of 4-byte words; a warp's access takes as many wavefronts
  as the most distinct words asked of one bank (the same word in one bank is a
  broadcast, free). Wider accesses (8 or 16 bytes per thread) are served a half or a
  quarter warp at a time, so their conflict-free cost is 2 or 4 wavefronts.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...ir.errors import RuntimeError_

SECTOR_BYTES = 32
BANKS = 32
BANK_BYTES = 4


class GPUSimulationError(RuntimeError_):
    """A kernel did something a GPU would not forgive: a data race on shared memory, an
    access out of a buffer's bounds, a barrier that not every thread reaches."""


@dataclass
class AccessCounts:
    """Totals for one (buffer, load/store) of a kernel, over the whole grid.

    ``requests``: warp-level instructions; ``transactions``: 32-byte sectors (global) or
    wavefronts (shared); ``ideal``: the fewest transactions those requests could take;
    ``bytes``: bytes the threads asked for.
    """
    buffer: str
    scope: str
    kind: str
    requests: float = 0.0
    transactions: float = 0.0
    ideal: float = 0.0
    bytes: float = 0.0

    @property
    def conflicts(self) -> float:
        """Shared memory: wavefronts beyond the conflict-free count (bank conflicts)."""
        return self.transactions - self.ideal


def global_sectors(threads, addrs, itemsize: int, warp_size: int) -> tuple:
    """(warp requests, sectors, ideal sectors) of one access to global memory; ideal:
    the distinct elements of each warp packed densely into sectors."""
    warps = np.broadcast_to((threads // warp_size)[:, None], addrs.shape).ravel()
    # The warp number goes above bit 40, so one unique() counts distinct sectors per warp.
    sectors = np.unique(warps * (1 << 40) + (addrs.ravel() * itemsize) // SECTOR_BYTES)
    elements = np.unique(warps * (1 << 40) + addrs.ravel())
    _, per_warp = np.unique(elements >> 40, return_counts=True)
    ideal = int((-(-(per_warp * itemsize) // SECTOR_BYTES)).sum())
    return len(per_warp), len(sectors), ideal


def shared_wavefronts(threads, addrs, itemsize: int, warp_size: int) -> tuple:
    """(warp requests, wavefronts, conflict-free wavefronts) of one shared access."""
    # Wider accesses are served a half or a quarter warp at a time.
    per_thread = max(1, addrs.shape[1] * itemsize // BANK_BYTES)
    group_size = max(1, warp_size // per_thread)
    groups = np.broadcast_to((threads // group_size)[:, None], addrs.shape).ravel()
    words = ((addrs * itemsize) // BANK_BYTES).ravel()
    pairs = np.unique(np.stack([groups, words % BANKS, words]), axis=1)
    group_bank, per_bank = np.unique(pairs[0] * BANKS + pairs[1], return_counts=True)
    busiest = np.zeros(group_bank.max() // BANKS + 1, dtype=np.int64)
    np.maximum.at(busiest, group_bank // BANKS, per_bank)
    requests = len(np.unique(threads // warp_size))
    return requests, int(busiest.sum()), len(np.unique(groups))


@dataclass
class SharedEpoch:
    """Who touched each element of one shared buffer since the last barrier.

    ``writer``/``reader`` hold a thread id, -1 (nobody) or -2 (several threads);
    ``*_stmt`` the index of the statement that did it (for the error message).
    """
    size: int
    writer: np.ndarray = field(init=False)
    reader: np.ndarray = field(init=False)
    writer_stmt: np.ndarray = field(init=False)
    reader_stmt: np.ndarray = field(init=False)

    def __post_init__(self):
        self.reset()

    def reset(self):
        self.writer = np.full(self.size, -1, dtype=np.int64)
        self.reader = np.full(self.size, -1, dtype=np.int64)
        self.writer_stmt = np.full(self.size, -1, dtype=np.int64)
        self.reader_stmt = np.full(self.size, -1, dtype=np.int64)

    def access(self, threads, addrs, is_write: bool, stmt_id: int):
        """Record an access; returns ``None`` or (address, this thread, other thread,
        other statement id, what the other did) for the first race found."""
        t = np.broadcast_to(threads[:, None], addrs.shape).ravel()
        a = addrs.ravel()
        race = _conflict(self.writer, self.writer_stmt, a, t, "writes")
        if race is None and is_write:
            race = _conflict(self.reader, self.reader_stmt, a, t, "reads")
            race = race or _same_access_race(a, t, stmt_id)
        if race is not None:
            return race
        owner, stmts = (self.writer, self.writer_stmt) if is_write else (self.reader,
                                                                          self.reader_stmt)
        _claim(owner, a, t)
        stmts[a] = stmt_id
        return None


def _conflict(owner, stmts, a, t, what: str):
    other = owner[a]
    bad = (other != -1) & (other != t)
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return int(a[i]), int(t[i]), int(other[i]), int(stmts[a[i]]), what


def _same_access_race(a, t, stmt_id: int):
    """Two threads storing to one address in the same statement."""
    order = np.lexsort((t, a))
    a_sorted, t_sorted = a[order], t[order]
    dup = (a_sorted[1:] == a_sorted[:-1]) & (t_sorted[1:] != t_sorted[:-1])
    if not dup.any():
        return None
    i = int(np.argmax(dup))
    return int(a_sorted[i]), int(t_sorted[i + 1]), int(t_sorted[i]), stmt_id, "writes"


def _claim(owner, a, t):
    """owner[a] = t, or -2 where another thread already holds it (or twice in ``a``)."""
    prev = owner[a]
    owner[a] = np.where((prev == -1) | (prev == t), t, -2)
    order = np.lexsort((t, a))
    a_sorted, t_sorted = a[order], t[order]
    dup = (a_sorted[1:] == a_sorted[:-1]) & (t_sorted[1:] != t_sorted[:-1])
    owner[a_sorted[1:][dup]] = -2
