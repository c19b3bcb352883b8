"""The batch planning of DynamicBatchSampler against a direct model of the upstream rules."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from aistore.pytorch.dynamic_sampler import SATURATION_FACTOR, plan_batches  # noqa: E402


def _model(
    order: list[int],
    sizes: list[int],
    max_size: int,
    drop_last: bool,
    oversized: bool,
    saturation: float,
) -> list[list[int]]:
    """The rules as upstream states them: a cursor that retries a sample that did not fit."""
    out: list[list[int]] = []
    batch: list[int] = []
    total = 0
    k = 0
    while k < len(order):
        i = order[k]
        size = sizes[i]
        if size == 0:
            k += 1
            continue
        if size > max_size:
            if oversized:
                out.append([i])
            k += 1
            continue
        if total + size < max_size:
            batch.append(i)
            total += size
            k += 1
        else:
            if total + size == max_size:
                batch.append(i)
                k += 1
            out.append(batch)
            batch, total = [], 0
    if (batch and not drop_last) or (drop_last and total / max_size > saturation):
        out.append(batch)
    return out


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 50), max_size=60),
    max_size=st.integers(1, 60),
    drop_last=st.booleans(),
    oversized=st.booleans(),
    saturation=st.floats(0, 1),
    data=st.data(),
)
def test_plan_matches_the_upstream_rules(
    sizes: list[int],
    max_size: int,
    drop_last: bool,
    oversized: bool,
    saturation: float,
    data: st.DataObject,
) -> None:
    order = data.draw(st.permutations(range(len(sizes))))
    got = plan_batches(order, sizes, max_size, drop_last, oversized, saturation)
    assert got == _model(list(order), sizes, max_size, drop_last, oversized, saturation)
    for batch in got:
        assert len(batch) == 1 or sum(sizes[i] for i in batch) <= max_size
    seen = [i for batch in got for i in batch]
    assert len(seen) == len(set(seen))


def test_blog_example_batches() -> None:
    sizes = [1_000_000] * 10
    assert [len(b) for b in plan_batches(range(10), sizes, 4_000_000)] == [4, 4, 2]
    assert [len(b) for b in plan_batches(range(10), sizes, 3_000_000)] == [3, 3, 3, 1]
    assert [len(b) for b in plan_batches(range(10), sizes, 3_000_000, drop_last=True)] == [3, 3, 3]
    assert SATURATION_FACTOR == 0.8
