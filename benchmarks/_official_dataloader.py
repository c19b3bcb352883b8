"""The official SDK's side of benchmarks/dataloader.py and benchmarks/parallel_dataloader.py;
runs in its torch venv (tests/compat/official_sdk.py, ``with_torch=True``).

argv: endpoint, the benchmarks directory (for _loader.py), a JSON job:
    {"mode": "epoch", "dataset": map|iter|batch|shard|parallel, "bucket", "workers",
     "batch_size", "limit"}  -> _loader.Epoch's fields
    {"mode": "batches", "bucket", "prefix", "batch_size", "num_batches", "parallel_workers",
     "runs": [["GET", label], ["Parallel", label]]}
        -> {"runs": {name: _loader.BatchRun's fields}, "lines": the per-batch lines}
The result is the JSON document on the last stdout line. Fails unless the `aistore` it imports is
the venv's own official one.
"""

import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import aistore
from aistore import Client
from aistore.pytorch import (
    AISIterDataset,
    AISMapDataset,
    AISParallelMapDataset,
    AISShardReader,
)
from aistore.pytorch.batch_iter_dataset import AISBatchIterDataset

endpoint, helper_dir, job = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if aistore.__version__ != "2.0.0" or not Path(aistore.__file__).is_relative_to(sys.prefix):
    raise SystemExit(f"not the official aistore 2.0.0 of this venv: {aistore.__file__}")
sys.path.insert(0, helper_dir)
import _loader  # noqa: E402


def make(kind: str, bucket_name: str) -> Callable[[], Any]:
    def build() -> Any:
        client = Client(endpoint)
        bucket = client.bucket(bucket_name)
        if kind == "map":
            return AISMapDataset(bucket)
        if kind == "iter":
            return AISIterDataset(bucket)
        if kind == "batch":
            return AISBatchIterDataset(bucket, client)
        if kind == "shard":
            return AISShardReader(bucket)
        if kind == "parallel":
            return AISParallelMapDataset(bucket)
        raise SystemExit(f"unknown dataset {kind!r}")

    return build


if job["mode"] == "epoch":
    epoch = _loader.time_epoch(
        make(job["dataset"], job["bucket"]), job["workers"], job["batch_size"], job["limit"]
    )
    print(json.dumps(asdict(epoch)))
else:
    runs: dict[str, Any] = {}
    lines: list[str] = []
    for name, label in job["runs"]:
        bucket = Client(endpoint).bucket(job["bucket"])
        prefix_map = {bucket: job["prefix"]} if job["prefix"] else {}
        dataset: Any
        if name == "GET":
            dataset = AISMapDataset(bucket, prefix_map=prefix_map)
        else:
            dataset = AISParallelMapDataset(
                bucket, prefix_map=prefix_map, num_workers=job["parallel_workers"]
            )
        run = _loader.time_batches(
            dataset, job["batch_size"], job["num_batches"], 0, label, lines.append
        )
        runs[name] = asdict(run)
    print(json.dumps({"runs": runs, "lines": lines}))
