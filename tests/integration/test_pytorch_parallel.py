"""AISParallelMapDataset with the real server, in the main process and in DataLoader workers:
buffers made in a worker reach the main process without a copy, and a worker killed with
SIGKILL mid-download leaves nothing behind."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from torch.utils.data import DataLoader  # noqa: E402

from aistore._internal import shm  # noqa: E402
from aistore.pytorch import AISBaseMapDataset, AISParallelMapDataset  # noqa: E402
from aistore.sdk.bucket import Bucket  # noqa: E402
from aistore.sdk.client import Client  # noqa: E402
from aistore.sdk.obj.content_iterator import ParallelBuffer  # noqa: E402

KIB, MIB = 1 << 10, 1 << 20


def _our_mappings() -> list[str]:
    pooled = shm.pool().idle_names
    with open("/proc/self/maps") as f:
        lines = [line for line in f if "memfd:aistore" in line]
    return [m for m in lines if m.split("memfd:")[1].split(" ")[0] not in pooled]


@pytest.fixture
def objects(bucket: Bucket) -> dict[str, bytes]:
    value = {"chunks": {"objsize_limit": "1KiB", "chunk_size": "256KiB"}}
    bucket.make_request("PATCH", "set-bprops", value=value)
    data = {f"train/{i:02d}": os.urandom(MIB + i * 4099) for i in range(8)}
    data["val/0"] = os.urandom(300 * KIB)
    for name, content in data.items():
        bucket.object(name).get_writer().put_content(content)
    return data


@pytest.fixture
def dev_shm() -> Iterator[set[str]]:
    before = set(os.listdir("/dev/shm"))
    yield before
    gc.collect()
    assert not [n for n in set(os.listdir("/dev/shm")) - before if n.startswith("aistore")]
    assert _our_mappings() == []


def test_dataset_items(bucket: Bucket, objects: dict[str, bytes], dev_shm: set[str]) -> None:
    ds = AISParallelMapDataset(bucket, num_workers=4)
    assert isinstance(ds, AISBaseMapDataset) and ds.num_workers == 4
    assert len(ds) == len(objects)
    for i in range(len(ds)):
        name, buf = ds[i]
        with buf:
            assert isinstance(buf, ParallelBuffer)
            assert buf.tobytes() == objects[name]
    with pytest.raises(IndexError, match="in bounds"):
        ds[len(ds)]
    assert [o.name for o in ds.get_obj_list()] == sorted(objects)


def test_sources_and_prefixes(client: Client, bucket: Bucket, objects: dict[str, bytes]) -> None:
    other = client.bucket(f"test-{uuid.uuid4().hex[:10]}").create()
    try:
        other.object("train/x").get_writer().put_content(b"x")
        ds = AISParallelMapDataset([bucket, other], prefix_map={bucket: "val/"})
        assert [o.name for o in ds.get_obj_list()] == ["val/0", "train/x"]
        ds = AISParallelMapDataset(bucket, prefix_map={bucket: ["val/", "train/0"]})
        names = [o.name for o in ds.get_obj_list()]
        assert names == ["val/0"] + [f"train/{i:02d}" for i in range(8)]
    finally:
        other.delete(missing_ok=True)
    with pytest.raises(ValueError, match="ais_source_list"):
        AISParallelMapDataset()
    with pytest.raises(ValueError, match="at least 2"):
        AISParallelMapDataset(bucket, num_workers=1)


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_dataloader_workers_hand_buffers_to_main_without_copy(
    bucket: Bucket, objects: dict[str, bytes], dev_shm: set[str], context: str
) -> None:
    """DataLoader(num_workers=2): each item's buffer is made by a worker (its name carries the
    worker's pid) and mapped by the main process; the default collate keeps buffers as lists."""
    ds = AISParallelMapDataset(bucket, prefix_map={bucket: "train/"}, num_workers=4)
    loader = DataLoader(
        ds, batch_size=3, num_workers=2, multiprocessing_context=context, timeout=120
    )
    seen = {}
    for names, buffers in loader:
        assert isinstance(buffers, list) and len(names) == len(buffers)
        for name, buf in zip(names, buffers, strict=True):
            creator = int(buf.name.split("-")[2])
            assert creator != os.getpid()
            assert any(buf.name in m for m in _our_mappings())  # mapped, not copied
            assert buf.buf == objects[name]
            seen[name] = creator
            buf.close()
    assert sorted(seen) == sorted(n for n in objects if n.startswith("train/"))
    assert len(set(seen.values())) == 2  # both workers produced buffers


def test_identity_collate_as_in_the_official_benchmark(
    bucket: Bucket, objects: dict[str, bytes], dev_shm: set[str]
) -> None:
    ds = AISParallelMapDataset(bucket, num_workers=2)
    loader = DataLoader(ds, batch_size=4, num_workers=2, collate_fn=lambda x: x, timeout=120)
    total = 0
    for batch in loader:
        for name, buf in batch:
            with buf:
                assert buf.tobytes() == objects[name]
                total += 1
    assert total == len(objects)


class _KilledMidDownload(AISParallelMapDataset):
    """The worker given the big object starts downloading it, then is killed with SIGKILL."""

    def __getitem__(self, index: int) -> tuple[str, ParallelBuffer]:
        if self.get_obj_list()[index].name.endswith("-big"):
            threading.Thread(target=super().__getitem__, args=(index,), daemon=True).start()
            time.sleep(0.02)
            os.kill(os.getpid(), signal.SIGKILL)
        return super().__getitem__(index)


def test_worker_killed_with_sigkill_leaves_nothing(
    bucket: Bucket, objects: dict[str, bytes], dev_shm: set[str]
) -> None:
    big = bucket.object("train/99-big")
    big.get_writer().put_content(os.urandom(64 * MIB))
    ds = _KilledMidDownload(bucket, prefix_map={bucket: "train/"}, num_workers=4)
    loader = DataLoader(ds, batch_size=1, num_workers=2, collate_fn=lambda x: x, timeout=120)
    received: list[Any] = []
    with pytest.raises(RuntimeError, match="exited unexpectedly|killed by signal"):
        for batch in loader:
            received.extend(batch)
    for _, buf in received:
        buf.close()
    del loader
    gc.collect()


def test_import_without_torch_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import aistore\n"
        "from aistore import Client\n"
        "try:\n"
        "    import aistore.pytorch\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert "aistore-embedded[torch]" in out.stdout
