"""`AISShardReader`: an iterable dataset over WebDataset-style tar shards that yields one
`(key, {extension: bytes})` sample at a time.

Example:
    >>> from aistore.pytorch.shard_reader import AISShardReader  # doctest: +SKIP
    >>> for key, sample in AISShardReader(client.bucket("shards")):  # doctest: +SKIP
    ...     image, label = sample["jpg"], sample["cls"]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Literal

from aistore.pytorch._fetch import progress
from aistore.pytorch._shards import (
    EtlName,
    SampleAssembler,
    SampleKey,
    basename_key,
    iter_archive_files,
    webdataset_key,
)
from aistore.pytorch.base_iter_dataset import AISBaseIterDataset
from aistore.pytorch.utils import get_basename as get_basename
from aistore.pytorch.utils import get_extension as get_extension
from aistore.sdk.ais_source import AISSource
from aistore.sdk.bucket import Bucket
from aistore.sdk.etl.etl_config import ETLConfig as ETLConfig
from aistore.sdk.list_object_flag import ListObjectFlag
from aistore.sdk.obj.object import Object

__all__ = ["AISShardReader"]

KeyStyle = Literal["basename", "webdataset"]

_KEY_STYLES: dict[str, SampleKey] = {"basename": basename_key, "webdataset": webdataset_key}


class AISShardReader(AISBaseIterDataset):
    """Reads WebDataset-style shards and yields `(key, ZeroDict)` per sample: the files of a
    shard that share a key, as `{extension: bytes}`. Shards are `.tar`, `.tar.gz`/`.tgz`,
    `.tar.lz4` or `.zip` - AIS's archive formats - or a zstd-compressed tar, recognized by
    their first bytes (the official class reads plain tar only).

    Each shard is one streamed GET, read forward once (the shard is never held whole). A
    sample is handed out as soon as all its files have arrived, in the order its key first
    appears in the shard: the server lists the shard's files first (one list request per
    shard), so with contiguous samples - as WebDataset writes them - memory is one sample plus
    a read buffer. With `etl_name`, or for shards the server cannot list, the samples of a
    shard are handed out when the shard ends. The samples and their `ZeroDict` filling are
    those of the official class.

    The unit of work is the shard: every shard is read once per epoch across all DataLoader
    workers of all torch.distributed ranks, optionally in a seeded per-epoch order, and
    `state_dict()` resumes at the next sample (the shard being read is read again from its
    start, the samples already handed out skipped); see `AISBaseIterDataset`, whose
    keyword-only options pass through.

    Keys (`key_style`):
        - `"basename"` (default, as the official class): the file name up to its first dot,
          directories dropped - `a/x.jpg` and `b/x.jpg` are the same sample `x`; extension =
          text after the last dot (`x.seg.png` -> `png`).
        - `"webdataset"`: WebDataset's convention - the path up to the first dot of the file
          name (`a/x`, `b/x` stay apart); extension = everything after that dot, lower-cased
          (`x.seg.PNG` -> `seg.png`).
    Files without an extension, directories and links are skipped. Keys are not unique
    across shards.

    Example:
        >>> ds = AISShardReader(bucket, prefix_map={bucket: "train/"})  # doctest: +SKIP
        >>> loader = DataLoader(ds, batch_size=32, num_workers=4)  # doctest: +SKIP
        >>> keys, fields = next(iter(loader))  # doctest: +SKIP
        >>> len(keys), len(fields["jpg"]), fields["cls"][0]  # doctest: +SKIP
        (32, 32, b'7')

    Args:
        bucket_list: one bucket or a list of them (each object is read as a shard).
        prefix_map: per bucket (the same instance), a prefix or prefixes of its shards.
        etl_name: an ETL of the cluster applied to each shard.
        show_progress: a progress bar over the shards of each worker (tqdm).
        partition_sources_by_worker: each worker reads only its share of the buckets.
        key_style: `"basename"` or `"webdataset"` (see above).
        shuffle, seed, rank, world_size, even_split: the shard order and split (keyword only;
            see `AISBaseIterDataset`).

    Raises:
        ValueError: no bucket, or an unknown `key_style`.
        tarfile.TarError: (while iterating) a shard is not a readable archive, or is damaged
            (the official class's error type); the message names the shard.
    """

    class ZeroDict(dict[str, bytes]):
        """A sample's `{extension: bytes}`, with `b""` for every extension this worker has seen
        in its shards so far but this sample lacks: PyTorch's default collate takes the keys
        of a batch's first sample, so every sample needs them all (None would not collate).

        Example:
            >>> AISShardReader.ZeroDict({"jpg": b"x"}, ["cls", "jpg"])
            {'jpg': b'x', 'cls': b''}
        """

        def __init__(self, data: Mapping[str, bytes], keys: Iterable[str] = ()) -> None:
            super().__init__(data)
            for key in keys:
                self.setdefault(key, b"")

    def __init__(
        self,
        bucket_list: Bucket | Sequence[Bucket],
        prefix_map: Mapping[AISSource, str | Sequence[str] | None] | None = None,
        etl_name: str | None = None,
        show_progress: bool = False,
        partition_sources_by_worker: bool = False,
        key_style: KeyStyle = "basename",
        *,
        shuffle: bool = False,
        seed: int = 0,
        rank: int | None = None,
        world_size: int | None = None,
        even_split: bool = False,
    ) -> None:
        super().__init__(
            bucket_list,
            prefix_map,
            partition_sources_by_worker,
            shuffle=shuffle,
            seed=seed,
            rank=rank,
            world_size=world_size,
            even_split=even_split,
        )
        if key_style not in _KEY_STYLES:
            raise ValueError(f"key_style must be one of {sorted(_KEY_STYLES)}, got {key_style!r}")
        self._etl_name = etl_name
        self._show_progress = show_progress
        self._key_style: KeyStyle = key_style
        self._sample_key = _KEY_STYLES[key_style]
        self._observed_keys: set[str] = set()
        sources = [bucket_list] if isinstance(bucket_list, AISSource) else list(bucket_list)
        self._buckets = {_bucket_id(b.name, b.qparam): b for b in sources if isinstance(b, Bucket)}

    def __iter__(self) -> Iterator[tuple[str, AISShardReader.ZeroDict]]:
        epoch, shards = self._start_epoch()
        if self._show_progress:
            shards = progress(shards, "AISShardReader" + epoch.consumer.name, "shard")
        skip = epoch.part  # samples of the first shard handed out before the state was saved
        for shard in shards:
            for key, sample in self._read_shard(shard):
                if skip:
                    skip -= 1
                    continue
                epoch.part += 1  # before the yield: a state taken after it includes it
                yield key, self.ZeroDict(sample, self._observed_keys)
            epoch.done += 1
            epoch.part = skip = 0

    def __len__(self) -> int:
        """The number of samples in all shards of the sources (the whole dataset, also under
        torch.distributed, where each rank reads the samples of its shards only), from the
        server's listing of each shard's files: one list request per shard, no data read.
        Shards the server cannot list count 0."""
        total = 0
        for shard in self._create_objects_iter():
            total += len({key for key, _ in self._listed_parts(shard) or ()})
        return total

    def _read_shard(self, shard: Object) -> Iterator[tuple[str, dict[str, bytes]]]:
        """The samples of one shard, in order of first appearance."""
        etl = EtlName(self._etl_name) if self._etl_name else None
        expected = None if etl else self._listed_parts(shard)
        if expected:
            self._observed_keys.update(field for _, field in expected)
        assembler = SampleAssembler(Counter(key for key, _ in expected or ()))
        what = f"<{type(self).__name__}> shard {shard.name!r} of bucket {shard.bucket_name!r}"
        with shard.get_reader(etl=etl).as_file() as stream:
            for name, data in iter_archive_files(stream, what):
                part = self._sample_key(name)
                if part is None:
                    continue
                self._observed_keys.add(part[1])
                yield from assembler.add(part[0], part[1], data)
        yield from assembler.finish()

    def _listed_parts(self, shard: Object) -> list[tuple[str, str]] | None:
        """`(key, extension)` of every file of `shard` as the server lists them (files
        without an extension left out); None when the shard's bucket is not known here."""
        bucket = self._buckets.get(_bucket_id(shard.bucket_name, shard.query_params))
        if bucket is None:
            return None
        inside = shard.name + "/"
        parts = []
        entries = bucket.list_objects_iter(
            prefix=shard.name, props="name", flags=[ListObjectFlag.ARCH_DIR]
        )
        for entry in entries:
            if entry.name.startswith(inside):
                part = self._sample_key(entry.name[len(inside) :])
                if part is not None:
                    parts.append(part)
        return parts


def _bucket_id(name: str, qparams: Mapping[str, str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    return name, tuple(sorted(qparams.items()))
