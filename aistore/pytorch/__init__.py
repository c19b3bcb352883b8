"""PyTorch datasets over AIS objects (needs the `torch` extra).

Example:
    >>> from aistore.pytorch import AISIterDataset  # doctest: +SKIP
    >>> loader = DataLoader(AISIterDataset(client.bucket("imgs")), num_workers=4)  # doctest: +SKIP
"""

from aistore._internal.extras import require_extra

require_extra("torch", "torch", "numpy", what="aistore.pytorch")

from aistore.pytorch.base_iter_dataset import AISBaseIterDataset  # noqa: E402
from aistore.pytorch.base_map_dataset import AISBaseMapDataset  # noqa: E402
from aistore.pytorch.batch_iter_dataset import AISBatchIterDataset  # noqa: E402
from aistore.pytorch.dynamic_sampler import DynamicBatchSampler  # noqa: E402
from aistore.pytorch.iter_dataset import AISIterDataset  # noqa: E402
from aistore.pytorch.map_dataset import AISMapDataset  # noqa: E402
from aistore.pytorch.multishard_dataset import AISMultiShardStream  # noqa: E402
from aistore.pytorch.parallel_map_dataset import AISParallelMapDataset  # noqa: E402
from aistore.pytorch.plan_dataset import AISPlanDataset  # noqa: E402
from aistore.pytorch.shard_reader import AISShardReader  # noqa: E402

# The official SDK's names, and ours beyond them: AISBatchIterDataset (its module exists in the
# official SDK, unexported there) and AISPlanDataset (exact, elastic resume: docs/pytorch.md).
__all__ = [
    "AISBaseIterDataset",
    "AISBaseMapDataset",
    "AISBatchIterDataset",
    "AISIterDataset",
    "AISMapDataset",
    "AISMultiShardStream",
    "AISParallelMapDataset",
    "AISPlanDataset",
    "AISShardReader",
    "DynamicBatchSampler",
]
