"""The public surface of aistore.pytorch, and torch staying optional."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

import aistore.pytorch  # noqa: E402

_OFFICIAL = {
    "AISMapDataset",
    "AISParallelMapDataset",
    "AISMultiShardStream",
    "AISIterDataset",
    "AISShardReader",
    "AISBaseMapDataset",
    "AISBaseIterDataset",
    "DynamicBatchSampler",
}


# Ours, beyond the official exports: every dataset the package has.
_OURS = {"AISBatchIterDataset", "AISPlanDataset"}


def test_exports_are_the_official_names_and_every_dataset() -> None:
    exported = set(aistore.pytorch.__all__)
    assert exported == _OFFICIAL | _OURS
    for name in exported:
        assert getattr(aistore.pytorch, name).__doc__
    datasets = {
        name
        for name, value in vars(aistore.pytorch).items()
        if isinstance(value, type) and name.endswith("Dataset") and not name.startswith("_")
    }
    for module in Path(aistore.pytorch.__file__).parent.glob("*.py"):
        text = module.read_text()
        datasets |= {
            line.split()[1].split("(")[0]
            for line in text.splitlines()
            if line.startswith("class AIS") and "Dataset" in line.split()[1]
        }
    assert datasets <= exported


def test_without_torch_aistore_imports_and_pytorch_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import aistore\n"
        "try:\n"
        "    import aistore.pytorch\n"
        "except ImportError as e:\n"
        "    print('ERR', e)\n"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ERR") and "aistore-embedded[torch]" in out.stdout
