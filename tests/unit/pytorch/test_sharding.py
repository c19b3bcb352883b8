"""The split of an epoch across ranks and workers, and the seeded order: every position exactly
once, equal rank counts with even_split, the same plan everywhere."""

from __future__ import annotations

from collections import Counter

import pytest

pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from aistore.pytorch._sharding import (  # noqa: E402
    Consumer,
    consumer_positions,
    current_consumer,
    epoch_order,
    resolve_rank,
)

sizes = st.integers(min_value=0, max_value=300)
worlds = st.integers(min_value=1, max_value=9)
workers = st.integers(min_value=1, max_value=7)


def _deal(n: int, world_size: int, num_workers: int, even: bool) -> dict[tuple[int, int], range]:
    return {
        (r, w): consumer_positions(n, r, world_size, w, num_workers, even)
        for r in range(world_size)
        for w in range(num_workers)
    }


@settings(max_examples=150, deadline=None)
@given(n=sizes, world_size=worlds, num_workers=workers)
def test_every_position_exactly_once(n: int, world_size: int, num_workers: int) -> None:
    dealt = _deal(n, world_size, num_workers, even=False)
    counts = Counter(p for positions in dealt.values() for p in positions)
    assert sorted(counts) == list(range(n))
    assert set(counts.values()) <= {1}
    per_rank = [sum(len(dealt[r, w]) for w in range(num_workers)) for r in range(world_size)]
    assert max(per_rank) - min(per_rank) <= 1


@settings(max_examples=150, deadline=None)
@given(n=sizes, world_size=worlds, num_workers=workers)
def test_even_split_gives_every_rank_the_same_count(
    n: int, world_size: int, num_workers: int
) -> None:
    dealt = _deal(n, world_size, num_workers, even=True)
    counts = Counter(p for positions in dealt.values() for p in positions)
    assert set(counts.values()) <= {1}
    assert sorted(counts) == list(range(n - n % world_size))
    for r in range(world_size):
        assert sum(len(dealt[r, w]) for w in range(num_workers)) == n // world_size


@settings(max_examples=100, deadline=None)
@given(n=sizes, world_size=worlds, num_workers=workers)
def test_rank_share_does_not_depend_on_the_worker_count(
    n: int, world_size: int, num_workers: int
) -> None:
    for r in range(world_size):
        alone = set(consumer_positions(n, r, world_size, 0, 1))
        shares = [consumer_positions(n, r, world_size, w, num_workers) for w in range(num_workers)]
        together = set().union(*shares)
        assert alone == together


def test_single_rank_is_upstream_round_robin() -> None:
    # Upstream: worker w of W keeps items w, w+W, w+2W... of the listing.
    assert list(consumer_positions(10, 0, 1, 1, 3)) == [1, 4, 7]
    assert list(consumer_positions(10, 0, 1, 0, 1)) == list(range(10))


@settings(max_examples=100, deadline=None)
@given(n=sizes, seed=st.integers(0, 2**63 - 1), epoch=st.integers(0, 10_000))
def test_epoch_order_is_a_reproducible_permutation(n: int, seed: int, epoch: int) -> None:
    order = epoch_order(n, seed, epoch)
    assert sorted(order.tolist()) == list(range(n))
    assert order.tolist() == epoch_order(n, seed, epoch).tolist()


def test_epoch_order_changes_with_epoch_and_seed() -> None:
    base = epoch_order(1000, 1, 0).tolist()
    assert epoch_order(1000, 1, 1).tolist() != base
    assert epoch_order(1000, 2, 0).tolist() != base


def test_resolve_rank_prefers_arguments_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert resolve_rank(None, None) == (0, 1)
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert resolve_rank(None, None) == (2, 4)
    assert resolve_rank(1, 3) == (1, 3)
    assert current_consumer() == Consumer(2, 4, 0, 1)
    with pytest.raises(ValueError):
        resolve_rank(3, 3)
    with pytest.raises(ValueError):
        resolve_rank(1, None)


def test_consumer_names_match_upstream_progress_titles() -> None:
    assert Consumer().name == ""
    assert Consumer(0, 1, 2, 4).name == " (Worker 2)"
    assert Consumer(1, 2, 0, 1).name == " (Rank 1, Worker 0)"
    with pytest.raises(ValueError):
        Consumer(0, 1, 1, 1)
