"""Who reads what in an epoch: the split of a listing across torch.distributed ranks and
DataLoader workers, and the seeded per-epoch order. Pure functions of their arguments, so every
rank and worker computes the same plan without talking to the others.

A *consumer* is one (rank, worker) pair; there are `world_size * num_workers` of them. Positions
are indices into the epoch order (the listing order, or its seeded permutation). Rank `r` owns
positions `r, r + R, r + 2R, ...`; worker `w` of that rank takes every `W`-th of those, starting
with its `w`-th. Together the consumers take every position below `n` exactly once; with
`even_split` only the first `n - n % R` positions are dealt, so every rank gets the same count
(DDP collectives hang when one rank runs out of batches before the others).

Example:
    >>> list(consumer_positions(10, rank=1, world_size=2, worker_id=0, num_workers=2))
    [1, 5, 9]
    >>> epoch_order(5, seed=0, epoch=0).tolist() == epoch_order(5, seed=0, epoch=0).tolist()
    True
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "Consumer",
    "consumer_positions",
    "current_consumer",
    "epoch_order",
    "process_group_rank",
    "resolve_rank",
]


@dataclass(frozen=True)
class Consumer:
    """One reader of an epoch: a DataLoader worker of a rank.

    Example:
        >>> Consumer(rank=1, world_size=2, worker_id=1, num_workers=3).index
        3
    """

    rank: int = 0
    world_size: int = 1
    worker_id: int = 0
    num_workers: int = 1

    def __post_init__(self) -> None:
        if self.world_size < 1 or not 0 <= self.rank < self.world_size:
            raise ValueError(f"rank {self.rank} is not in [0, world_size={self.world_size})")
        if self.num_workers < 1 or not 0 <= self.worker_id < self.num_workers:
            raise ValueError(f"worker {self.worker_id} is not in [0, {self.num_workers})")

    @property
    def index(self) -> int:
        """This consumer's number among all `count` of them (the start of its positions)."""
        return self.rank + self.world_size * self.worker_id

    @property
    def count(self) -> int:
        """Readers in the epoch: ranks times workers per rank."""
        return self.world_size * self.num_workers

    @property
    def name(self) -> str:
        """The suffix of progress-bar titles: `""` for a single worker (as upstream), else
        `" (Worker i)"`, with the rank in front when there are several."""
        if self.num_workers == 1 and self.world_size == 1:
            return ""
        if self.world_size == 1:
            return f" (Worker {self.worker_id})"
        return f" (Rank {self.rank}, Worker {self.worker_id})"


def consumer_positions(
    n: int, rank: int, world_size: int, worker_id: int, num_workers: int, even_split: bool = False
) -> range:
    """The epoch positions one consumer reads, in order.

    Args:
        n: positions in the epoch (objects in the listing).
        rank, world_size: this process among the distributed ranks.
        worker_id, num_workers: this DataLoader worker among the rank's workers.
        even_split: deal only `n - n % world_size` positions, so all ranks get `n // world_size`.
    """
    dealt = n - n % world_size if even_split else n
    return range(rank + world_size * worker_id, dealt, world_size * num_workers)


def epoch_order(n: int, seed: int, epoch: int) -> npt.NDArray[np.int64]:
    """A permutation of `range(n)` that depends only on `(seed, epoch)`.

    REQUIRES: `seed >= 0`, `epoch >= 0`.
    """
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, epoch])))
    return rng.permutation(n).astype(np.int64, copy=False)


def resolve_rank(rank: int | None, world_size: int | None) -> tuple[int, int]:
    """`(rank, world_size)`: the arguments when given, else torch.distributed's when it is
    initialized, else the `RANK`/`WORLD_SIZE` environment variables (torchrun sets them), else
    `(0, 1)`.

    Raises:
        ValueError: only one of the two is known, or the rank is out of range.
    """
    if rank is None and world_size is None:
        rank, world_size = _distributed_rank()
    if rank is None or world_size is None:
        raise ValueError("give both rank and world_size, or neither")
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not in [0, world_size={world_size})")
    return rank, world_size


def process_group_rank() -> tuple[int, int] | None:
    """`(rank, world_size)` of this process's initialized torch.distributed group, if any."""
    try:
        import torch.distributed as dist
    except ImportError:  # pragma: no cover - torch built without distributed support
        return None
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return None


def _distributed_rank() -> tuple[int, int]:
    group = process_group_rank()
    if group is not None:
        return group
    rank, world_size = os.environ.get("RANK"), os.environ.get("WORLD_SIZE")
    if rank is not None and world_size is not None:
        return int(rank), int(world_size)
    return 0, 1


def current_consumer(rank: int | None = None, world_size: int | None = None) -> Consumer:
    """The consumer the calling process is: its rank (see `resolve_rank`) and, inside a
    DataLoader worker, its worker id."""
    from torch.utils.data import get_worker_info

    resolved_rank, resolved_world = resolve_rank(rank, world_size)
    info = get_worker_info()
    if info is None:
        return Consumer(resolved_rank, resolved_world)
    return Consumer(resolved_rank, resolved_world, info.id, info.num_workers)
