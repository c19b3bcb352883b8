"""AISMapDataset, AISIterDataset and DynamicBatchSampler against the real server, in real
DataLoaders: items and order as upstream, every sample exactly once across workers and ranks,
seeded shuffles, the listing cache, mid-epoch resume, object groups without a HEAD each."""

from __future__ import annotations

import inspect
import os
import pickle
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from torch.utils.data import DataLoader  # noqa: E402

from aistore.pytorch import (  # noqa: E402
    AISBaseIterDataset,
    AISBaseMapDataset,
    AISIterDataset,
    AISMapDataset,
    AISParallelMapDataset,
    AISShardReader,
    DynamicBatchSampler,
)
from aistore.pytorch.batch_iter_dataset import AISBatchIterDataset  # noqa: E402
from aistore.sdk.bucket import Bucket  # noqa: E402
from aistore.sdk.client import Client  # noqa: E402
from aistore.sdk.errors import AISError  # noqa: E402
from aistore.sdk.multiobj.object_range import ObjectRange  # noqa: E402
from aistore.sdk.obj.object import Object  # noqa: E402

Item = tuple[str, bytes]


@pytest.fixture(scope="module")
def data(ais_server: Any) -> Iterator[tuple[Bucket, Bucket, dict[str, bytes]]]:
    """Two buckets: 37 objects under train/ and val/, and 11 under shard-NN."""
    client = ais_server.client()
    tag = uuid.uuid4().hex[:8]
    b1, b2 = client.bucket(f"ds1-{tag}").create(), client.bucket(f"ds2-{tag}").create()
    contents: dict[str, bytes] = {}
    for i in range(37):
        name = f"{'val' if i % 4 == 0 else 'train'}/{i:03d}.bin"
        contents[f"{b1.name}/{name}"] = os.urandom(50 + 13 * i)
        b1.object(name).get_writer().put_content(contents[f"{b1.name}/{name}"])
    for i in range(11):
        name = f"shard-{i:02d}"
        contents[f"{b2.name}/{name}"] = os.urandom(1000)
        b2.object(name).get_writer().put_content(contents[f"{b2.name}/{name}"])
    yield b1, b2, contents
    b1.delete(missing_ok=True)
    b2.delete(missing_ok=True)


def _items(bucket: Bucket, contents: dict[str, bytes], prefix: str = "") -> list[Item]:
    head = bucket.name + "/"
    return sorted(
        (k[len(head) :], v)
        for k, v in contents.items()
        if k.startswith(head) and k[len(head) :].startswith(prefix)
    )


def _all(data: Any) -> list[Item]:
    b1, b2, contents = data
    return _items(b1, contents) + _items(b2, contents)


def _loader_items(ds: Any, **kwargs: Any) -> list[Item]:
    loader = DataLoader(ds, batch_size=None, **kwargs)
    return [(name, bytes(content)) for name, content in loader]


# --- AISMapDataset -------------------------------------------------------------------------


def test_map_items_order_and_prefix_map(client: Client, data: Any) -> None:
    b1, b2, contents = data
    ds = AISMapDataset([b1, b2])
    assert len(ds) == 48
    assert [ds[i] for i in range(len(ds))] == _all(data)
    assert ds[-1] == _items(b2, contents)[-1]
    with pytest.raises(IndexError, match="in bounds"):
        ds[48]
    # A list of prefixes (in its order) and None; keys match by identity.
    ds = AISMapDataset([b1, b2], prefix_map={b1: ["val/", "train/00"], b2: None})
    want = _items(b1, contents, "val/") + _items(b1, contents, "train/00") + _items(b2, contents)
    assert [ds[i] for i in range(len(ds))] == want
    assert len(AISMapDataset(b1, prefix_map={b1: "val/"})) == 10
    assert len(AISMapDataset(b1, prefix_map={client.bucket(b1.name): "val/"})) == 37
    with pytest.raises(ValueError):
        AISMapDataset()
    with pytest.raises(ValueError):
        AISMapDataset(b1, max_concurrency=0)


def test_map_get_obj_list_matches_the_bucket_listing(data: Any) -> None:
    b1, _, _ = data
    ds = AISMapDataset(b1, prefix_map={b1: "val/"})
    got = ds.get_obj_list()
    want = list(b1.list_all_objects_iter(prefix="val/"))
    assert isinstance(got, list) and all(isinstance(o, Object) for o in got)
    assert [o.name for o in got] == [o.name for o in want]
    assert [o.uname for o in got] == [o.uname for o in want]
    for g, w in zip(got, want, strict=True):
        assert g.props_cached is not None and w.props_cached is not None
        assert g.props_cached.size == w.props_cached.size
        assert g.props_cached.name == w.props_cached.name
    assert len(ds._obj_list) == len(got) and ds._obj_list[0].name == got[0].name


def test_map_dataloader_workers_and_concurrency(data: Any) -> None:
    b1, b2, _ = data
    for workers, concurrency in ((0, 1), (2, 1), (0, 4), (2, 3)):
        ds = AISMapDataset([b1, b2], max_concurrency=concurrency)
        loader = DataLoader(ds, batch_size=5, num_workers=workers)
        got = [(n, c) for names, contents in loader for n, c in zip(names, contents, strict=True)]
        assert got == _all(data), (workers, concurrency)


def _metric(client: Client, name: str) -> float:
    text = client._request_client.session_manager.session.get(  # noqa: SLF001
        client._request_client.base_url.removesuffix("/v1") + "/metrics",
        timeout=10,  # noqa: SLF001
    ).text
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name + "{")
    )


def test_map_batches_by_getbatch_on_one_target(data: Any, ais_server: Any) -> None:
    """On our server (one target) a DataLoader batch is one GetBatch by default; the items
    are the same whichever way they are read, and a batch whose object vanished raises the
    per-object error (the batch read again GET by GET)."""
    b1, b2, _ = data
    client = ais_server.client()
    for batch_get in (None, True, False):
        before = _metric(client, "ais_target_getbatch_count")
        ds = AISMapDataset([b1, b2], batch_get=batch_get)
        loader = DataLoader(ds, batch_size=8, num_workers=0)
        got = [(n, c) for names, contents in loader for n, c in zip(names, contents, strict=True)]
        assert got == _all(data), batch_get
        batches = _metric(client, "ais_target_getbatch_count") - before
        assert batches == (0 if batch_get is False else len(loader)), batch_get
    tag = uuid.uuid4().hex[:8]
    gone = client.bucket(f"gone-{tag}").create()
    for i in range(4):
        gone.object(f"o{i}").get_writer().put_content(b"x" * 10)
    ds = AISMapDataset(gone)
    gone.object("o2").delete()
    with pytest.raises(AISError) as err:
        next(iter(DataLoader(ds, batch_size=4, num_workers=0)))
    assert err.value.status_code == 404 and "o2" in str(err.value)
    gone.delete()


def test_object_groups_list_without_a_head_per_object(
    data: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    b1, b2, contents = data
    heads = 0
    real_head = Object.head

    def counting_head(self: Object, props: str = "") -> Any:
        nonlocal heads
        heads += 1
        return real_head(self, props)

    monkeypatch.setattr(Object, "head", counting_head)
    by_range = b2.objects(obj_range=ObjectRange("shard-", 2, 8, pad_width=2, step=3))
    by_names = b1.objects(obj_names=["val/004.bin", "train/001.bin"])
    by_template = b2.objects(obj_template="shard-{09..10}")
    ds = AISMapDataset([by_range, by_names, by_template])
    names = ["shard-02", "shard-05", "shard-08", "val/004.bin", "train/001.bin"]
    names += ["shard-09", "shard-10"]
    assert [ds[i][0] for i in range(len(ds))] == names
    assert ds[3][1] == contents[f"{b1.name}/val/004.bin"]
    assert heads == 0
    # Sizes are learned (concurrently) only when asked for, as upstream's listing had them.
    sizes = [o.props_cached.size for o in ds.get_obj_list() if o.props_cached is not None]
    assert sizes == [1000, 1000, 1000, 50 + 13 * 4, 50 + 13 * 1, 1000, 1000]
    assert heads == len(names)
    # A missing name fails when read (upstream: when listed).
    ds = AISMapDataset(b1.objects(obj_names=["val/000.bin", "no/such"]))
    assert ds[0][0] == "val/000.bin"
    with pytest.raises(AISError):
        ds[1]


# --- DynamicBatchSampler -------------------------------------------------------------------


@pytest.fixture(scope="module")
def kilo(ais_server: Any) -> Iterator[Bucket]:
    """Ten objects of 1000 bytes (the upstream tests' scale of the blog's 1 MB example)."""
    bucket = ais_server.client().bucket(f"kilo-{uuid.uuid4().hex[:8]}").create()
    for i in range(10):
        bucket.object(f"o{i}").get_writer().put_content(bytes(1000))
    yield bucket
    bucket.delete(missing_ok=True)


def test_sampler_batches_and_length(kilo: Bucket) -> None:
    ds = AISMapDataset(kilo)
    sampler = DynamicBatchSampler(ds, max_batch_size=4000)
    assert [len(b) for b in sampler] == [4, 4, 2]
    assert len(sampler) == 3  # batches (upstream: samples)
    assert [len(b) for b in DynamicBatchSampler(ds, 3000)] == [3, 3, 3, 1]
    assert [len(b) for b in DynamicBatchSampler(ds, 3000, drop_last=True)] == [3, 3, 3]
    assert len(DynamicBatchSampler(ds, 3000, drop_last=True)) == 3
    assert list(DynamicBatchSampler(ds, 500)) == []
    assert list(DynamicBatchSampler(ds, 500, allow_oversized_samples=True)) == [
        [i] for i in range(10)
    ]
    with pytest.raises(ValueError):
        DynamicBatchSampler(ds, 3000, saturation_factor=1.5)
    loader = DataLoader(ds, batch_sampler=DynamicBatchSampler(ds, 4000), num_workers=2)
    assert len(loader) == 3
    assert [len(names) for names, _ in loader] == [4, 4, 2]


def test_sampler_seeded_shuffle_and_resume(kilo: Bucket) -> None:
    ds = AISMapDataset(kilo)

    def epoch_batches(sampler: DynamicBatchSampler, epoch: int) -> list[list[int]]:
        sampler.set_epoch(epoch)
        return list(sampler)

    a = DynamicBatchSampler(ds, 3000, shuffle=True, seed=5)
    b = DynamicBatchSampler(ds, 3000, shuffle=True, seed=5)
    e0, e1 = epoch_batches(a, 0), epoch_batches(a, 1)
    assert e0 == epoch_batches(b, 0) and e1 == epoch_batches(b, 1) and e0 != e1
    assert sorted(i for batch in e1 for i in batch) == list(range(10))
    # Unseeded: len() and the iteration after it agree.
    unseeded = DynamicBatchSampler(ds, 3500, shuffle=True)
    n = len(unseeded)
    assert len(list(unseeded)) == n
    # Resume after two batches of epoch 1.
    it = iter(a)
    a.set_epoch(1)
    it = iter(a)
    first = [next(it), next(it)]
    state = a.state_dict()
    c = DynamicBatchSampler(ds, 3000, shuffle=True, seed=5)
    c.load_state_dict(state)
    assert first + list(c) == e1
    with pytest.raises(ValueError):
        DynamicBatchSampler(ds, 3000, shuffle=True).load_state_dict(state)


def test_sampler_over_object_groups(kilo: Bucket) -> None:
    ds = AISMapDataset(kilo.objects(obj_template="o{0..4}"))
    assert [len(b) for b in DynamicBatchSampler(ds, 2000)] == [2, 2, 1]


# --- AISIterDataset ------------------------------------------------------------------------


def test_iter_items_in_listing_order(data: Any) -> None:
    b1, b2, contents = data
    ds = AISIterDataset([b1, b2], prefix_map={b1: "val/"})
    want = _items(b1, contents, "val/") + _items(b2, contents)
    assert list(ds) == want
    assert list(ds) == want  # a second epoch (from the cached listing)
    assert len(ds) == len(want)
    assert _loader_items(ds) == want
    assert isinstance(ds, AISBaseIterDataset)
    with pytest.raises(ValueError):
        AISIterDataset([])
    with pytest.raises(ValueError):
        AISIterDataset(b1, prefetch=-1)
    with pytest.raises(ValueError):
        AISIterDataset(b1, rank=0)
    with pytest.raises(ValueError):
        AISIterDataset(b1, partition_sources_by_worker=True, even_split=True)


@pytest.mark.parametrize("prefetch", [0, 3])
@pytest.mark.parametrize("partition", [False, True])
def test_iter_workers_read_every_object_once(data: Any, prefetch: int, partition: bool) -> None:
    b1, b2, _ = data
    ds = AISIterDataset([b1, b2], prefetch=prefetch, partition_sources_by_worker=partition)
    pickle.loads(pickle.dumps(ds))  # what a spawned worker receives
    got = _loader_items(ds, num_workers=2)
    assert sorted(got) == sorted(_all(data))
    if not partition:
        # Round robin: worker 0 has the even positions; DataLoader alternates workers.
        assert got == _all(data)


@pytest.mark.parametrize("world_size", [1, 2, 3])
@pytest.mark.parametrize("even_split", [False, True])
def test_iter_ranks_and_workers_split_an_epoch(
    data: Any, world_size: int, even_split: bool
) -> None:
    b1, b2, _ = data
    per_rank: list[list[Item]] = []
    for rank in range(world_size):
        ds = AISIterDataset(
            [b1, b2], rank=rank, world_size=world_size, even_split=even_split, shuffle=True
        )
        ds.set_epoch(3)
        per_rank.append(_loader_items(ds, num_workers=2))
        assert len(ds) == len(per_rank[-1])
    flat = [item for items in per_rank for item in items]
    assert len(flat) == len(set(flat))
    if even_split:
        assert {len(items) for items in per_rank} == {48 // world_size}
        assert len(flat) == 48 - 48 % world_size
    else:
        assert sorted(flat) == sorted(_all(data))


def test_iter_rank_from_the_environment(data: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    b1, _, contents = data
    got: list[Item] = []
    for rank in range(2):
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", "2")
        got += _loader_items(AISIterDataset(b1), num_workers=2)
    assert sorted(got) == _items(b1, contents)
    assert len(got) == 37


def _rank_main(rank: int, endpoint: str, names: list[str], store: str, out: str, ctx: str) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    try:
        bucket = Client(endpoint).bucket(names[0])
        ds = AISIterDataset(bucket, shuffle=True, seed=1, even_split=True)
        ds.set_epoch(1)
        loader = DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context=ctx)
        got = [name for name, _ in loader]
        with open(f"{out}.{rank}", "w") as f:
            f.write(",".join([str(len(ds)), *got]))
    finally:
        dist.destroy_process_group()


@pytest.mark.timeout(240)
@pytest.mark.parametrize("context", ["fork", "spawn"])
@pytest.mark.usefixtures("spawnable_tests")
def test_iter_two_gloo_ranks(ais_server: Any, data: Any, tmp_path: Any, context: str) -> None:
    from torch.multiprocessing.spawn import spawn

    b1, _, contents = data
    out = str(tmp_path / "got")
    args = (ais_server.endpoint, [b1.name], str(tmp_path / "store"), out, context)
    spawn(_rank_main, args=args, nprocs=2, join=True)  # type: ignore[no-untyped-call]
    shares = [(tmp_path / f"got.{r}").read_text().split(",") for r in range(2)]
    assert [int(share[0]) for share in shares] == [18, 18]  # len(): this rank's count
    got = shares[0][1:] + shares[1][1:]
    assert len(got) == len(set(got)) == 36  # 37 objects, even_split over 2 ranks
    assert set(got) <= {name for name, _ in _items(b1, contents)}


def test_batch_dataset_gains_the_rank_split(
    client: Client, data: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    b1, b2, _ = data
    got: list[Item] = []
    for rank in range(3):
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", "3")
        ds = AISBatchIterDataset([b1, b2], client, max_batch_size=4)
        got += _loader_items(ds, num_workers=2)
    assert sorted(got) == sorted(_all(data))


def test_iter_seeded_shuffle_per_epoch(data: Any) -> None:
    b1, b2, _ = data
    a = AISIterDataset([b1, b2], shuffle=True, seed=11)
    b = AISIterDataset([b1, b2], shuffle=True, seed=11)
    orders = []
    for epoch in range(2):
        a.set_epoch(epoch)
        b.set_epoch(epoch)
        order = [n for n, _ in a]
        assert order == [n for n, _ in b]
        assert sorted(order) == sorted(n for n, _ in _all(data))
        orders.append(order)
    assert orders[0] != orders[1]
    assert orders[0] != [n for n, _ in _all(data)]


def test_iter_listing_is_cached_and_shared_with_workers(client: Client) -> None:
    bucket = client.bucket(f"cache-{uuid.uuid4().hex[:8]}").create()
    try:
        for i in range(6):
            bucket.object(f"a{i}").get_writer().put_content(b"x")
        ds = AISIterDataset(bucket)
        assert len(ds) == 6  # lists in this process, before the workers start
        bucket.object("b-late").get_writer().put_content(b"y")
        assert len(_loader_items(ds, num_workers=2)) == 6  # the workers reused the listing
        assert len(list(ds)) == 6
        ds.refresh_listing()
        assert len(_loader_items(ds, num_workers=2)) == 7
    finally:
        bucket.delete(missing_ok=True)


def test_iter_spawned_workers_and_fork_safe_sessions(data: Any) -> None:
    b1, b2, _ = data
    ds = AISIterDataset([b1, b2], prefetch=2)
    assert len(list(ds)) == 48  # the main process has a session with open connections now
    got = _loader_items(ds, num_workers=2)  # forked workers open their own
    assert got == _all(data)
    spawned = _loader_items(ds, num_workers=2, multiprocessing_context="spawn")
    assert spawned == _all(data)
    assert len(list(ds)) == 48  # and the main process's session still works


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("prefetch", [0, 4])
@pytest.mark.parametrize("cached", [False, True])
def test_iter_resume_continues_where_it_stopped(
    data: Any, shuffle: bool, prefetch: int, cached: bool
) -> None:
    b1, b2, _ = data
    sources = [b1, b2]

    def make() -> AISIterDataset:
        ds = AISIterDataset(sources, shuffle=shuffle, seed=3, prefetch=prefetch)
        ds.set_epoch(2)
        if cached:
            len(ds)
        return ds

    full = list(make())
    for k in (0, 1, 17, 47, 48):
        ds = make()
        it = iter(ds)
        head = [next(it) for _ in range(k)]
        state = ds.state_dict()
        assert state["done"] == k and state["epoch"] == 2
        resumed = make()
        resumed.load_state_dict(pickle.loads(pickle.dumps(state)))
        assert head + list(resumed) == full, k
        assert list(resumed) == full  # the next iteration starts the epoch over
    # After set_epoch, before iterating: the state is the start of the new epoch.
    ds = make()
    list(ds)
    assert ds.state_dict()["done"] == 48
    ds.set_epoch(3)
    assert (ds.state_dict()["epoch"], ds.state_dict()["done"]) == (3, 0)


def test_iter_resume_through_a_dataloader(data: Any) -> None:
    b1, b2, _ = data
    ds = AISIterDataset([b1, b2], shuffle=True, seed=9)
    loader = DataLoader(ds, batch_size=4)
    full = [
        n
        for names, _ in DataLoader(AISIterDataset([b1, b2], shuffle=True, seed=9), batch_size=4)
        for n in names
    ]
    it = iter(loader)
    head = [n for _ in range(3) for n in next(it)[0]]
    state = ds.state_dict()
    again = AISIterDataset([b1, b2], shuffle=True, seed=9)
    again.load_state_dict(state)
    rest = [n for names, _ in DataLoader(again, batch_size=4) for n in names]
    assert head + rest == full


def test_iter_resume_rejects_another_split(data: Any) -> None:
    b1, _, _ = data
    ds = AISIterDataset(b1, rank=0, world_size=2)
    it = iter(ds)
    next(it)
    state = ds.state_dict()
    with pytest.raises(ValueError):
        AISIterDataset(b1, shuffle=True).load_state_dict(state)
    other = AISIterDataset(b1, rank=1, world_size=2)
    other.load_state_dict(state)
    with pytest.raises(ValueError):
        list(other)


@pytest.mark.parametrize("workers", [0, 2])
def test_iter_with_stateful_dataloader(data: Any, workers: int) -> None:
    sdl = pytest.importorskip("torchdata.stateful_dataloader")
    b1, b2, _ = data

    def loader(ds: AISIterDataset) -> Any:
        return sdl.StatefulDataLoader(ds, batch_size=3, num_workers=workers)

    def names(batches: Any) -> list[str]:
        return [n for names, _ in batches for n in names]

    full = names(loader(AISIterDataset([b1, b2], shuffle=True, seed=4)))
    first = loader(AISIterDataset([b1, b2], shuffle=True, seed=4))
    it = iter(first)
    head = names(next(it) for _ in range(5))
    state = first.state_dict()
    del it
    second = loader(AISIterDataset([b1, b2], shuffle=True, seed=4))
    second.load_state_dict(state)
    rest = names(second)
    assert head + rest == full


def test_iter_persistent_workers_follow_set_epoch(data: Any) -> None:
    b1, b2, _ = data
    ds = AISIterDataset([b1, b2], shuffle=True, seed=2)
    loader = DataLoader(ds, batch_size=None, num_workers=2, persistent_workers=True)
    orders = []
    for epoch in range(3):
        ds.set_epoch(epoch)
        got = [n for n, _ in loader]
        alone = AISIterDataset([b1, b2], shuffle=True, seed=2)
        alone.set_epoch(epoch)
        assert got == [n for n, _ in DataLoader(alone, batch_size=None, num_workers=2)]
        orders.append(got)
    assert orders[0] != orders[1] != orders[2]


def test_subclass_hooks_get_the_split(data: Any) -> None:
    b1, b2, _ = data

    class Names(AISBaseIterDataset):
        def __iter__(self) -> Iterator[str]:
            self._reset_iterator()
            objects, _ = self._get_worker_iter_info()
            return (obj.name for obj in objects)

    got: list[str] = []
    for rank in range(2):
        got += list(
            DataLoader(Names([b1, b2], rank=rank, world_size=2), batch_size=None, num_workers=2)
        )
    assert sorted(got) == sorted(n for n, _ in _all(data))
    ds = Names([b1, b2])
    assert [o.name for o in ds._create_objects_iter()] == [n for n, _ in _all(data)]
    # Resume through the hooks: the object in progress is read again.
    it = iter(ds)
    head = [next(it) for _ in range(5)]
    resumed = Names([b1, b2])
    resumed.load_state_dict(ds.state_dict())
    assert head[:4] + list(resumed) == [n for n, _ in _all(data)]


def test_map_base_is_still_a_dataset(data: Any) -> None:
    b1, _, _ = data
    assert isinstance(AISMapDataset(b1), AISBaseMapDataset)
    assert isinstance(pickle.loads(pickle.dumps(AISMapDataset(b1))), AISMapDataset)


def _doc_example(cls: type) -> dict[str, Any]:
    """Run the `Example:` of `cls`'s docstring: the subclass it teaches."""
    doc = cls.__doc__ or ""
    prompts = [line.strip() for line in doc[doc.index("Example:") :].splitlines()]
    code = [line[4:].split("  # doctest")[0] for line in prompts if line[:4] in (">>> ", "... ")]
    namespace: dict[str, Any] = {cls.__name__: cls}
    exec("\n".join(code), namespace)  # noqa: S102 - our own docstring
    return namespace


def test_documented_iter_subclass_splits_and_resumes_exactly(data: Any) -> None:
    """The subclass the base class's docstring teaches is written as the built-ins are: it gets
    the split, and resumes at the next object, not the one it was reading."""
    b1, b2, _ = data
    sizes = _doc_example(AISBaseIterDataset)["Sizes"]
    expected = [len(content) for _, content in _all(data)]
    got: list[int] = []
    for rank in range(2):
        got += list(
            DataLoader(sizes([b1, b2], rank=rank, world_size=2), batch_size=None, num_workers=2)
        )
    assert sorted(int(n) for n in got) == sorted(expected)
    ds = sizes([b1, b2])
    it = iter(ds)
    head = [next(it) for _ in range(5)]
    resumed = sizes([b1, b2])
    resumed.load_state_dict(ds.state_dict())
    assert head + list(resumed) == expected
    for builtin in (AISIterDataset, AISShardReader, AISBatchIterDataset):
        assert "self._start_epoch()" in inspect.getsource(builtin.__iter__), builtin


def test_documented_map_subclass_is_how_the_builtins_index(data: Any) -> None:
    b1, _, contents = data
    sizes = _doc_example(AISBaseMapDataset)["Sizes"]
    ds = sizes(b1)
    assert [ds[i] for i in range(len(ds))] == [len(v) for _, v in _items(b1, contents)]
    for builtin in (AISMapDataset, AISParallelMapDataset):
        assert "self._get_object(index)" in inspect.getsource(builtin.__getitem__), builtin
