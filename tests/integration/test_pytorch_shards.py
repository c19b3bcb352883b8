"""AISShardReader and AISMultiShardStream with the real server: WebDataset-style shards built
with tarfile, every sample (tuple) exactly once with and without DataLoader workers, .tar and
.tgz, directories in member names, `__len__`, ZeroDict filling, and damaged shards."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import tracemalloc
import zipfile
from collections import Counter
from collections.abc import Iterable
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from torch.utils.data import DataLoader  # noqa: E402

from aistore.pytorch.multishard_dataset import AISMultiShardStream  # noqa: E402
from aistore.pytorch.shard_reader import AISShardReader  # noqa: E402
from aistore.sdk.bucket import Bucket  # noqa: E402
from aistore.sdk.dataset.data_shard import DataShard  # noqa: E402
from aistore.sdk.errors import AISError  # noqa: E402
from aistore.server import LocalServer  # noqa: E402

Files = list[tuple[str, bytes]]


def tar_bytes(files: Files, gz: bool = False) -> bytes:
    """A tar (gzip-compressed with `gz`) of `files` in the given order, plus a directory
    entry for every directory named, as `tar cf` writes them."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w") as tar:
        dirs_done: set[str] = set()
        for name, data in files:
            directory = name.rpartition("/")[0]
            if directory and directory not in dirs_done:
                dirs_done.add(directory)
                entry = tarfile.TarInfo(directory)
                entry.type = tarfile.DIRTYPE
                tar.addfile(entry)
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def wds_files(shard: int, count: int, prefix: str = "") -> Files:
    """WebDataset samples `<prefix>s<shard>-<i>.{jpg,cls,json}` with distinct contents."""
    files: Files = []
    for i in range(count):
        key = f"{prefix}s{shard}-{i:03d}"
        files += [
            (f"{key}.jpg", os.urandom(64) + key.encode()),
            (f"{key}.cls", str(i % 10).encode()),
            (f"{key}.json", f'{{"id": "{key}"}}'.encode()),
        ]
    return files


def put(bucket: Bucket, name: str, data: bytes) -> None:
    bucket.object(name).get_writer().put_content(data)


def samples_of(loader: Iterable[Any]) -> list[tuple[str, dict[str, bytes]]]:
    return [(key, dict(sample)) for key, sample in loader]


def as_multiset(samples: list[tuple[str, dict[str, bytes]]]) -> Counter[str]:
    return Counter(repr((k, sorted(s.items()))) for k, s in samples)


@pytest.fixture
def wds_bucket(bucket: Bucket) -> tuple[Bucket, list[tuple[str, dict[str, bytes]]]]:
    """Four shards (.tar and .tgz) of 5..8 samples; the expected samples in shard order."""
    expected: list[tuple[str, dict[str, bytes]]] = []
    for shard in range(4):
        files = wds_files(shard, 5 + shard)
        ext = ".tgz" if shard % 2 else ".tar"
        put(bucket, f"train/shard-{shard}{ext}", tar_bytes(files, gz=shard % 2 == 1))
        for i in range(0, len(files), 3):
            key = files[i][0].rsplit(".", 1)[0]
            expected.append((key, {n.rsplit(".", 1)[1]: d for n, d in files[i : i + 3]}))
    return bucket, expected


@pytest.mark.parametrize("num_workers", [0, 2])
def test_shard_reader_every_sample_once(
    wds_bucket: tuple[Bucket, list[tuple[str, dict[str, bytes]]]], num_workers: int
) -> None:
    bucket, expected = wds_bucket
    ds = AISShardReader(bucket)
    got = samples_of(DataLoader(ds, batch_size=None, num_workers=num_workers))
    assert as_multiset(got) == as_multiset(expected)
    if num_workers == 0:
        assert got == expected  # shard listing order, then order inside the shard


def test_shard_reader_ranks_split_shards_and_shuffle_keeps_samples(
    wds_bucket: tuple[Bucket, list[tuple[str, dict[str, bytes]]]],
) -> None:
    bucket, expected = wds_bucket
    shares = [
        samples_of(
            DataLoader(
                AISShardReader(bucket, rank=r, world_size=2, shuffle=True, seed=7),
                batch_size=None,
                num_workers=2,
            )
        )
        for r in range(2)
    ]
    assert as_multiset(shares[0] + shares[1]) == as_multiset(expected)
    # Whole shards per rank: no sample key prefix (shard) is read by both ranks.
    assert not {k.split("-")[0] for k, _ in shares[0]} & {k.split("-")[0] for k, _ in shares[1]}
    orders = []
    for epoch in range(3):
        ds = AISShardReader(bucket, shuffle=True, seed=7)
        ds.set_epoch(epoch)
        orders.append([k for k, _ in ds])
    assert all(sorted(o) == sorted(k for k, _ in expected) for o in orders)
    assert len({tuple(o) for o in orders}) > 1  # the shard order changes with the epoch


def test_shard_reader_resumes_at_the_next_sample(
    wds_bucket: tuple[Bucket, list[tuple[str, dict[str, bytes]]]],
) -> None:
    bucket, _ = wds_bucket

    def make() -> AISShardReader:
        ds = AISShardReader(bucket, shuffle=True, seed=5)
        ds.set_epoch(1)
        return ds

    full = [(k, dict(v)) for k, v in make()]
    assert len(full) == 26
    # At the start, inside a shard, at a shard's last sample, at the end.
    for k in (0, 1, 3, 4, 12, 25, 26):
        ds = make()
        it = iter(ds)
        head = [(key, dict(v)) for key, v in (next(it) for _ in range(k))]
        state = ds.state_dict()
        resumed = make()
        resumed.load_state_dict(state)
        rest = [(key, dict(v)) for key, v in resumed]
        assert [key for key, _ in head + rest] == [key for key, _ in full], k
        # The same files (ZeroDict's filling may differ: it follows what this process saw).
        assert [{e: d for e, d in v.items() if d} for _, v in head + rest] == [
            {e: d for e, d in v.items() if d} for _, v in full
        ], k


def test_shard_reader_len_counts_samples(
    wds_bucket: tuple[Bucket, list[tuple[str, dict[str, bytes]]]],
) -> None:
    bucket, expected = wds_bucket
    assert len(AISShardReader(bucket)) == len(expected) == 26
    assert len(AISShardReader(bucket, prefix_map={bucket: "train/shard-1"})) == 6


def test_shard_reader_default_collate_batches(
    wds_bucket: tuple[Bucket, list[tuple[str, dict[str, bytes]]]],
) -> None:
    bucket, expected = wds_bucket
    loader = DataLoader(AISShardReader(bucket), batch_size=4, num_workers=2)
    keys: list[str] = []
    for batch_keys, fields in loader:
        assert set(fields) == {"jpg", "cls", "json"}
        assert all(len(v) == len(batch_keys) for v in fields.values())
        keys += batch_keys
    assert sorted(keys) == sorted(k for k, _ in expected)


def test_shard_reader_zero_dict_fills_extensions_of_the_shard(bucket: Bucket) -> None:
    # The first sample lacks "cls" and "txt", which appear only later in the shard: it is
    # filled with b"" for both (the shard's file names are known before the first sample).
    files = [("a.jpg", b"A"), ("b.jpg", b"B"), ("b.cls", b"1"), ("c.txt", b"C")]
    put(bucket, "s.tar", tar_bytes(files))
    got = samples_of(AISShardReader(bucket))
    assert got == [
        ("a", {"jpg": b"A", "cls": b"", "txt": b""}),
        ("b", {"jpg": b"B", "cls": b"1", "txt": b""}),
        ("c", {"txt": b"C", "jpg": b"", "cls": b""}),
    ]
    assert all(isinstance(s, AISShardReader.ZeroDict) for _, s in AISShardReader(bucket))
    batch_keys, fields = next(iter(DataLoader(AISShardReader(bucket), batch_size=3)))
    assert list(batch_keys) == ["a", "b", "c"] and list(fields["cls"]) == [b"", b"1", b""]


def test_shard_reader_merges_non_contiguous_keys_in_first_seen_order(bucket: Bucket) -> None:
    files = [("x.jpg", b"1"), ("y.jpg", b"2"), ("x.cls", b"3"), ("noext", b"skip")]
    put(bucket, "s.tar", tar_bytes(files))
    assert samples_of(AISShardReader(bucket)) == [
        ("x", {"jpg": b"1", "cls": b"3"}),
        ("y", {"jpg": b"2", "cls": b""}),
    ]


def test_shard_reader_directories_basename_vs_webdataset(bucket: Bucket) -> None:
    files = [
        ("cats/x.jpg", b"cat"),
        ("cats/x.cls", b"0"),
        ("dogs/x.jpg", b"dog"),
        ("dogs/x.cls", b"1"),
        ("dogs/y.seg.PNG", b"mask"),
    ]
    put(bucket, "s.tgz", tar_bytes(files, gz=True))
    # Official convention: the directory is dropped, both x merge (later files win), and the
    # extension is the text after the last dot.
    assert samples_of(AISShardReader(bucket)) == [
        ("x", {"jpg": b"dog", "cls": b"1", "PNG": b""}),
        ("y", {"PNG": b"mask", "jpg": b"", "cls": b""}),
    ]
    wds = AISShardReader(bucket, key_style="webdataset")
    assert samples_of(wds) == [
        ("cats/x", {"jpg": b"cat", "cls": b"0", "seg.png": b""}),
        ("dogs/x", {"jpg": b"dog", "cls": b"1", "seg.png": b""}),
        ("dogs/y", {"seg.png": b"mask", "jpg": b"", "cls": b""}),
    ]
    assert len(wds) == 3 and len(AISShardReader(bucket)) == 2


def test_shard_reader_zip_shard_same_samples_as_tar(bucket: Bucket) -> None:
    files = wds_files(0, 4, prefix="d/")
    put(bucket, "a.tar", tar_bytes(files))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            z.writestr(name, data)
    put(bucket, "b.zip", buf.getvalue())
    tar_ds = AISShardReader(bucket, prefix_map={bucket: "a.tar"})
    zip_ds = AISShardReader(bucket, prefix_map={bucket: "b.zip"})
    assert samples_of(zip_ds) == samples_of(tar_ds) and len(samples_of(tar_ds)) == 4
    assert len(zip_ds) == len(tar_ds) == 4


def test_shard_reader_unknown_key_style(bucket: Bucket) -> None:
    with pytest.raises(ValueError, match="key_style"):
        AISShardReader(bucket, key_style="dirs")  # type: ignore[arg-type]


@pytest.mark.parametrize("num_workers", [0, 2])
@pytest.mark.parametrize(
    "content",
    [
        os.urandom(4096),
        b"",
        tar_bytes(wds_files(0, 20))[:3000],
        gzip.compress(b"x" * 5000),
        tar_bytes(wds_files(0, 20), gz=True)[:-100],
    ],
    ids=["garbage", "empty", "truncated", "gzip-not-tar", "gzip-truncated"],
)
@pytest.mark.timeout(120)
def test_shard_reader_bad_shard_is_a_tar_error(
    bucket: Bucket, content: bytes, num_workers: int
) -> None:
    put(bucket, "a-good.tar", tar_bytes(wds_files(0, 2)))
    put(bucket, "b-bad.tar", content)
    loader = DataLoader(AISShardReader(bucket), batch_size=None, num_workers=num_workers)
    with pytest.raises(tarfile.TarError, match="b-bad.tar"):
        for _ in loader:
            pass


def test_shard_reader_streams_instead_of_holding_the_shard(bucket: Bucket) -> None:
    # 24 samples of 1 MiB in one shard: reading it never holds more than a few samples.
    files = [(f"k{i:02d}.bin", os.urandom(1 << 20)) for i in range(24)]
    put(bucket, "big.tar", tar_bytes(files))
    del files
    tracemalloc.start()
    try:
        count = sum(1 for _ in AISShardReader(bucket))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 24
    assert peak < 8 << 20, f"peak {peak / 2**20:.1f} MiB while reading a 24 MiB shard"


def test_shard_reader_picklable_for_spawned_workers(
    wds_bucket: tuple[Bucket, list[tuple[str, dict[str, bytes]]]],
) -> None:
    bucket, expected = wds_bucket
    loader = DataLoader(
        AISShardReader(bucket, key_style="webdataset"),
        batch_size=None,
        num_workers=2,
        multiprocessing_context="spawn",
    )
    assert as_multiset(samples_of(loader)) == as_multiset(expected)


# --- AISMultiShardStream ---------------------------------------------------------------------


@pytest.fixture
def two_sources(
    ais_server: LocalServer, client: Any, bucket: Bucket
) -> tuple[list[DataShard], list[tuple[bytes, ...]]]:
    """Images in 3 shards of 4, 6, 5 files and labels in 2 shards of 9 and 10 files (one more
    than the images): the expected tuples pair them by position, 15 in all."""
    images: list[bytes] = []
    for shard, count in enumerate([4, 6, 5]):
        files = [(f"img/{shard}-{i:02d}.jpg", os.urandom(32)) for i in range(count)]
        # Stored out of name order: the stream follows the listing (name) order.
        put(bucket, f"images/part-{shard}.tar", tar_bytes(files[::-1]))
        images += [d for _, d in files]
    labels: list[bytes] = []
    for shard, count in enumerate([9, 10]):
        files = [(f"{shard}-{i:02d}.cls", f"{shard}/{i}".encode()) for i in range(count)]
        put(bucket, f"labels/part-{shard}.tgz", tar_bytes(files, gz=True))
        labels += [d for _, d in files]
    put(bucket, "labels/part-1.tgz.md5", b"not a shard, and no member of part-1.tgz")
    url = ais_server.endpoint
    sources = [
        DataShard(url, bucket.name, prefix="images/"),
        DataShard(url, bucket.name, prefix="labels/"),
    ]
    return sources, list(zip(images, labels, strict=False))


@pytest.mark.parametrize("max_batch_size", [64, 4, None])
@pytest.mark.parametrize("num_workers", [0, 2])
def test_multishard_every_tuple_once(
    two_sources: tuple[list[DataShard], list[tuple[bytes, ...]]],
    num_workers: int,
    max_batch_size: int | None,
) -> None:
    sources, expected = two_sources
    stream = AISMultiShardStream(sources, max_batch_size=max_batch_size)
    got = [tuple(t) for t in DataLoader(stream, batch_size=None, num_workers=num_workers)]
    assert Counter(got) == Counter(expected)
    # DataLoader takes one item from each worker in turn: the round-robin share keeps order.
    assert got == expected


@pytest.mark.parametrize("max_batch_size", [4, None])
def test_multishard_resumes_at_the_next_tuple(
    two_sources: tuple[list[DataShard], list[tuple[bytes, ...]]], max_batch_size: int | None
) -> None:
    sources, expected = two_sources
    for k in (0, 1, 4, 6, 15):
        stream = AISMultiShardStream(sources, max_batch_size=max_batch_size)
        it = iter(stream)
        head = [next(it) for _ in range(k)]
        state = stream.state_dict()
        assert state["done"] == k
        resumed = AISMultiShardStream(sources, max_batch_size=max_batch_size)
        resumed.load_state_dict(state)
        assert resumed.state_dict() == state  # loaded, not yet iterated
        assert head + list(resumed) == expected, k
        assert list(resumed) == expected  # the next iteration starts over
    with pytest.raises(ValueError):
        AISMultiShardStream(sources).load_state_dict({"done": 3})


@pytest.mark.parametrize("num_workers", [0, 2])
def test_multishard_with_stateful_dataloader(
    two_sources: tuple[list[DataShard], list[tuple[bytes, ...]]], num_workers: int
) -> None:
    sdl = pytest.importorskip("torchdata.stateful_dataloader")
    sources, expected = two_sources

    def loader() -> Any:
        stream = AISMultiShardStream(sources, max_batch_size=3)
        return sdl.StatefulDataLoader(stream, batch_size=None, num_workers=num_workers)

    first = loader()
    it = iter(first)
    head = [tuple(next(it)) for _ in range(5)]
    state = first.state_dict()
    del it
    second = loader()
    second.load_state_dict(state)
    assert head + [tuple(t) for t in second] == expected


def test_multishard_len_and_collate(
    two_sources: tuple[list[DataShard], list[tuple[bytes, ...]]],
) -> None:
    sources, expected = two_sources
    stream = AISMultiShardStream(sources)
    assert len(stream) == len(expected) == 15
    batches = list(DataLoader(stream, batch_size=4, num_workers=2))
    assert sum(len(images) for images, _ in batches) == 15


def test_multishard_spawned_workers(
    two_sources: tuple[list[DataShard], list[tuple[bytes, ...]]],
) -> None:
    sources, expected = two_sources
    loader = DataLoader(
        AISMultiShardStream(sources),
        batch_size=None,
        num_workers=2,
        multiprocessing_context="spawn",
    )
    assert [tuple(t) for t in loader] == expected


def test_multishard_missing_bucket_raises(ais_server: LocalServer) -> None:
    stream = AISMultiShardStream([DataShard(ais_server.endpoint, "no-such-bucket")])
    with pytest.raises(AISError):
        list(stream)


def test_multishard_rejects_bad_batch_size(ais_server: LocalServer) -> None:
    with pytest.raises(ValueError, match="max_batch_size"):
        AISMultiShardStream([], max_batch_size=0)
