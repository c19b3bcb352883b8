"""AISPlanDataset over a remote s3:// bucket (moto in server mode behind the counting proxy):
the reader asks the cluster to prefetch the objects of its next steps before it reads them, a
window at a time, and every object reaches S3 once."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

torch = pytest.importorskip("torch")
boto3 = pytest.importorskip("boto3")

from _s3 import FaultProxy, remote_s3  # noqa: E402

from aistore.pytorch.plan import DatasetSnapshot  # noqa: E402
from aistore.pytorch.plan_dataset import AISPlanDataset  # noqa: E402
from aistore.sdk.list_object_flag import ListObjectFlag  # noqa: E402
from aistore.server import LocalServer  # noqa: E402


@pytest.fixture(scope="module")
def remote() -> Iterator[tuple[LocalServer, FaultProxy, Any]]:
    with remote_s3() as r:
        yield r.server, r.proxy, r.s3


def test_next_window_is_prefetched_before_it_is_read(remote: Any) -> None:
    srv, proxy, s3 = remote
    name = f"plan-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=name)
    contents = {f"o{i:02d}": os.urandom(500 + i) for i in range(14)}
    for key, body in contents.items():
        s3.put_object(Bucket=name, Key=key, Body=body)
    bucket = srv.client().bucket(name, provider="aws")
    snap = DatasetSnapshot.from_sources(bucket)
    assert len(snap) == 14

    def cached() -> set[str]:
        return {e.name for e in bucket.list_all_objects(flags=[ListObjectFlag.CACHED])}

    ds = AISPlanDataset(
        snap, 2, seed=4, read_ahead=0, request_steps=1, prefetch_steps=3, collate_fn=None
    )
    order = [snap.object_name(int(i)) for i in ds.plan().order]
    it = iter(ds)
    first = next(it)
    assert [n for n, _ in first] == order[:2]
    # Two windows of 3 steps (12 objects) are asked for before the first step is read: the
    # second is fetched into the cluster while the first is read. Step 6 is not asked for yet.
    deadline = time.monotonic() + 30
    while not set(order[:12]) <= cached() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert set(order[:12]) <= cached(), "the first two windows are prefetched"
    assert not cached() & set(order[12:]), "the third window is not asked for yet"
    rest = [item for batch in it for item in batch]
    assert dict([*first, *rest]) == contents
    for key in contents:
        assert proxy.count("GET", f"/{name}/{key}") == 1, key
