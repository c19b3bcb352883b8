"""PyTorch datasets over AIS objects (needs the `torch` extra: `pip install "aistore[torch]"`).

Example:
    >>> from aistore.pytorch import AISIterDataset  # doctest: +SKIP
    >>> loader = DataLoader(AISIterDataset(client.bucket("imgs")), num_workers=4)  # doctest: +SKIP
"""

try:
    import torch  # noqa: F401
except ImportError as err:  # pragma: no cover - exercised in a subprocess without torch
    raise ImportError(
        "aistore.pytorch needs PyTorch, which is not installed; "
        'install the extra with: pip install "aistore[torch]"'
    ) from err

from aistore.pytorch.base_iter_dataset import AISBaseIterDataset
from aistore.pytorch.base_map_dataset import AISBaseMapDataset
from aistore.pytorch.dynamic_sampler import DynamicBatchSampler
from aistore.pytorch.iter_dataset import AISIterDataset
from aistore.pytorch.map_dataset import AISMapDataset
from aistore.pytorch.multishard_dataset import AISMultiShardStream
from aistore.pytorch.parallel_map_dataset import AISParallelMapDataset
from aistore.pytorch.shard_reader import AISShardReader

__all__ = [
    "AISBaseIterDataset",
    "AISBaseMapDataset",
    "AISIterDataset",
    "AISMapDataset",
    "AISMultiShardStream",
    "AISParallelMapDataset",
    "AISShardReader",
    "DynamicBatchSampler",
]
