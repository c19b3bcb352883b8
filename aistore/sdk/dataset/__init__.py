"""Describe a local dataset (`DatasetConfig`) and write it into a bucket as WebDataset shards
(`Bucket.write_dataset`).

Example:
    >>> from aistore.sdk.dataset.dataset_config import DatasetConfig  # doctest: +SKIP
"""

__all__: list[str] = []
