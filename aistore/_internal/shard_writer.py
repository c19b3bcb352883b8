"""WebDataset-style tar shard writer (the subset `Bucket.write_dataset` uses).

A sample is a dict: `__key__` names it, every other key `ext` becomes the member
`<__key__>.<ext>`. Shards are files named `pattern % shard_number`; a new one starts after
`maxcount` samples or `maxsize` bytes, and `post(path)` runs on each finished shard.

Example:
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> w = ShardWriter(os.path.join(d, "s-%03d.tar"), maxcount=2)
    >>> for i in range(3): w.write({"__key__": f"k{i}", "cls": i})
    >>> w.close()
    >>> sorted(os.listdir(d))
    ['s-000.tar', 's-001.tar']
"""

from __future__ import annotations

import io
import json
import tarfile
import time
from collections.abc import Callable
from typing import Any

__all__ = ["ShardWriter", "encode_value"]


def encode_value(value: Any) -> bytes:
    """Bytes of one sample part: bytes as they are, text as UTF-8, JSON for lists/dicts."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (dict, list)):
        return json.dumps(value).encode("utf-8")
    return str(value).encode("utf-8")


class ShardWriter:
    """Writes samples into numbered tar shards (see the module docstring)."""

    def __init__(
        self,
        pattern: str,
        maxcount: int = 100000,
        maxsize: float = 3e9,
        post: Callable[[str], Any] | None = None,
        start_shard: int = 0,
        **_ignored: Any,
    ) -> None:
        self._pattern = pattern
        self._maxcount = maxcount
        self._maxsize = maxsize
        self._post = post
        self._shard = start_shard
        self._tar: tarfile.TarFile | None = None
        self._path = ""
        self._count = 0
        self._size = 0

    def write(self, sample: dict[str, Any]) -> None:
        """Add one sample, starting a new shard first when the current one is full."""
        if self._tar is None or self._count >= self._maxcount or self._size >= self._maxsize:
            self._next_shard()
        assert self._tar is not None
        key = str(sample["__key__"])
        now = time.time()
        for ext in sorted(k for k in sample if k != "__key__"):
            data = encode_value(sample[ext])
            info = tarfile.TarInfo(f"{key}.{ext}")
            info.size = len(data)
            info.mtime = int(now)
            self._tar.addfile(info, io.BytesIO(data))
            self._size += len(data) + 512
        self._count += 1

    def close(self) -> None:
        """Finish the current shard (and run `post` on it)."""
        if self._tar is None:
            return
        self._tar.close()
        self._tar = None
        if self._post is not None:
            self._post(self._path)

    def _next_shard(self) -> None:
        self.close()
        self._path = self._pattern % self._shard
        self._shard += 1
        # Closed in close(): the shard spans many write() calls.
        self._tar = tarfile.open(self._path, "w", format=tarfile.USTAR_FORMAT)  # noqa: SIM115
        self._count = 0
        self._size = 0
