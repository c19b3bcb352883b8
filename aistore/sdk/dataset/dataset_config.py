"""`DatasetConfig`: how samples are assembled from local files, and writing them as shards.

Example:
    >>> from pathlib import Path
    >>> from aistore.sdk.dataset.data_attribute import DataAttribute
    >>> cfg = DatasetConfig(DataAttribute(Path("imgs"), "image", "jpg"))  # doctest: +SKIP
    >>> bucket.write_dataset(cfg, pattern="train", maxcount=1000)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aistore._internal.shard_writer import ShardWriter
from aistore.sdk.const import DEFAULT_DATASET_MAX_COUNT, EXT_TAR
from aistore.sdk.dataset.config_attribute import ConfigAttribute
from aistore.sdk.dataset.data_attribute import DataAttribute

__all__ = ["DatasetConfig"]

logger = logging.getLogger(__name__)


class DatasetConfig:
    """Samples keyed by the files of `primary_attribute` (a `DataAttribute`: one sample per
    `<path>/*.<file_type>`), each completed by the `secondary_attributes`.

    Example:
        >>> cfg = DatasetConfig(DataAttribute(Path("imgs"), "image", "jpg"))
        >>> cfg.secondary_attributes
        []

    Args:
        primary_attribute: the attribute whose files define the samples.
        secondary_attributes: further parts of each sample.
    """

    def __init__(
        self,
        primary_attribute: ConfigAttribute,
        secondary_attributes: list[ConfigAttribute] | None = None,
    ) -> None:
        self.primary_attribute = primary_attribute
        self.secondary_attributes = secondary_attributes or []

    def write_shards(self, skip_missing: bool, **kwargs: Any) -> None:
        """Write all samples as tar shards `<pattern>-%0Nd.tar` (N = digits of `maxcount`).

        Args:
            skip_missing: leave out samples missing a part (else write what there is).
            **kwargs: `pattern`, `maxcount`, `maxsize`, `post` (see `Bucket.write_dataset`).
        """
        max_items = int(kwargs.get("maxcount", DEFAULT_DATASET_MAX_COUNT))
        kwargs["pattern"] = kwargs.get("pattern", "dataset") + f"-%0{len(str(max_items))}d{EXT_TAR}"
        writer = ShardWriter(**kwargs)
        for sample, missing in self.generate_dataset(max_items):
            if missing:
                what = ", ".join(missing)
                if skip_missing:
                    logger.warning("Missing attributes: %s - Skipping sample.", what)
                    continue
                logger.warning(
                    "Missing attributes: %s - Including sample despite missing attributes.", what
                )
            writer.write(sample)
        writer.close()

    def generate_dataset(self, max_shard_items: int) -> Iterator[tuple[dict[str, Any], list[str]]]:
        """Each sample (WebDataset dict with `__key__`) and the parts it misses."""
        primary = self.primary_attribute
        if not isinstance(primary, DataAttribute):
            raise TypeError(
                "the primary attribute must be a DataAttribute (its files define the samples)"
            )
        key_format = f"sample_%0{len(str(max_shard_items))}d"
        attributes = [primary, *self.secondary_attributes]
        for index, file in enumerate(sorted(Path(primary.path).glob(f"*.{primary.file_type}"))):
            item: dict[str, Any] = {}
            missing: list[str] = []
            for attr in attributes:
                key, data = attr.get_data_for_entry(file.stem)
                if not data:
                    missing.append(f"{file.stem} - {key}")
                else:
                    item[key] = data
            item["__key__"] = key_format % index
            yield item, missing
