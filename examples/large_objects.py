"""Large objects: chunked storage, parallel range reads and AISParallelMapDataset.

Writes a few objects of some MiB as chunked objects, then reads them back every way the SDK
offers for big objects: one GET, N concurrent range GETs into shared memory
(`get_reader(num_workers=N).read_all()`), streaming with N workers, straight into a numpy array
(`read_into`), to a file (`download_to`), and as a map-style PyTorch dataset with and without
DataLoader worker processes.

    python examples/large_objects.py                      # embedded server, temporary mountpaths
    python examples/large_objects.py --endpoint http://aistore-proxy:51080   # a real cluster

Sizes are small on purpose (seconds on 2 cores), so the timings printed say little: parallel
reads pay off for objects of hundreds of MiB and more, on a machine with cores to spare.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import torch
from torch.utils.data import DataLoader

from aistore.pytorch import AISParallelMapDataset
from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.obj.content_iterator import ParallelBuffer
from aistore.server import LocalServer

MiB = 1 << 20
T = TypeVar("T")


def timed(label: str, size: int, fn: Callable[[], T]) -> T:
    start = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - start
    print(f"  {label:<34} {seconds * 1000:7.1f} ms  {size / seconds / 1e9:5.2f} GB/s")
    return out


def write_objects(bucket: Bucket, count: int, size: int) -> dict[str, str]:
    """Random objects; returns name -> sha256 so reads can be checked without keeping them."""
    rng = np.random.default_rng(7)
    digests = {}
    for i in range(count):
        data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
        name = f"large/{i:02d}.bin"
        bucket.object(name).get_writer().put_content(data)
        digests[name] = hashlib.sha256(data).hexdigest()
    return digests


def read_every_way(bucket: Bucket, name: str, digest: str, workers: int, tmp: Path) -> None:
    obj = bucket.object(name)
    size = obj.head("name,size").size
    print(f"{name}: {size / MiB:.0f} MiB")

    data = timed("one GET, read_all()", size, lambda: obj.get_reader().read_all())
    assert isinstance(data, bytes) and hashlib.sha256(data).hexdigest() == digest

    # N concurrent range GETs into one shared-memory buffer; close it (or use `with`) when done.
    buf = timed(
        f"{workers} range GETs, read_all()",
        size,
        lambda: obj.get_reader(num_workers=workers).read_all(),
    )
    assert isinstance(buf, ParallelBuffer)
    with buf:
        array = np.frombuffer(buf.buf, dtype=np.uint8)  # a view, no copy
        assert hashlib.sha256(array.data).hexdigest() == digest

    def stream() -> str:
        h = hashlib.sha256()
        for piece in obj.get_reader(num_workers=workers):  # bytes, in order, bounded memory
            h.update(piece)
        return h.hexdigest()

    assert timed(f"{workers} range GETs, streaming", size, stream) == digest

    target = np.empty(size, dtype=np.uint8)  # any writable buffer: numpy, pinned tensor, mmap
    reader = obj.get_reader(num_workers=workers)
    timed("read_into(numpy array)", size, lambda: reader.read_into(target))
    assert hashlib.sha256(target.data).hexdigest() == digest

    path = tmp / "download.bin"
    reader = obj.get_reader(num_workers=workers)
    timed("download_to(file)", size, lambda: reader.download_to(path))
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def dataset_epochs(bucket: Bucket, digests: dict[str, str], workers: int) -> None:
    dataset = AISParallelMapDataset(bucket, prefix_map={bucket: "large/"}, num_workers=workers)
    print(f"AISParallelMapDataset: {len(dataset)} objects, {dataset.num_workers} range GETs each")
    for loader_workers in (0, 2):
        # Items are (name, ParallelBuffer); the default collate keeps buffers as a list. A buffer
        # made in a DataLoader worker reaches this process as a descriptor, without a copy.
        loader = DataLoader(dataset, batch_size=2, num_workers=loader_workers)
        start = time.perf_counter()
        seen = 0
        for names, buffers in loader:
            for name, buf in zip(names, buffers, strict=True):
                with buf:
                    tensor = torch.frombuffer(buf.buf, dtype=torch.uint8)
                    assert hashlib.sha256(tensor.numpy().data).hexdigest() == digests[name]
                    seen += 1
        seconds = time.perf_counter() - start
        print(f"  DataLoader(num_workers={loader_workers}): {seen} objects in {seconds:.2f} s")


def run(client: Client, args: argparse.Namespace) -> None:
    bucket = client.bucket(args.bucket).create(exist_ok=True)
    try:
        # Objects from 1 MiB up are stored as chunks of --chunk-mib; a parallel reader fetches
        # one chunk per range GET.
        chunks = {"objsize_limit": "1MiB", "chunk_size": f"{args.chunk_mib}MiB"}
        bucket.make_request("PATCH", "set-bprops", value={"chunks": chunks})
        digests = write_objects(bucket, args.objects, args.mib * MiB)
        info = bucket.object(next(iter(digests))).head("chunked").chunks
        if info is not None:
            print(f"stored as {info.chunk_count} chunks of {info.max_chunk_size / MiB:.0f} MiB")
        with tempfile.TemporaryDirectory() as tmp:
            name = next(iter(digests))
            read_every_way(bucket, name, digests[name], args.workers, Path(tmp))
        dataset_epochs(bucket, digests, args.workers)
    finally:
        bucket.delete(missing_ok=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--endpoint", help="an AIStore cluster (default: start the embedded server)")
    ap.add_argument("--bucket", default="large-objects-example")
    ap.add_argument("--objects", type=int, default=4)
    ap.add_argument("--mib", type=int, default=16, help="object size in MiB")
    ap.add_argument("--chunk-mib", type=int, default=2)
    ap.add_argument("--workers", type=int, default=4, help="range GETs per object")
    args = ap.parse_args()
    with contextlib.ExitStack() as stack:
        if args.endpoint:
            client = Client(args.endpoint)
        else:
            client = stack.enter_context(LocalServer(num_mountpaths=2)).client()
        run(client, args)


if __name__ == "__main__":
    main()
