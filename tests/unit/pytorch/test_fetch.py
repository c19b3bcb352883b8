"""Ordered read-ahead: same results and order as a plain loop, errors at their turn, bounded
work in flight, and a closed consumer stops the pool."""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator

import pytest

pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from aistore.pytorch._fetch import EtlName, read_ahead  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(items=st.lists(st.integers(), max_size=40), depth=st.integers(0, 6))
def test_same_items_in_the_same_order(items: list[int], depth: int) -> None:
    assert list(read_ahead(iter(items), lambda x: x * 3, depth)) == [x * 3 for x in items]


@pytest.mark.parametrize("depth", [0, 3])
def test_error_comes_at_its_items_turn(depth: int) -> None:
    def fn(x: int) -> int:
        if x == 5:
            raise KeyError(x)
        return x

    got: list[int] = []
    with pytest.raises(KeyError):
        for value in read_ahead(iter(range(10)), fn, depth):
            got.append(value)
    assert got == [0, 1, 2, 3, 4]


def test_in_flight_is_bounded_by_depth() -> None:
    lock = threading.Lock()
    running = peak = 0

    def fn(x: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.005)
        with lock:
            running -= 1
        return x

    pulled = 0

    def source() -> Iterator[int]:
        nonlocal pulled
        for i in range(30):
            pulled += 1
            yield i

    gen = read_ahead(source(), fn, 4)
    assert next(gen) == 0
    assert pulled <= 5  # the one handed out and at most 4 ahead
    assert list(gen) == list(range(1, 30))
    assert peak <= 4


def test_closing_the_consumer_cancels_the_rest() -> None:
    started: list[int] = []

    def fn(x: int) -> int:
        started.append(x)
        time.sleep(0.01)
        return x

    gen = read_ahead(iter(range(1000)), fn, 2)
    assert isinstance(gen, Generator)
    assert next(gen) == 0
    gen.close()
    time.sleep(0.05)
    assert len(started) <= 4


def test_etl_name_sets_the_query_parameter() -> None:
    params: dict[str, str] = {"provider": "ais"}
    EtlName("resize").update_qparams(params)
    assert params == {"provider": "ais", "etl_name": "resize"}
