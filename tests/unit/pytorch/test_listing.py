"""The compact listing: names, sizes and buckets survive the round trip through flat buffers
and pickling, and the SDK Objects it builds address the right bucket (no request is sent)."""

from __future__ import annotations

import pickle

import pytest

pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from aistore.pytorch._listing import ListingBuilder, source_prefixes  # noqa: E402
from aistore.sdk.client import Client  # noqa: E402

_client = Client("http://127.0.0.1:9")  # never contacted: building Objects sends nothing
_buckets = [_client.bucket("a"), _client.bucket("b"), _client.bucket("a", provider="s3")]

names = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=30)
rows = st.lists(st.tuples(st.integers(0, 2), names, st.integers(-1, 2**40)), max_size=40)


@settings(max_examples=60, deadline=None)
@given(rows=rows)
def test_round_trip(rows: list[tuple[int, str, int]]) -> None:
    builder = ListingBuilder()
    for b, name, size in rows:
        bucket = _buckets[b]
        builder.add(builder.bucket_id(bucket.client, bucket._details()), name, size)
    assert [builder.name(i) for i in range(len(builder))] == [r[1] for r in rows]
    listing = builder.finish()
    for listing_ in (listing, pickle.loads(pickle.dumps(listing))):
        assert len(listing_) == len(rows)
        assert listing_.sizes.tolist() == [r[2] for r in rows]
        for i, (b, name, size) in enumerate(rows):
            obj = listing_.object(i)
            assert obj.name == listing_.name(i) == name
            assert obj.bucket_name == _buckets[b].name
            assert obj.bucket_provider == _buckets[b].provider
            if size < 0:
                assert obj.props_cached is None
            else:
                assert obj.props_cached is not None
                assert obj.props_cached.size == size
                assert obj.props_cached.name == name
    assert listing.fingerprint() == pickle.loads(pickle.dumps(listing)).fingerprint()


def test_index_errors_and_negative_indices() -> None:
    builder = ListingBuilder()
    bid = builder.bucket_id(_buckets[0].client, _buckets[0]._details())
    for name in ("x", "y", "z"):
        builder.add(bid, name, 1)
    listing = builder.finish()
    assert listing.name(-1) == "z"
    with pytest.raises(IndexError):
        listing.object(3)
    with pytest.raises(IndexError):
        listing.name(-4)
    with pytest.raises(TypeError):
        listing.name("0")  # type: ignore[arg-type]
    assert not listing.sizes.flags.writeable


def test_fingerprint_tells_listings_apart() -> None:
    def fp(names: list[str]) -> str:
        builder = ListingBuilder()
        bid = builder.bucket_id(_buckets[0].client, _buckets[0]._details())
        for name in names:
            builder.add(bid, name, 0)
        return builder.finish().fingerprint()

    assert fp(["ab", "c"]) != fp(["a", "bc"])
    assert fp(["a", "b"]) != fp(["b", "a"])
    assert fp(["a", "b"]) == fp(["a", "b"])


def test_prefix_map_matches_by_identity() -> None:
    bucket = _buckets[0]
    prefix_map = {bucket: ["p1/", "p2/"]}
    assert source_prefixes(prefix_map, bucket) == ["p1/", "p2/"]
    assert source_prefixes(prefix_map, _client.bucket("a")) == [""]  # a fresh instance
    assert source_prefixes({bucket: "x/"}, bucket) == ["x/"]
    assert source_prefixes({bucket: None}, bucket) == [""]
