"""The official SDK's remote-bucket calls (spec remote-backend §12) against our server with an
s3:// bucket; run by test_official_remote.py in the official SDK's venv.

argv: endpoint, bucket (exists in S3 with objects "cold/a" and "cold/b", whose sha256 hex
digests are argv[3] and argv[4]).

Prints one JSON object mapping each check's name to "ok" or the error.
"""

import hashlib
import json
import sys
import traceback
from collections.abc import Callable

from aistore import Client
from aistore.sdk.errors import ErrObjNotFound
from aistore.sdk.list_object_flag import ListObjectFlag

ENDPOINT, BUCKET, SHA_A, SHA_B = sys.argv[1:5]
results: dict[str, str] = {}


def check(fn: Callable[[], None]) -> Callable[[], None]:
    try:
        fn()
        results[fn.__name__] = "ok"
    except Exception:  # every failure is reported, none stops the run
        results[fn.__name__] = traceback.format_exc(limit=6)
    return fn


client = Client(ENDPOINT)
bucket = client.bucket(BUCKET, provider="aws")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@check
def head_bucket_adds_it() -> None:
    props = bucket.head()
    assert "aws" in str(props).lower() or props is not None


@check
def list_remote_not_cached() -> None:
    names = {e.name: e for e in bucket.list_all_objects(prefix="cold/")}
    assert sorted(names) == ["cold/a", "cold/b"], sorted(names)
    assert not any(e.is_cached() for e in names.values())


@check
def head_uncached_object() -> None:
    attrs = bucket.object("cold/a").head()
    assert not attrs.present, "not cached yet"
    assert attrs.size > 0


@check
def cold_then_warm_get() -> None:
    obj = bucket.object("cold/a")
    assert sha(obj.get_reader().read_all()) == SHA_A
    assert sha(obj.get_reader().read_all()) == SHA_A
    assert obj.head().present


@check
def range_get_of_uncached() -> None:
    whole = bucket.object("cold/b").get_reader(byte_range="bytes=0-99").read_all()
    assert len(whole) == 100
    assert sha(bucket.object("cold/b").get_reader().read_all()) == SHA_B


@check
def list_cached_only() -> None:
    cached = sorted(e.name for e in bucket.list_all_objects(flags=[ListObjectFlag.CACHED]))
    assert cached == ["cold/a", "cold/b"], cached


@check
def latest_get() -> None:
    assert sha(bucket.object("cold/a").get_reader(latest=True).read_all()) == SHA_A


@check
def put_writes_through() -> None:
    bucket.object("written/by-official").get_writer().put_content(b"through the official SDK")
    assert (
        bucket.object("written/by-official").get_reader().read_all() == b"through the official SDK"
    )


@check
def missing_object() -> None:
    try:
        bucket.object("cold/none").get_reader().read_all()
    except ErrObjNotFound:
        return
    raise AssertionError("expected ErrObjNotFound")


@check
def evict_keeps_cloud_data() -> None:
    bucket.evict(keep_md=True)
    cached = list(bucket.list_all_objects(flags=[ListObjectFlag.CACHED]))
    assert cached == [], [e.name for e in cached]
    assert sha(bucket.object("cold/a").get_reader().read_all()) == SHA_A


print(json.dumps({"checks": results}))
