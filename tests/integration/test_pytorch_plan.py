"""AISPlanDataset against the real server: over an epoch, the multiset of samples delivered
equals the dataset exactly, across checkpoints that change world size, DataLoader workers and
batch size (hypothesis over in-process ranks, and over real DataLoader workers; torchdata's
StatefulDataLoader and torch.distributed gloo ranks in the fixed cases); shards by archpath; a
changed dataset is detected and named."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

from aistore.pytorch.plan import (  # noqa: E402
    DatasetChangedError,
    DatasetSnapshot,
    PlanCheckpoint,
)
from aistore.pytorch.plan_dataset import AISPlanDataset  # noqa: E402
from aistore.sdk.bucket import Bucket  # noqa: E402
from aistore.sdk.client import Client  # noqa: E402

N_OBJECTS = 60
SHARD_SIZES = [7, 0, 3, 12, 1, 9]  # samples per shard (a shard may hold none)


def _tar(files: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture(scope="module")
def data(ais_server: Any) -> Iterator[dict[str, Any]]:
    """60 objects and 6 shards (32 samples of two files each, plus a README that is no sample);
    `expected` maps each sample to a digest of its content."""
    client = ais_server.client()
    tag = uuid.uuid4().hex[:8]
    objects, shards = (
        client.bucket(f"plan-o-{tag}").create(),
        client.bucket(f"plan-s-{tag}").create(),
    )
    expected: dict[str, str] = {}
    for i in range(N_OBJECTS):
        body = os.urandom(20 + i)
        objects.object(f"obj-{i:03d}").get_writer().put_content(body)
        expected[f"obj-{i:03d}"] = hashlib.md5(body).hexdigest()
    for s, count in enumerate(SHARD_SIZES):
        files: list[tuple[str, bytes]] = [("README", b"not a sample")]
        for k in range(count):
            key = f"d/s{s}-{k:02d}"
            img, cls = os.urandom(30), str(k).encode()
            files += [(f"{key}.bin", img), (f"{key}.cls", cls)]
            expected[key] = hashlib.md5(img + cls).hexdigest()
        shards.object(f"shard-{s}.tar").get_writer().put_content(_tar(files))
    yield {"objects": objects, "shards": shards, "expected": expected, "client": client}
    objects.delete(missing_ok=True)
    shards.delete(missing_ok=True)


def _digest(sample: Any) -> tuple[str, str]:
    """The transform of the tests: (name or key, md5 of the content or of bin+cls)."""
    name, content = sample
    if isinstance(content, dict):
        return name, hashlib.md5(content["bin"] + content["cls"]).hexdigest()
    return name, hashlib.md5(content).hexdigest()


def _names(batch: Any) -> list[tuple[str, str]]:
    return list(zip(batch[0], batch[1], strict=True))


def _rank_datasets(snap: DatasetSnapshot, world: int, batch: int, **kw: Any) -> list[Any]:
    return [
        AISPlanDataset(snap, batch, rank=r, world_size=world, transform=_digest, seed=11, **kw)
        for r in range(world)
    ]


def _snapshot(data: dict[str, Any], shards: bool, pick: list[int] | None) -> DatasetSnapshot:
    bucket: Bucket = data["shards" if shards else "objects"]
    if pick is None:
        return DatasetSnapshot.from_sources(bucket, shards=shards)
    names = [f"shard-{i}.tar" if shards else f"obj-{i:03d}" for i in sorted(set(pick))]
    return DatasetSnapshot.from_sources(bucket.objects(obj_names=names), shards=shards)


layouts = st.tuples(st.integers(min_value=1, max_value=8), st.integers(min_value=1, max_value=9))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    shards=st.booleans(),
    pick=st.none() | st.lists(st.integers(min_value=0, max_value=N_OBJECTS - 1), min_size=1),
    runs=st.lists(layouts, min_size=2, max_size=3),
    stops=st.lists(st.integers(min_value=0, max_value=12), min_size=2, max_size=2),
)
@example(shards=False, pick=None, runs=[(1, 4), (8, 2)], stops=[3, 0])
@example(shards=False, pick=None, runs=[(8, 3), (3, 5), (2, 2)], stops=[1, 2])
@example(shards=True, pick=None, runs=[(3, 2), (1, 5)], stops=[9, 0])  # epoch done, then resume
def test_resumes_deliver_the_dataset_exactly_once(
    data: dict[str, Any],
    shards: bool,
    pick: list[int] | None,
    runs: list[tuple[int, int]],
    stops: list[int],
) -> None:
    if shards and pick is not None:
        pick = [i % len(SHARD_SIZES) for i in pick]
    snap = _snapshot(data, shards, pick)
    want = {k: v for k, v in data["expected"].items() if k in set(_all_keys(snap))}
    got: list[tuple[str, str]] = []
    state: dict[str, Any] | None = None
    for i, (world, batch) in enumerate(runs):
        datasets = _rank_datasets(snap, world, batch)
        stop = stops[i] if i < len(runs) - 1 else None
        states = []
        for ds in datasets:
            if state is not None:
                ds.load_state_dict(state)
            loader = ds.track(DataLoader(ds, batch_size=None))
            for step, item in enumerate(loader if stop != 0 else []):
                assert len(item[0]) <= batch
                got += _names(item)
                if step + 1 == stop:
                    break  # a checkpoint after `stop` batches on every rank
            states.append(ds.state_dict())
        assert all(s == states[0] for s in states), "every rank holds the same checkpoint"
        state = states[0]
        assert len(json.dumps(state)) < 200
        # Delivered so far: exactly the first `consumed` positions of the plan.
        assert Counter(k for k, _ in got) == Counter(_plan_keys(snap, datasets[0], state))
    assert sorted(got) == sorted(want.items())


worker_layouts = st.tuples(
    st.integers(min_value=1, max_value=2),  # ranks
    st.integers(min_value=0, max_value=3),  # DataLoader workers (forked processes)
    st.integers(min_value=1, max_value=9),  # batch size
)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    shards=st.booleans(),
    first=worker_layouts,
    second=worker_layouts,
    stop=st.integers(min_value=0, max_value=6),
)
def test_resume_with_other_dataloader_workers(
    data: dict[str, Any],
    shards: bool,
    first: tuple[int, int, int],
    second: tuple[int, int, int],
    stop: int,
) -> None:
    snap = _snapshot(data, shards, None)
    got: list[tuple[str, str]] = []
    state: dict[str, Any] | None = None
    for (world, workers, batch), limit in ((first, stop), (second, None)):
        states = []
        for ds in _rank_datasets(snap, world, batch):
            if state is not None:
                ds.load_state_dict(state)
            loader = ds.track(DataLoader(ds, batch_size=None, num_workers=workers))
            for step, item in enumerate(loader if limit != 0 else []):
                got += _names(item)
                if step + 1 == limit:
                    break
            states.append(ds.state_dict())
            del loader
        assert all(s == states[0] for s in states)
        state = states[0]
    assert sorted(got) == sorted(
        (k, v) for k, v in data["expected"].items() if k in set(_all_keys(snap))
    )


def _all_keys(snap: DatasetSnapshot) -> list[str]:
    if snap.is_sharded:
        return [snap.sample_members(i)[0].rpartition(".")[0] for i in range(len(snap))]
    return [snap.object_name(i) for i in range(snap.num_objects)]


def _plan_keys(snap: DatasetSnapshot, ds: AISPlanDataset, state: dict[str, Any]) -> list[str]:
    keys = _all_keys(snap)
    order = ds.plan(state["epoch"]).order[: state["consumed"]]
    return [keys[i] for i in order]


def test_epoch_boundary_and_next_epoch(data: dict[str, Any]) -> None:
    snap = _snapshot(data, False, None)
    ds = AISPlanDataset(snap, 7, seed=3, transform=_digest)
    first = [k for b in ds.track(DataLoader(ds, batch_size=None)) for k, _ in _names(b)]
    end = ds.state_dict()
    assert end["consumed"] == N_OBJECTS and end["epoch"] == 0
    again = AISPlanDataset(snap, 4, seed=3, transform=_digest)
    again.load_state_dict(end)
    assert len(again) == 0 and list(again) == []  # the rest of epoch 0 is empty
    again.set_epoch(1)
    second = [k for b in again for k, _ in _names(b)]
    assert sorted(first) == sorted(second) == [f"obj-{i:03d}" for i in range(N_OBJECTS)]
    assert first != second  # another order in another epoch


@pytest.mark.parametrize(
    ("before", "after", "context"),
    [((2, 4), (3, 5), "fork"), ((3, 3), (0, 8), "fork"), ((2, 3), (1, 6), "spawn")],
)
@pytest.mark.usefixtures("spawnable_tests")
def test_dataloader_workers_resume_with_other_workers_and_batch(
    data: dict[str, Any], before: tuple[int, int], after: tuple[int, int], context: str
) -> None:
    snap = _snapshot(data, False, None)
    ds = AISPlanDataset(snap, before[1], seed=5, transform=_digest)
    full_order = [snap.object_name(int(i)) for i in ds.plan().order]
    loader = DataLoader(ds, batch_size=None, num_workers=before[0], multiprocessing_context=context)
    got: list[str] = []
    for step, batch in enumerate(ds.track(loader)):
        got += batch[0]
        if step + 1 == 4:
            break
    state = ds.state_dict()
    assert state["consumed"] == 4 * before[1]
    assert got == full_order[: len(got)]  # the plan's order, though workers ran ahead
    resumed = AISPlanDataset(snap, after[1], seed=5, transform=_digest)
    resumed.load_state_dict(state)
    kw: dict[str, Any] = {"multiprocessing_context": context} if after[0] else {}
    loader = DataLoader(resumed, batch_size=None, num_workers=after[0], **kw)
    rest = [name for batch in resumed.track(loader) for name in batch[0]]
    assert got + rest == full_order
    assert resumed.state_dict()["consumed"] == N_OBJECTS


def test_untracked_workers_refuse_a_checkpoint(data: dict[str, Any]) -> None:
    ds = AISPlanDataset(_snapshot(data, False, None), 5, seed=1)
    assert ds.state_dict()["consumed"] == 0  # nothing read yet: the start of the epoch
    it = iter(DataLoader(ds, batch_size=None, num_workers=2))
    next(it)
    with pytest.raises(RuntimeError, match="track"):
        ds.state_dict()
    del it


@pytest.mark.parametrize("workers", [0, 2])
def test_stateful_dataloader_same_and_other_layout(data: dict[str, Any], workers: int) -> None:
    sdl = pytest.importorskip("torchdata.stateful_dataloader")
    snap = _snapshot(data, True, None)

    def make(batch: int, n_workers: int) -> tuple[Any, Any]:
        ds = AISPlanDataset(snap, batch, seed=2, window=4, transform=_digest)
        return ds, sdl.StatefulDataLoader(ds, batch_size=None, num_workers=n_workers)

    ds, loader = make(3, workers)
    full = [k for batch in loader for k in batch[0]]
    assert sorted(full) == sorted(_all_keys(snap))
    ds, loader = make(3, workers)
    it = iter(loader)
    head = [k for _ in range(4) for k in next(it)[0]]
    saved = loader.state_dict()
    del it
    # The same layout: StatefulDataLoader restores each worker's position.
    _, same = make(3, workers)
    same.load_state_dict(saved)
    assert head + [k for batch in same for k in batch[0]] == full
    # Another layout: the run's checkpoint, loaded into a fresh dataset.
    ckpt = PlanCheckpoint.from_loader_state(saved)
    assert ckpt.consumed == 12
    other, loader = make(5, 2 if workers == 0 else 1)
    other.load_state_dict(ckpt.to_dict())
    assert head + [k for batch in loader for k in batch[0]] == full


def _gloo_rank(rank: int, world: int, endpoint: str, bucket: str, store: str, out: str) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    try:
        snap = DatasetSnapshot.from_sources(Client(endpoint).bucket(bucket))
        ds = AISPlanDataset(snap, 4, seed=9)
        with open(f"{out}.state") as f:
            text = f.read()
        if text:
            ds.load_state_dict(json.loads(text))
        loader = DataLoader(ds, batch_size=None, num_workers=1 if world == 2 else 0)
        names: list[str] = []
        for step, batch in enumerate(ds.track(loader)):
            names += batch[0]
            if world == 3 and step + 1 == 3:
                break
        states: list[Any] = [None] * world
        dist.all_gather_object(states, ds.state_dict())
        assert all(s == states[0] for s in states)
        with open(f"{out}.{world}.{rank}", "w") as f:
            json.dump({"names": names, "state": states[0]}, f)
    finally:
        dist.destroy_process_group()


@pytest.mark.timeout(300)
def test_gloo_ranks_three_then_two(ais_server: Any, data: dict[str, Any], tmp_path: Any) -> None:
    from torch.multiprocessing.spawn import start_processes

    out = str(tmp_path / "got")
    with open(f"{out}.state", "w") as f:
        f.write("")
    got: list[str] = []
    for world in (3, 2):
        args = (world, ais_server.endpoint, data["objects"].name, str(tmp_path / f"s{world}"), out)
        start_processes(_gloo_rank, args=args, nprocs=world, start_method="fork")  # type: ignore[no-untyped-call]
        results = [json.loads((tmp_path / f"got.{world}.{r}").read_text()) for r in range(world)]
        for r in results:
            got += r["names"]
        with open(f"{out}.state", "w") as f:
            json.dump(results[0]["state"], f)
        if world == 3:
            assert results[0]["state"]["consumed"] == 3 * 3 * 4
            assert len(got) == 36
    assert sorted(got) == [f"obj-{i:03d}" for i in range(N_OBJECTS)], (
        len(got),
        Counter(got).most_common(3),
    )


def test_changed_dataset_is_detected_and_named(
    client: Client, bucket: Bucket, tmp_path: Any
) -> None:
    for i in range(10):
        bucket.object(f"f{i}").get_writer().put_content(b"x" * i)
    saved = DatasetSnapshot.from_sources(bucket)
    saved.save(tmp_path / "snap.npz")
    ds = AISPlanDataset(saved, 3, seed=1)
    it = iter(ds)
    head = list(next(it)[0])
    state = ds.state_dict()
    bucket.object("f3").get_writer().put_content(b"rewritten")
    bucket.object("new").get_writer().put_content(b"n")
    now = DatasetSnapshot.from_sources(bucket)
    loaded = DatasetSnapshot.load(tmp_path / "snap.npz", client)
    assert loaded.fingerprint == saved.fingerprint
    with pytest.raises(DatasetChangedError) as err:
        loaded.check_unchanged(now)
    assert err.value.added == [f"ais://{bucket.name}/new"]
    assert err.value.rewritten == [f"ais://{bucket.name}/f3"] and not err.value.removed
    assert "1 object added" in str(err.value) and "f3" in str(err.value)
    with pytest.raises(DatasetChangedError, match="10 samples.*11 samples"):
        AISPlanDataset(now, 3, seed=1).load_state_dict(state)
    with pytest.raises(ValueError, match="seed"):
        AISPlanDataset(loaded, 3, seed=2).load_state_dict(state)
    # Asked to continue over the saved names: the rest of the epoch, without the new object.
    old = AISPlanDataset(loaded, 4, seed=1)
    old.load_state_dict(state)
    rest = [name for batch in old for name in batch[0]]
    assert sorted(head + rest) == [f"f{i}" for i in range(10)]
    bucket.object("f5").delete()
    with pytest.raises(DatasetChangedError) as err:
        loaded.check_unchanged(DatasetSnapshot.from_sources(bucket))
    assert err.value.removed == [f"ais://{bucket.name}/f5"]


def test_two_buckets_in_one_snapshot(data: dict[str, Any]) -> None:
    snap = DatasetSnapshot.from_sources([data["objects"], data["shards"]])
    assert len(snap) == N_OBJECTS + len(SHARD_SIZES) and len(snap.buckets) == 2
    ds = AISPlanDataset(snap, 8, seed=1, transform=_digest)
    got = dict(pair for batch in ds for pair in _names(batch))
    assert len(got) == len(snap)
    assert {k: v for k, v in got.items() if k.startswith("obj-")} == {
        k: v for k, v in data["expected"].items() if k.startswith("obj-")
    }
    assert {k for k in got if k.startswith("shard-")} == {
        f"shard-{i}.tar" for i in range(len(SHARD_SIZES))
    }


def test_drop_last_gives_every_rank_the_same_full_batches(data: dict[str, Any]) -> None:
    snap = _snapshot(data, False, None)
    got: list[str] = []
    for rank in range(3):
        ds = AISPlanDataset(snap, 7, rank=rank, world_size=3, seed=2, drop_last=True)
        batches = [names for names, _ in ds.track(DataLoader(ds, batch_size=None, num_workers=2))]
        assert len(ds) == 2 and [len(b) for b in batches] == [7, 7]
        assert ds.state_dict()["consumed"] == N_OBJECTS  # the epoch is done
        ds.set_epoch(1)  # a new epoch: nothing read yet, however the last one was read
        assert ds.state_dict() == {**ds.state_dict(), "epoch": 1, "consumed": 0}
        got += [n for b in batches for n in b]
    plan = AISPlanDataset(snap, 7, seed=2).plan(0)
    assert got and sorted(got) == sorted(snap.object_name(int(i)) for i in plan.order[:42])


def test_shard_files_listed_with_the_bucket_match_one_listing_per_shard(
    data: dict[str, Any],
) -> None:
    """A bucket source lists the shards' files in its own pages; other sources list each shard.
    Both give the same snapshot, also beside an object that is no archive and one whose name
    starts with a shard's name and a slash (an object, not a file of that shard)."""
    client = data["client"]
    bucket = client.bucket(f"plan-mixed-{uuid.uuid4().hex[:8]}").create()
    try:
        bucket.object("a.tar").get_writer().put_content(
            _tar([("k1.bin", b"1"), ("k1.cls", b"x"), ("k2.bin", b"2")])
        )
        bucket.object("a.tar/k3.bin").get_writer().put_content(b"an object, not a member")
        bucket.object("b.bin").get_writer().put_content(b"no archive")
        bucket.object("c.tar").get_writer().put_content(_tar([("k9.bin", b"9")]))
        names = ["a.tar", "a.tar/k3.bin", "b.bin", "c.tar"]
        by_bucket = DatasetSnapshot.from_sources(bucket, shards=True)
        by_object = DatasetSnapshot.from_sources(bucket.objects(obj_names=names), shards=True)
        for snap in (by_bucket, by_object):
            assert [snap.object_name(i) for i in range(snap.num_objects)] == names
            assert [snap.sample_members(i) for i in range(len(snap))] == [
                ["k1.bin", "k1.cls"],
                ["k2.bin"],
                ["k9.bin"],
            ]
        assert by_bucket.fingerprint == by_object.fingerprint
    finally:
        bucket.delete(missing_ok=True)
