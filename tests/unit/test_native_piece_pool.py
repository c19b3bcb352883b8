"""aistore._native.PiecePool: stream pieces filled again only once nobody but the pool holds
them (no variable, view, numpy array or slice of the whole), with a fresh hash, a bounded
number kept, and nothing kept of other sizes or with a zero limit."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from aistore._native import FillableBytes, PiecePool

SIZE = 4096


def _piece(pool: PiecePool, fill: bytes) -> bytes:
    """A piece of `pool` filled with `fill`, taken."""
    f = pool.fillable(len(fill))
    with memoryview(f) as view:
        view[:] = fill
    return f.take()


def test_a_dropped_piece_is_filled_again() -> None:
    pool = PiecePool(SIZE, 4 * SIZE)
    first = _piece(pool, b"a" * SIZE)
    first_id = id(first)
    assert (pool.kept, pool.idle_bytes, pool.allocated) == (1, 0, 1)
    del first
    assert pool.idle_bytes == SIZE
    second = _piece(pool, b"b" * SIZE)
    assert id(second) == first_id and second == b"b" * SIZE
    assert (pool.reused, pool.allocated) == (1, 1)


@pytest.mark.parametrize(
    "hold",
    [
        lambda b: b,
        memoryview,
        lambda b: np.frombuffer(b, dtype=np.uint8),
        lambda b: b[:],  # the whole slice is the object itself
        lambda b: {b: 1},
        lambda b: [b],
    ],
    ids=["variable", "memoryview", "numpy", "slice", "dict key", "list"],
)
def test_a_piece_anyone_holds_is_never_filled(hold: object) -> None:
    pool = PiecePool(SIZE, 4 * SIZE)
    held = hold(_piece(pool, b"a" * SIZE))  # type: ignore[operator]
    gc.collect()
    assert pool.idle_bytes == 0
    other = _piece(pool, b"b" * SIZE)
    assert (pool.reused, pool.allocated) == (0, 2)
    seen = held if not isinstance(held, dict) else next(iter(held))
    seen = seen if not isinstance(seen, list) else seen[0]
    assert bytes(seen) == b"a" * SIZE and other == b"b" * SIZE
    del held, seen
    assert pool.idle_bytes == SIZE


def test_a_refilled_piece_hashes_its_new_contents() -> None:
    pool = PiecePool(SIZE, SIZE)
    piece = _piece(pool, b"a" * SIZE)
    assert hash(piece) == hash(b"a" * SIZE)  # cached in the object
    del piece
    again = _piece(pool, b"b" * SIZE)
    assert pool.reused == 1
    assert hash(again) == hash(b"b" * SIZE)
    assert {b"b" * SIZE: 1}[again] == 1


def test_kept_pieces_are_bounded() -> None:
    pool = PiecePool(SIZE, 3 * SIZE + SIZE // 2)
    assert pool.limit == 3 * SIZE
    pieces = [_piece(pool, bytes([i]) * SIZE) for i in range(5)]
    assert pool.kept == 3  # the oldest were let go
    assert [p[0] for p in pieces] == [0, 1, 2, 3, 4]
    del pieces
    assert (pool.kept, pool.idle_bytes) == (3, 3 * SIZE)
    pool.clear()
    assert (pool.kept, pool.idle_bytes) == (0, 0)


def test_only_pieces_of_its_size_are_kept() -> None:
    pool = PiecePool(SIZE, 4 * SIZE)
    small = _piece(pool, b"s" * 100)
    del small
    assert pool.kept == 0
    FillableBytes(SIZE).take()  # not the pool's
    assert pool.kept == 0


def test_zero_limit_keeps_nothing() -> None:
    pool = PiecePool(SIZE, 0)
    del_me = _piece(pool, b"a" * SIZE)
    del del_me
    _piece(pool, b"b" * SIZE)
    assert (pool.kept, pool.reused, pool.allocated) == (0, 0, 2)


def test_a_piece_dropped_untaken_is_kept() -> None:
    """Pieces of a cancelled stream were seen by nobody: they serve the next one."""
    pool = PiecePool(SIZE, 4 * SIZE)
    f = pool.fillable(SIZE)
    view = memoryview(f)
    del f
    assert pool.kept == 0  # the view keeps it alive
    view.release()
    del view
    assert (pool.kept, pool.idle_bytes) == (1, SIZE)
    assert _piece(pool, b"c" * SIZE) == b"c" * SIZE and pool.reused == 1


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        PiecePool(0, 1)
    with pytest.raises(ValueError):
        PiecePool(SIZE, -1)
    with pytest.raises(ValueError):
        PiecePool(SIZE, SIZE).fillable(-1)
