"""The pure helpers of the shard datasets: key conventions, sample assembly, tar streaming,
the consumer share (in real DataLoader workers) and ZeroDict."""

from __future__ import annotations

import bz2
import gzip
import io
import pickle
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from torch.utils.data import DataLoader, IterableDataset  # noqa: E402

from aistore.pytorch._sharding import resolve_rank  # noqa: E402
from aistore.pytorch._shards import (  # noqa: E402
    EtlName,
    SampleAssembler,
    basename_key,
    iter_archive_files,
    share_of_consumers,
    webdataset_key,
)
from aistore.pytorch.shard_reader import AISShardReader  # noqa: E402


@pytest.mark.parametrize(
    ("name", "basename", "webdataset"),
    [
        ("x.jpg", ("x", "jpg"), ("x", "jpg")),
        ("a/b/x.seg.PNG", ("x", "PNG"), ("a/b/x", "seg.png")),
        ("a.d/x.cls", ("x", "cls"), ("a.d/x", "cls")),
        ("noext", None, None),
        ("dir.v2/noext", None, None),
        (".hidden", ("", "hidden"), None),
        ("trailing.", None, None),
    ],
)
def test_key_conventions(
    name: str, basename: tuple[str, str] | None, webdataset: tuple[str, str] | None
) -> None:
    assert basename_key(name) == basename
    assert webdataset_key(name) == webdataset


def test_assembler_hands_out_complete_samples_in_first_seen_order() -> None:
    s = SampleAssembler({"a": 2, "b": 2, "c": 1})
    assert s.add("a", "jpg", b"1") == []
    assert s.add("b", "jpg", b"2") == []
    assert s.add("b", "cls", b"3") == []  # b is complete but a is not: order holds it back
    assert s.add("a", "cls", b"4") == [
        ("a", {"jpg": b"1", "cls": b"4"}),
        ("b", {"jpg": b"2", "cls": b"3"}),
    ]
    assert s.add("c", "jpg", b"5") == [("c", {"jpg": b"5"})]
    assert s.finish() == []


def test_assembler_without_counts_waits_for_the_end() -> None:
    s = SampleAssembler()
    assert s.add("a", "jpg", b"1") == [] and s.add("b", "jpg", b"2") == []
    assert s.add("a", "jpg", b"3") == []  # a repeated field overwrites
    assert s.finish() == [("a", {"jpg": b"3"}), ("b", {"jpg": b"2"})]
    assert s.finish() == []


def test_assembler_unlisted_key_holds_later_ones() -> None:
    s = SampleAssembler({"b": 1})
    assert s.add("x", "jpg", b"?") == []
    assert s.add("b", "jpg", b"1") == []  # complete, but behind x, whose count is unknown
    assert s.finish() == [("x", {"jpg": b"?"}), ("b", {"jpg": b"1"})]


def _tar(files: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("link.jpg")
        link.type = tarfile.SYMTYPE
        link.linkname = files[0][0]
        tar.addfile(link)
    return buf.getvalue()


def _zip(files: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("a/", b"")  # a directory entry
        for name, data in files:
            z.writestr(name, data)
    return buf.getvalue()


@pytest.mark.parametrize(
    "pack",
    [_tar, lambda files: gzip.compress(_tar(files)), _zip],
    ids=["tar", "tar.gz", "zip"],
)
def test_iter_archive_files_regular_files_in_archive_order(
    pack: Callable[[list[tuple[str, bytes]]], bytes],
) -> None:
    files = [("b.jpg", b"B" * 70000), ("a/c.cls", b"1"), ("a/" + "long" * 40 + ".txt", b"")]
    assert list(iter_archive_files(io.BytesIO(pack(files)), "s")) == files


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00garbage" * 100,
        _tar([("a.jpg", b"x" * 2000)])[:1200],
        gzip.compress(b"z" * 600),
        gzip.compress(_tar([("a.jpg", b"x" * 2000)]))[:-30],
        bz2.compress(_tar([("a.jpg", b"x")])),
    ],
    ids=["empty", "garbage", "truncated", "gzip-not-tar", "gzip-truncated", "bz2-unsupported"],
)
def test_iter_archive_files_damaged_is_tar_error_naming_the_shard(data: bytes) -> None:
    with pytest.raises(tarfile.TarError, match="shard-7.tar"):
        list(iter_archive_files(io.BytesIO(data), "shard-7.tar"))


def test_iter_archive_files_error_survives_pickling() -> None:
    with pytest.raises(tarfile.TarError) as info:
        list(iter_archive_files(io.BytesIO(b"junk" * 200), "s.tar"))
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is tarfile.TarError and str(again) == str(info.value)


def test_etl_name_sets_the_query_parameter() -> None:
    params = {"provider": "ais"}
    EtlName("resize").update_qparams(params)
    assert params == {"provider": "ais", "etl_name": "resize"}


class _Numbers(IterableDataset[int]):
    """Takes the rank of the main process along to spawned workers, as the datasets do."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.rank_world: tuple[int, int] | None = None

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "rank_world": resolve_rank(None, None)}

    def __iter__(self) -> Iterator[int]:
        return share_of_consumers(range(self.n), self.rank_world)


@pytest.mark.parametrize("num_workers", [0, 1, 2])
def test_share_of_consumers_each_item_once_in_order(num_workers: int) -> None:
    got = list(DataLoader(_Numbers(10), batch_size=None, num_workers=num_workers))
    assert [int(x) for x in got] == list(range(10))


def _rank_main(rank: int, store: str, out: str, context: str) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
    try:
        loader = DataLoader(
            _Numbers(23), batch_size=None, num_workers=2, multiprocessing_context=context
        )
        got = [int(x) for x in loader]
        with open(f"{out}.{rank}", "w") as f:
            f.write(",".join(map(str, got)))
    finally:
        dist.destroy_process_group()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("context", ["fork", "spawn"])
@pytest.mark.usefixtures("spawnable_tests")
def test_share_of_consumers_splits_ranks_and_workers(tmp_path: Path, context: str) -> None:
    import torch.multiprocessing as mp

    out = str(tmp_path / "got")
    mp.spawn(_rank_main, args=(str(tmp_path / "store"), out, context), nprocs=2, join=True)
    shares = [[int(x) for x in Path(f"{out}.{r}").read_text().split(",")] for r in range(2)]
    assert sorted(shares[0] + shares[1]) == list(range(23))
    # As the base dataset splits: rank r of R owns r, r+R, ...; its workers deal those out.
    assert {x % 2 for x in shares[0]} == {0} and {x % 2 for x in shares[1]} == {1}


def test_zero_dict_fills_and_pickles() -> None:
    d = AISShardReader.ZeroDict({"jpg": b"x"}, ["cls", "jpg"])
    assert d == {"jpg": b"x", "cls": b""}
    again = pickle.loads(pickle.dumps(d))
    assert type(again) is AISShardReader.ZeroDict and again == d
