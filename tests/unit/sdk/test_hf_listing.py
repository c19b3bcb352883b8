"""Object names of a HuggingFace dataset's Parquet conversion (the CLI's, without its clashes)."""

from __future__ import annotations

import pytest

pytest.importorskip("huggingface_hub", reason="the hf extra (huggingface_hub) is not installed")

from aistore.sdk.hf_listing import parquet_names  # noqa: E402


def test_names_as_the_cli_gives_them() -> None:
    listing = {"default": {"train": ["u/t0"], "test": ["u/s0", "u/s1"]}}
    assert parquet_names(listing) == {
        "train/0.parquet": "u/t0",
        "default/test/0.parquet": "u/s0",
        "default/test/1.parquet": "u/s1",
    }


def test_two_configs_with_one_file_splits_do_not_overwrite_each_other() -> None:
    # The CLI would name both "train/0.parquet" and keep one of them.
    listing = {"en": {"train": ["u/en"]}, "fr": {"train": ["u/fr"]}}
    assert parquet_names(listing) == {"en/train/0.parquet": "u/en", "fr/train/0.parquet": "u/fr"}


def test_malformed_entries_are_skipped() -> None:
    assert parquet_names({"c": "x", "d": {"s": "not a list", "t": [1, "u/ok"]}}) == {
        "d/t/0.parquet": "u/ok"
    }
