"""Quick start: start the embedded server, write a small dataset, read it back every way we can.

Run with ``./scripts/quickstart.sh`` (installs and builds first) or, once installed,
``python examples/quickstart.py [--small-objects N] [--large-objects N] [--large-mib N]``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from aistore._native import xxhash64_hex
from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.server import LocalServer

T = TypeVar("T")
MiB = 1 << 20


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def payload(name: str, size: int) -> bytes:
    """Deterministic content, so every read can be verified without keeping the data around."""
    seed = xxhash64_hex(name.encode()).encode()
    return (seed * (size // len(seed) + 1))[:size]


def write_dataset(bucket: Bucket, small: int, small_size: int, large: int, large_size: int) -> None:
    def put(name_size: tuple[str, int]) -> None:
        name, size = name_size
        bucket.object(name).get_writer().put_content(payload(name, size))

    items = [(f"train/{i:06d}.bin", small_size) for i in range(small)]
    items += [(f"large/{i:02d}.bin", large_size) for i in range(large)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, items))


def dataloader_epoch(client: Client, bucket: Bucket, small_size: int) -> str:
    """One epoch of a PyTorch DataLoader (2 worker processes) over the small objects."""
    try:
        from torch.utils.data import DataLoader

        from aistore.pytorch.batch_iter_dataset import AISBatchIterDataset
    except ImportError as e:
        return f"skipped: {e} (install the torch extra: pip install 'aistore-embedded[torch]')"
    dataset = AISBatchIterDataset(bucket, client, prefix_map={bucket: "train/"}, max_batch_size=64)
    loader = DataLoader(dataset, batch_size=32, num_workers=2, collate_fn=list)
    start = time.perf_counter()
    seen = 0
    for samples in loader:
        for name, data in samples:
            assert data == payload(name, small_size)
        seen += len(samples)
    t = time.perf_counter() - start
    return f"{seen} samples, 2 workers, GetBatch per 64 objects, {seen / t:,.0f} samples/s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--small-objects", type=int, default=2000)
    ap.add_argument("--small-kib", type=int, default=10)
    ap.add_argument("--large-objects", type=int, default=4)
    ap.add_argument("--large-mib", type=int, default=64)
    ap.add_argument("--chunk-mib", type=int, default=8)
    args = ap.parse_args()
    small_size, large_size = args.small_kib << 10, args.large_mib * MiB
    report: list[tuple[str, str]] = []

    with LocalServer(num_mountpaths=4) as srv:
        client = srv.client()
        report.append(
            ("server", f"{srv.endpoint}, {len(srv.mountpaths)} mountpaths, pid {srv.pid}")
        )
        bucket = client.bucket("quickstart").create(exist_ok=True)
        # Objects of at least 1 MiB are stored as chunks spread over all mountpaths.
        bucket.make_request(
            "PATCH",
            "set-bprops",
            value={"chunks": {"objsize_limit": "1MiB", "chunk_size": f"{args.chunk_mib}MiB"}},
        )

        total = args.small_objects * small_size + args.large_objects * large_size
        _, t = timed(
            lambda: write_dataset(
                bucket, args.small_objects, small_size, args.large_objects, large_size
            )
        )
        report.append(
            (
                "write dataset",
                f"{args.small_objects} x {args.small_kib} KiB + {args.large_objects} x "
                f"{args.large_mib} MiB in {t:.2f} s ({total / t / MiB:.0f} MiB/s)",
            )
        )

        entries, t = timed(
            lambda: bucket.list_all_objects(props="name,size,checksum", page_size=1000)
        )
        report.append(
            ("list objects", f"{len(entries)} entries in {t * 1000:.0f} ms (pages of 1000)")
        )
        assert len(entries) == args.small_objects + args.large_objects

        small_names = [e.name for e in entries if e.name.startswith("train/")]

        def get_small(name: str) -> int:
            data = bucket.object(name).get_reader().read_all()
            assert data == payload(name, small_size), name
            return len(data)

        with ThreadPoolExecutor(16) as pool:
            nbytes, t = timed(lambda: sum(pool.map(get_small, small_names)))
        report.append(
            (
                "GET small objects",
                f"{len(small_names)} objects verified in {t:.2f} s "
                f"({len(small_names) / t:,.0f} obj/s, 16 threads)",
            )
        )

        large = bucket.object("large/00.bin")
        chunks = large.head("chunked").chunks
        report.append(
            (
                "chunked layout",
                f"{large.name}: {chunks.chunk_count if chunks else 0} chunks of "
                f"{(chunks.max_chunk_size if chunks else 0) // MiB} MiB",
            )
        )
        data, t = timed(lambda: large.get_reader().read_all())
        assert data == payload(large.name, large_size)
        props = large.props
        assert xxhash64_hex(data) == props.checksum_value
        report.append(
            (
                "GET large object",
                f"{len(data) // MiB} MiB in {t:.3f} s ({len(data) / t / 1e9:.2f} GB/s), "
                f"xxhash {props.checksum_value} verified",
            )
        )

        start, length = large_size // 2 - 1000, 4096  # straddles a chunk boundary
        rng = large.get_reader(byte_range=f"bytes={start}-{start + length - 1}").read_all()
        assert rng == data[start : start + length]
        report.append(
            ("range GET", f"bytes {start}-{start + length - 1} across a chunk boundary: ok")
        )

        with large.get_reader().as_file() as f:
            buf = bytearray(4 * MiB)
            got = 0
            while n := f.readinto(buf):
                got += n
        assert got == large_size
        report.append(("file-like reader", f"readinto() over {got // MiB} MiB: ok"))

        # Parallel download: concurrent chunk-aligned range GETs into one shared-memory buffer.
        with large.get_reader(num_workers=4).read_all() as pbuf:
            assert pbuf.buf == payload(large.name, large_size)
        # Closed, its memory went back to the pool: the next read of this size reuses it, as a
        # loader's reads do (fresh shared memory costs a page fault per 4 KiB).
        _, t = timed(lambda: large.get_reader(num_workers=4).read_all().close())
        report.append(
            (
                "parallel download",
                f"{large_size // MiB} MiB with 4 workers into shared memory in {t:.3f} s "
                f"({large_size / t / 1e9:.2f} GB/s, pooled buffer)",
            )
        )

        # GetBatch: many objects in one ordered archive stream.
        names = small_names[:1000]
        batch = client.batch(objects=names, bucket=bucket)
        (got, t) = timed(lambda: [(info.obj_name, data) for info, data in batch.get()])
        assert [n for n, _ in got] == names
        assert all(data == payload(n, small_size) for n, data in got)
        report.append(
            (
                "GetBatch",
                f"{len(got)} objects in one request, in order, in {t:.2f} s "
                f"({len(got) / t:,.0f} obj/s)",
            )
        )

        report.append(("DataLoader epoch", dataloader_epoch(client, bucket, small_size)))

        bucket.delete()
        report.append(("cleanup", "bucket destroyed, server stopped, temp mountpaths removed"))

    width = max(len(k) for k, _ in report)
    print("\naistore quick start")
    print("-" * 72)
    for k, v in report:
        print(f"{k:<{width}}  {v}")
    print("-" * 72)
    print(f"pid {os.getpid()}: done")


if __name__ == "__main__":
    main()
