"""AISBatchIterDataset with the real server: every object once, in listing order, across
buckets and prefixes, in DataLoader workers, and the err_msg rules of the 2.0.0 dataset."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from torch.utils.data import DataLoader  # noqa: E402

from aistore.pytorch import AISBaseIterDataset  # noqa: E402
from aistore.pytorch.batch_iter_dataset import AISBatchIterDataset  # noqa: E402
from aistore.sdk.ais_source import AISSource  # noqa: E402
from aistore.sdk.bucket import Bucket  # noqa: E402
from aistore.sdk.client import Client  # noqa: E402
from aistore.sdk.errors import ErrObjNotFound  # noqa: E402
from aistore.sdk.obj.object import Object  # noqa: E402
from aistore.sdk.request_client import RequestClient  # noqa: E402


class Names(AISSource):
    """Given object names of one bucket, listed as they are (missing ones included)."""

    def __init__(self, bucket: Bucket, names: list[str]) -> None:
        self._bucket = bucket
        self._names = names

    @property
    def client(self) -> RequestClient:
        return self._bucket.client

    def list_all_objects_iter(self, prefix: str = "", props: str = "name,size") -> Iterable[Object]:
        return (self._bucket.object(n) for n in self._names if n.startswith(prefix))

    def list_urls(self, prefix: str = "", etl: Any = None) -> Iterable[str]:
        return (f"ais://{self._bucket.name}/{n}" for n in self._names if n.startswith(prefix))


@pytest.fixture
def two_buckets(client: Client) -> Iterator[tuple[Bucket, Bucket, dict[str, bytes]]]:
    tag = uuid.uuid4().hex[:8]
    b1, b2 = client.bucket(f"pt1-{tag}").create(), client.bucket(f"pt2-{tag}").create()
    data: dict[str, bytes] = {}
    for b, n in ((b1, 45), (b2, 13)):
        for i in range(n):
            name = f"{'train' if i % 3 else 'val'}/{i:03d}"
            data[f"{b.name}/{name}"] = os.urandom(100 + i * 37)
            b.object(name).get_writer().put_content(data[f"{b.name}/{name}"])
    yield b1, b2, data
    b1.delete(missing_ok=True)
    b2.delete(missing_ok=True)


def _by_bucket(
    b1: Bucket, b2: Bucket, data: dict[str, bytes], bucket: Bucket
) -> list[tuple[str, bytes]]:
    return sorted(
        (k.split("/", 1)[1], v) for k, v in data.items() if k.startswith(bucket.name + "/")
    )


def test_all_objects_in_listing_order(client: Client, two_buckets: Any) -> None:
    b1, b2, data = two_buckets
    for fmt, streaming in ((".tar", True), (".zip", True), (".tgz", False)):
        ds = AISBatchIterDataset(
            [b1, b2], client, max_batch_size=7, output_format=fmt, streaming=streaming
        )
        got = list(ds)
        want = _by_bucket(b1, b2, data, b1) + _by_bucket(b1, b2, data, b2)
        assert got == want, fmt
    assert len(ds) == len(data)
    assert isinstance(ds, AISBaseIterDataset)


def test_prefix_map(client: Client, two_buckets: Any) -> None:
    b1, b2, data = two_buckets
    ds = AISBatchIterDataset([b1, b2], client, prefix_map={b1: "val/", b2: ["train/00", "val/"]})
    names = [n for n, _ in ds]
    assert names == (
        [n for n, _ in _by_bucket(b1, b2, data, b1) if n.startswith("val/")]
        + [n for n, _ in _by_bucket(b1, b2, data, b2) if n.startswith("train/00")]
        + [n for n, _ in _by_bucket(b1, b2, data, b2) if n.startswith("val/")]
    )


@pytest.mark.parametrize("partition", [False, True])
def test_dataloader_workers_share_without_duplicates(
    client: Client, two_buckets: Any, partition: bool
) -> None:
    b1, b2, data = two_buckets
    ds = AISBatchIterDataset(
        [b1, b2], client, max_batch_size=5, partition_sources_by_worker=partition
    )
    pickle.loads(pickle.dumps(ds))  # what a spawned worker receives
    loader = DataLoader(ds, batch_size=None, num_workers=2)
    got = sorted((n, bytes(d)) for n, d in loader)
    want = sorted(_by_bucket(b1, b2, data, b1) + _by_bucket(b1, b2, data, b2))
    assert got == want


def test_ranks_split_and_epochs_shuffle(client: Client, two_buckets: Any) -> None:
    b1, b2, data = two_buckets
    everything = sorted(_by_bucket(b1, b2, data, b1) + _by_bucket(b1, b2, data, b2))

    def epoch(rank: int, n: int) -> list[tuple[str, bytes]]:
        ds = AISBatchIterDataset(
            [b1, b2], client, max_batch_size=4, shuffle=True, seed=7, rank=rank, world_size=3
        )
        ds.set_epoch(n)
        return list(ds)

    for n in (0, 1):
        shares = [epoch(rank, n) for rank in range(3)]
        assert sorted(item for share in shares for item in share) == everything
        assert max(map(len, shares)) - min(map(len, shares)) <= 1
    first, second = epoch(0, 0), epoch(0, 1)
    assert first == epoch(0, 0)  # the same seed and epoch: the same order
    assert first != second  # another epoch: another permutation


def test_missing_objects(client: Client, two_buckets: Any) -> None:
    b1, _, data = two_buckets
    names = ["val/000", "no/such/object", "train/001"]
    strict = AISBatchIterDataset(Names(b1, names), client, max_batch_size=3)
    # Without cont_on_err the server refuses the batch (404) before sending anything.
    with pytest.raises(ErrObjNotFound, match="no/such/object"):
        list(strict)
    lenient = AISBatchIterDataset(Names(b1, names), client, max_batch_size=3, cont_on_err=True)
    assert [n for n, _ in lenient] == ["val/000", "train/001"]
    for streaming in (True, False):
        ds = AISBatchIterDataset(Names(b1, names), client, cont_on_err=True, streaming=streaming)
        assert [d for _, d in ds] == [data[f"{b1.name}/val/000"], data[f"{b1.name}/train/001"]]


def test_arguments(client: Client, two_buckets: Any) -> None:
    b1, _, _ = two_buckets
    with pytest.raises(ValueError):
        AISBatchIterDataset([], client)
    with pytest.raises(ValueError):
        AISBatchIterDataset(b1, client, max_batch_size=0)
    with pytest.raises(TypeError):
        AISBatchIterDataset(b1, client, batch_size=3)  # type: ignore[call-arg]
    ds = AISBatchIterDataset(b1, client, show_progress=True, max_batch_size=64)
    assert ds.max_batch_size == 64 and ds.output_format == ".tar" and ds.streaming
    assert sum(1 for _ in ds) == 45


class Recorded(AISBatchIterDataset):
    """Records the names of each GetBatch request as it is sent."""

    sent: list[list[str]]

    def _send(self, objects: list[Object]) -> Any:
        self.sent.append([o.name for o in objects])
        return super()._send(objects)


def _wait_for(condition: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_next_request_is_sent_while_items_are_handed_out(client: Client, two_buckets: Any) -> None:
    b1, _, data = two_buckets
    ds = Recorded(b1, client, max_batch_size=5)
    ds.sent = []
    items = iter(ds)
    first = next(items)
    names = [n for n, _ in _by_bucket(b1, b1, data, b1)]
    assert first[0] == names[0]
    # The second request goes out before the first one's items are all taken, and no third.
    assert _wait_for(lambda: len(ds.sent) == 2)
    assert ds.sent == [names[:5], names[5:10]]
    assert [n for n, _ in items] == names[1:]
    assert len(ds.sent) == 9


def test_abandoned_epoch_stops_reading_ahead(client: Client, two_buckets: Any) -> None:
    b1, _, data = two_buckets
    ds = Recorded(b1, client, max_batch_size=5)
    ds.sent = []
    items = iter(ds)
    next(items)
    items.close()  # a consumer that breaks out of its loop
    assert _wait_for(
        lambda: not any(t.name.startswith("ais-read-ahead") for t in threading.enumerate())
    )
    assert len(ds.sent) <= 2
    # The connections are usable again: the next epoch reads everything.
    assert [n for n, _ in ds] == [n for n, _ in _by_bucket(b1, b1, data, b1)]


@pytest.mark.parametrize("shuffle", [False, True])
def test_resume_continues_where_it_stopped(client: Client, two_buckets: Any, shuffle: bool) -> None:
    b1, b2, _ = two_buckets

    def make() -> AISBatchIterDataset:
        ds = AISBatchIterDataset([b1, b2], client, max_batch_size=5, shuffle=shuffle, seed=3)
        ds.set_epoch(1)
        return ds

    full = list(make())
    # Mid-batch, at a batch's end, and with the next batch already requested.
    for k in (0, 1, 4, 5, 12, 57, 58):
        ds = make()
        it = iter(ds)
        head = [next(it) for _ in range(k)]
        state = ds.state_dict()
        assert state["done"] == k
        resumed = make()
        resumed.load_state_dict(pickle.loads(pickle.dumps(state)))
        assert head + list(resumed) == full, k


@pytest.mark.parametrize("workers", [0, 2])
def test_resume_with_stateful_dataloader(client: Client, two_buckets: Any, workers: int) -> None:
    sdl = pytest.importorskip("torchdata.stateful_dataloader")
    b1, b2, _ = two_buckets

    def loader() -> Any:
        ds = AISBatchIterDataset([b1, b2], client, max_batch_size=4, shuffle=True, seed=5)
        return sdl.StatefulDataLoader(ds, batch_size=3, num_workers=workers)

    def names(batches: Any) -> list[str]:
        return [n for names, _ in batches for n in names]

    full = names(loader())
    first = loader()
    it = iter(first)
    head = names(next(it) for _ in range(5))
    state = first.state_dict()
    del it
    second = loader()
    second.load_state_dict(state)
    assert head + names(second) == full


def test_import_aistore_without_torch() -> None:
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import aistore, aistore.sdk.batch\n"
        "from aistore.sdk import Batch\n"
        "try:\n"
        "    import aistore.pytorch.batch_iter_dataset\n"
        "except ImportError as e:\n"
        "    print('ok', 'torch' in str(e))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd="/", check=True
    )
    assert out.stdout.strip() == "ok True", out.stderr
