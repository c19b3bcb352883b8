"""Reading archive streams from memory: the package's libarchive reader (`aistore._native`)
against `tarfile`'s stream mode (`zipfile`, which cannot stream, for zip) and the hand-written
Python parser it replaced (loaded from git history: --baseline REV, default the last commit
that had it). One row per archive and reader: members/s and MB/s of member bytes, the best of
--repeat runs, all in one process.

    python benchmarks/archive_read.py [--repeat 3] [--baseline a417752]
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from aistore._native import ArchiveReader  # noqa: E402

BASELINE = "a417752"  # the last commit with the Python tar/zip parser
CASES = [(10 << 10, 10_000), (1 << 20, 200)]


def make_archive(kind: str, size: int, count: int) -> bytes:
    # Incompressible, as most training data is, and no member repeats its neighbour (gzip would
    # find the repeat within its window).
    pool = os.urandom(8 << 20)
    bio = io.BytesIO()
    if kind == "zip":  # stored, as the server writes it
        with zipfile.ZipFile(bio, "w", zipfile.ZIP_STORED) as z:
            for i in range(count):
                z.writestr(f"sample-{i:06d}.bin", _slice(pool, i, size))
        return bio.getvalue()
    with tarfile.open(fileobj=bio, mode="w", format=tarfile.PAX_FORMAT) as t:
        for i in range(count):
            info = tarfile.TarInfo(f"sample-{i:06d}.bin")
            info.size = size
            t.addfile(info, io.BytesIO(_slice(pool, i, size)))
    data = bio.getvalue()
    return gzip.compress(data, compresslevel=1) if kind == "tgz" else data


def _slice(pool: bytes, i: int, size: int) -> bytes:
    start = (i * 7919 * 64) % (len(pool) - size)
    return pool[start : start + size]


def load_baseline(rev: str) -> ModuleType | None:
    """The old `archive_stream` module at `rev`, or None if git cannot show it."""
    try:
        src = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:aistore/_internal/archive_stream.py"],
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    path = Path(tempfile.mkdtemp()) / "old_archive_stream.py"
    path.write_bytes(src)
    spec = importlib.util.spec_from_file_location("old_archive_stream", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def read_libarchive(data: bytes) -> int:
    return sum(len(m.data) for m in ArchiveReader(io.BytesIO(data)))


def read_tarfile(data: bytes) -> int:
    total = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r|*") as t:
        for info in t:
            f = t.extractfile(info)
            if f is not None:
                total += len(f.read())
    return total


def read_zipfile(data: bytes) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return sum(len(z.read(info)) for info in z.infolist())


def old_reader(mod: ModuleType, kind: str) -> Callable[[bytes], int]:
    def read(data: bytes) -> int:
        src = mod.ReaderSource(io.BytesIO(data))
        if kind == "zip":
            stream = mod.ZipStream(src)
        else:
            stream = mod.TarStream(mod.GzipSource(src) if kind == "tgz" else src)
        return sum(len(m.data) for m in stream.files())

    return read


def best_time(fn: Callable[[bytes], int], data: bytes, expect: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        got = fn(data)
        best = min(best, time.perf_counter() - t0)
        if got != expect:
            raise AssertionError(f"{fn.__name__}: read {got} bytes, expected {expect}")
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", default=BASELINE, help="git revision of the old Python parser")
    args = ap.parse_args()
    old = load_baseline(args.baseline)
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs; best of {args.repeat}")
    header = f"{'archive':<22}{'reader':<34}{'members/s':>12}{'MB/s':>9}{'vs stdlib':>11}"
    print(header)
    print("-" * len(header))
    for kind in ("tar", "zip", "tgz"):
        for size, count in CASES:
            data = make_archive(kind, size, count)
            expect = size * count
            readers: list[tuple[str, Callable[[bytes], int]]] = []
            if kind == "zip":
                readers.append(("zipfile (seekable, not streaming)", read_zipfile))
            else:
                readers.append(("tarfile r|*", read_tarfile))
            if old is not None:
                readers.append((f"python parser ({args.baseline})", old_reader(old, kind)))
            readers.append(("libarchive", read_libarchive))
            label = f"{kind} {size >> 10} KiB x {count}"
            base = None
            for name, fn in readers:
                t = best_time(fn, data, expect, args.repeat)
                base = base or t
                print(
                    f"{label:<22}{name:<34}{count / t:>12,.0f}{expect / t / 1e6:>9,.0f}"
                    f"{base / t:>10.2f}x"
                )
                label = ""


if __name__ == "__main__":
    main()
