"""Epoch plans without a server: the orders are permutations, deterministic per (seed, epoch),
shard-aware where asked; the layout deals every position once for any world size, worker count
and batch size; checkpoints taken under one layout resume under another with nothing repeated
or lost (the arithmetic `AISPlanDataset` runs; tests/integration/test_pytorch_plan.py runs the
dataset itself against the server)."""

from __future__ import annotations

import inspect
import pickle
from collections import Counter

import pytest

pytest.importorskip("torch")

import numpy as np  # noqa: E402
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from aistore.pytorch.plan import (  # noqa: E402
    DatasetChangedError,
    EpochPlan,
    PlanCheckpoint,
    SnapshotDiff,
    num_steps,
    reader_steps,
    step_span,
)

Layout = tuple[int, int, int]  # world size, workers per rank, batch size per rank

layouts = st.tuples(
    st.integers(min_value=1, max_value=9),
    st.integers(min_value=1, max_value=5),
    st.integers(min_value=1, max_value=7),
)


def _rank_steps(n: int, start: int, layout: Layout, rank: int) -> list[list[int]]:
    """The batches (positions) a rank's DataLoader delivers, in delivery order: the loader asks
    worker `i % W` for its `i`-th batch, skipping exhausted workers (in-order delivery)."""
    world, workers, batch = layout
    total = num_steps(n, start, world, batch)
    queues = []
    for w in range(workers):
        spans = [
            step_span(n, start, s, rank, world, batch) for s in reader_steps(total, w, workers)
        ]
        queues.append([list(range(a, b)) for a, b in spans if b > a])
    delivered: list[list[int]] = []
    alive = list(range(workers))
    i = 0
    while alive:
        w = alive[i % len(alive)]
        if queues[w]:
            delivered.append(queues[w].pop(0))
            i += 1
        else:
            alive.remove(w)
            i = alive.index(w + 1) if w + 1 in alive else 0
    return delivered


def _run(n: int, start: int, layout: Layout, stop_after: int | None) -> tuple[list[int], int]:
    """Every rank delivers `stop_after` batches (all, with None) and checkpoints; returns the
    positions delivered and the checkpoint's `consumed`, as `track` counts it on every rank (a
    rank that has no share of a short last step has one batch fewer, and has not finished
    before it asks for the next)."""
    world, _, batch = layout
    got: list[int] = []
    for rank in range(world):
        batches = _rank_steps(n, start, layout, rank)
        got += [p for b in batches[:stop_after] for p in b]
    consumed = n if stop_after is None else min(n, start + stop_after * world * batch)
    return got, consumed


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(min_value=0, max_value=400),
    first=layouts,
    second=layouts,
    third=layouts,
    stops=st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=2),
)
@example(n=100, first=(1, 2, 4), second=(8, 3, 2), third=(3, 1, 5), stops=[3, 2])
@example(n=97, first=(8, 4, 3), second=(3, 2, 7), third=(1, 1, 1), stops=[2])
@example(n=24, first=(2, 2, 3), second=(5, 1, 2), third=(1, 1, 1), stops=[4])  # at the end
def test_resume_under_other_layouts_delivers_each_position_once(
    n: int, first: Layout, second: Layout, third: Layout, stops: list[int]
) -> None:
    runs = [first, second, third][: len(stops) + 1]
    got: list[int] = []
    start = 0
    for layout, stop in zip(runs, [*stops, None], strict=True):
        part, consumed = _run(n, start, layout, stop)
        assert consumed >= start
        got += part
        # Exactly the positions before the checkpoint were delivered.
        assert Counter(got) == Counter(range(consumed))
        start = consumed
    assert sorted(got) == list(range(n))


@settings(max_examples=200, deadline=None)
@given(n=st.integers(min_value=0, max_value=300), layout=layouts)
def test_workers_deliver_steps_in_order_and_ranks_get_batch_size(n: int, layout: Layout) -> None:
    world, workers, batch = layout
    total = num_steps(n, 0, world, batch)
    for rank in range(world):
        delivered = _rank_steps(n, 0, layout, rank)
        flat = [p for b in delivered for p in b]
        assert flat == sorted(flat)
        assert all(len(b) == batch for b in delivered[: total - 1])
        assert len(delivered) in (total, total - 1)
    steps = sorted(s for w in range(workers) for s in reader_steps(total, w, workers))
    assert steps == list(range(total))


@settings(max_examples=100, deadline=None)
@given(n=st.integers(min_value=1, max_value=300), layout=layouts, data=st.data())
def test_a_worker_resumes_its_own_steps(n: int, layout: Layout, data: st.DataObject) -> None:
    _, workers, _ = layout
    total = num_steps(n, 0, layout[0], layout[2])
    for w in range(workers):
        mine = list(reader_steps(total, w, workers))
        k = data.draw(st.integers(min_value=0, max_value=len(mine)))
        done = mine[k - 1] + 1 if k else 0
        assert list(reader_steps(total, w, workers, done)) == mine[k:]


@settings(max_examples=100, deadline=None)
@given(
    counts=st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=30),
    window=st.integers(min_value=1, max_value=50),
    seed=st.integers(min_value=0, max_value=2**32),
    epoch=st.integers(min_value=0, max_value=1000),
)
def test_shard_shuffle_keeps_each_shard_within_a_window(
    counts: list[int], window: int, seed: int, epoch: int
) -> None:
    n = sum(counts)
    plan = EpochPlan.build(
        n, seed=seed, epoch=epoch, shuffle="shards", shard_counts=counts, window=window
    )
    assert sorted(plan.order.tolist()) == list(range(n))
    where = np.empty(n, dtype=np.int64)
    where[plan.order] = np.arange(n)
    first = 0
    for c in counts:
        if c:
            span = where[first : first + c]
            assert span.max() - span.min() + 1 <= c + 2 * window - 2
        first += c


@pytest.mark.parametrize("shuffle", ["none", "full", "shards"])
def test_plans_are_deterministic_per_seed_and_epoch(shuffle: str) -> None:
    def order(seed: int, epoch: int) -> list[int]:
        plan = EpochPlan.build(500, seed=seed, epoch=epoch, shuffle=shuffle, window=7)  # type: ignore[arg-type]
        assert sorted(plan.order.tolist()) == list(range(500))
        return plan.order.tolist()

    assert order(1, 2) == order(1, 2)
    if shuffle == "none":
        assert order(1, 2) == list(range(500))
    else:
        assert order(1, 2) != order(1, 3) and order(1, 2) != order(2, 2)


def test_plan_fingerprint_names_the_recipe_not_the_epoch() -> None:
    def fp(**kwargs: object) -> str:
        args: dict[str, object] = {"seed": 1, "epoch": 0, "shuffle": "full", "dataset": "d"}
        args.update(kwargs)
        return EpochPlan.build(10, **args).fingerprint  # type: ignore[arg-type]

    assert fp() == fp(epoch=5)
    assert len({fp(), fp(seed=2), fp(shuffle="none"), fp(dataset="e")}) == 4


def test_plan_arguments_are_checked() -> None:
    with pytest.raises(ValueError):
        EpochPlan.build(3, seed=-1, epoch=0)
    with pytest.raises(ValueError):
        EpochPlan.build(3, seed=0, epoch=0, shuffle="random")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        EpochPlan.build(3, seed=0, epoch=0, shuffle="shards", shard_counts=[1, 1])
    with pytest.raises(ValueError):
        EpochPlan.build(3, seed=0, epoch=0, window=0)


def test_checkpoint_round_trip_and_worker_states() -> None:
    ckpt = PlanCheckpoint(plan="p", dataset="d", samples=50, epoch=3, consumed=20)
    assert PlanCheckpoint.from_dict(ckpt.to_dict()) == ckpt
    assert len(pickle.dumps(ckpt.to_dict())) < 200
    worker = {**ckpt.to_dict(), "consumed": None, "start": 4, "world_size": 2, "batch_size": 3}
    with pytest.raises(ValueError, match="from_loader_state"):
        PlanCheckpoint.from_dict(worker)
    # A StatefulDataLoader-like nesting: the run delivered every step below the highest.
    loader = {
        "_snapshot": {
            "w0": {"dataset_state": {**worker, "steps": 5}},
            "w1": [{**worker, "steps": 4}],
        }
    }
    assert PlanCheckpoint.from_loader_state(loader).consumed == 4 + 5 * 6
    assert (
        PlanCheckpoint.from_loader_state({**loader, "_steps_since_snapshot": 2}).consumed
        == 4 + 7 * 6
    )
    loader["_snapshot"]["w0"]["dataset_state"]["steps"] = 9  # type: ignore[index]
    assert PlanCheckpoint.from_loader_state(loader).consumed == 50
    with pytest.raises(ValueError):
        PlanCheckpoint.from_loader_state({"x": 1})


def test_changes_are_named() -> None:
    diff = SnapshotDiff(
        added=("ais://b/x",), removed=(), rewritten=tuple(f"n{i}" for i in range(7))
    )
    assert diff.describe() == "1 object added (ais://b/x), 7 rewritten (n0, n1, n2, n3, n4, ...)"
    assert not SnapshotDiff((), (), ())
    err = pickle.loads(pickle.dumps(DatasetChangedError("changed", added=["a"], removed=["b"])))
    assert (str(err), err.added, err.removed, err.rewritten) == ("changed", ["a"], ["b"], [])


def test_public_names_are_documented() -> None:
    import aistore.pytorch.plan as plan
    import aistore.pytorch.plan_dataset as plan_dataset

    for module in (plan, plan_dataset):
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, type) or inspect.isfunction(value):  # not a type alias
                assert value.__doc__, name
