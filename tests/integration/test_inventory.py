"""Bucket inventories against the real server: create (job), list, show, destroy, consistency."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from urllib3.util.retry import Retry

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.errors import AISError
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.sdk.retry_config import RetryConfig
from aistore.server import LocalServer

ENTRY_IS_DIR = 256

NAMES = sorted(
    {f"d{i % 7}/sub{i % 3}/o{i:05d}" for i in range(3000)}
    | {"a", "a-c", "a/b", "a.b", "z", "ünï/çødé", "sp ace/x"}
)


def put_all(bucket: Bucket, names: list[str]) -> None:
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: bucket.object(n).get_writer().put_content(n.encode()), names))


def build(client: Client, bucket: Bucket, **kwargs: object) -> str:
    job_id = bucket.create_inventory(**kwargs)  # type: ignore[arg-type]
    result = client.job(job_id).wait(timeout=60, verbose=False)
    assert result.success, result.error
    return job_id


def listing(bucket: Bucket, prefix: str = "", page: int = 0, inv: str = "") -> list[str]:
    return [
        e.name for e in bucket.list_all_objects(prefix=prefix, page_size=page, inventory_name=inv)
    ]


@pytest.fixture(scope="module")
def inv_bucket(ais_server: LocalServer) -> Bucket:
    bucket = ais_server.client().bucket(f"inv-{uuid.uuid4().hex[:8]}").create()
    put_all(bucket, NAMES)
    return bucket


@pytest.fixture(scope="module")
def inventory(ais_server: LocalServer, inv_bucket: Bucket) -> str:
    build(ais_server.client(), inv_bucket, name="snap", names_per_chunk=257)
    return "snap"


def test_show_reports_the_snapshot(inv_bucket: Bucket, inventory: str) -> None:
    infos = inv_bucket.show_inventory()
    assert list(infos) == [f"ais/@#/{inv_bucket.name}/{inventory}"]
    info = infos[f"ais/@#/{inv_bucket.name}/{inventory}"]
    assert info.name == inventory and info.ntotal == len(NAMES)
    assert info.chunks == -(-len(NAMES) // 257)
    assert info.finished >= info.started > 0
    assert inv_bucket.show_inventory("no-such") == {}


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    page=st.sampled_from([0, 1, 2, 7, 100, 256, 257, 258, 1000, 5000]),
    prefix=st.sampled_from(["", "a", "a/", "d3/", "d3/sub1/", "d", "ü", "zz", "d6/sub2/o0"]),
)
def test_inventory_listing_equals_regular_listing(
    inv_bucket: Bucket, inventory: str, page: int, prefix: str
) -> None:
    expected = [n for n in NAMES if n.startswith(prefix)]
    assert listing(inv_bucket, prefix, page) == expected
    assert listing(inv_bucket, prefix, page, inv=inventory) == expected


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    page=st.sampled_from([1, 2, 3, 7, 100, 0]),
    prefix=st.sampled_from(["", "a", "a/", "d3", "d3/", "d3/sub1/", "d", "ü", "zz", "sp ace/"]),
)
def test_non_recursive_inventory_listing_equals_regular_one(
    inv_bucket: Bucket, inventory: str, page: int, prefix: str
) -> None:
    # One level: the names directly under the prefix and one entry per directory, page by page
    # (a page may end on a directory: the next one starts past everything under it).
    def one_level(inv: str) -> list[tuple[str, int]]:
        entries = inv_bucket.list_all_objects(
            prefix=prefix, page_size=page, flags=[ListObjectFlag.NO_RECURSION], inventory_name=inv
        )
        return [(e.name, e.flags & ENTRY_IS_DIR) for e in entries]

    assert one_level(inventory) == one_level("")


def test_pages_carry_stored_entries(inv_bucket: Bucket, inventory: str) -> None:
    page = inv_bucket.list_objects(page_size=10, inventory_name=inventory)
    assert [e.name for e in page.entries] == NAMES[:10]
    assert page.continuation_token == NAMES[9]
    assert all(e.size == len(e.name.encode()) and e.is_cached() for e in page.entries)


def test_second_create_needs_force(client: Client, inv_bucket: Bucket, inventory: str) -> None:
    with pytest.raises(AISError) as err:
        inv_bucket.create_inventory(name="other")
    assert err.value.status_code == 400 and "already exists" in err.value.message


def test_bad_requests_are_4xx(client: Client, bucket: Bucket) -> None:
    bucket.object("x").get_writer().put_content(b"x")
    for kwargs in ({"name": "bad name"}, {"name": "a" * 65}, {"names_per_chunk": 1}):
        with pytest.raises(AISError) as err:
            bucket.create_inventory(**kwargs)  # type: ignore[arg-type]
        assert 400 <= err.value.status_code < 500, err.value
    with pytest.raises(AISError) as err:
        bucket.list_all_objects(inventory_name="bad/name")
    assert err.value.status_code == 400
    with pytest.raises(AISError) as err:
        client.bucket("no-such-bucket-inv").create_inventory()
    assert err.value.status_code == 404


def test_destroy_then_list_is_a_clear_error(client: Client, bucket: Bucket) -> None:
    put_all(bucket, ["p/1", "p/2"])
    build(client, bucket, name="tmp")
    assert listing(bucket, inv="tmp") == ["p/1", "p/2"]
    bucket.destroy_inventory()
    assert bucket.show_inventory() == {}
    with pytest.raises(AISError) as err:
        bucket.list_all_objects(inventory_name="tmp")
    assert err.value.status_code == 404 and "does not exist" in err.value.message
    bucket.destroy_inventory()  # idempotent


def test_prefix_and_force_replace(client: Client, bucket: Bucket) -> None:
    put_all(bucket, ["keep/1", "keep/2", "skip/1"])
    build(client, bucket, name="first")
    build(client, bucket, name="second", prefix="keep/", force=True)
    assert list(bucket.show_inventory()) == [f"ais/@#/{bucket.name}/second"]
    assert listing(bucket, inv="second") == ["keep/1", "keep/2"]


def test_empty_bucket_inventory(client: Client, bucket: Bucket) -> None:
    build(client, bucket, name="empty")
    assert listing(bucket, inv="empty") == []
    assert bucket.show_inventory()[f"ais/@#/{bucket.name}/empty"].ntotal == 0


def test_concurrent_puts_during_creation(client: Client, bucket: Bucket) -> None:
    base = [f"base/{i:05d}" for i in range(2000)]
    put_all(bucket, base)
    stop = threading.Event()
    written: list[str] = []

    def writer() -> None:
        i = 0
        while not stop.is_set():
            name = f"new/{i:06d}"
            bucket.object(name).get_writer().put_content(b"n")
            written.append(name)
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        build(client, bucket, name="live", names_per_chunk=100)
    finally:
        stop.set()
        t.join()
    got = listing(bucket, inv="live")
    assert got == sorted(set(got)), "inventory must be sorted and free of duplicates"
    assert set(base) <= set(got)
    assert set(got) <= set(base) | set(written)


def test_corrupt_chunk_is_an_error_not_a_short_list(
    ais_server: LocalServer, client: Client, bucket: Bucket
) -> None:
    put_all(bucket, [f"c/{i:04d}" for i in range(50)])
    build(client, bucket, name="fragile", names_per_chunk=10)
    # The inventory object's header names its upload id; its chunks are %ch/<upload id>/NNNN.
    objfile = next(
        p
        for mp in ais_server.mountpaths
        for p in [
            Path(
                mp,
                "ais",
                ".sys-inventory",
                "%ob",
                "ais\x01",
                "@#\x01",
                f"{bucket.name}\x01",
                "fragile",
            )
        ]
        if p.exists()
    )
    header = objfile.read_bytes()
    meta = msgspec.msgpack.decode(header[16 : 16 + int.from_bytes(header[8:12], "little")])
    chunk_files = [
        p
        for mp in ais_server.mountpaths
        for p in [Path(mp, "ais", ".sys-inventory", "%ch", meta["u"], "0003")]
        if p.exists()
    ]
    assert len(chunk_files) == 1, "inventory chunk 2 (part 3) not found"
    data = bytearray(chunk_files[0].read_bytes())
    data[-3] ^= 0xFF
    chunk_files[0].write_bytes(bytes(data))
    # A damaged chunk is a 500: no retries here, the default policy would retry it for ~90 s.
    no_retry = RetryConfig.default()
    no_retry.http_retry = Retry(total=0, raise_on_status=False)
    strict = ais_server.client(retry_config=no_retry).bucket(bucket.name)
    with pytest.raises(AISError) as err:
        listing(strict, inv="fragile")
    assert err.value.status_code == 500 and "checksum" in err.value.message
