"""aistore.pytorch.utils: the official helpers and their documented edge cases."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from aistore.pytorch import utils  # noqa: E402


def test_megabytes_are_decimal() -> None:
    assert utils.MB_TO_B == 1000000
    assert utils.convert_mb_to_bytes(1.5) == 1500000
    assert utils.convert_mb_to_bytes(0.0000019) == 1  # floor
    assert isinstance(utils.convert_mb_to_bytes(2), int)
    assert utils.convert_bytes_to_mb(2500000) == 2.5


def test_urls() -> None:
    assert utils.unparse_url("ais", "b", "dir/o.txt") == "ais://b/dir/o.txt"
    assert utils.unparse_url("gcp", "b", "") == "gcp://b"
    assert utils.parse_url("ais://b/dir/o.txt") == ("ais", "b", "dir/o.txt")
    assert utils.parse_url("s3://b") == ("s3", "b", "")


@pytest.mark.parametrize(
    ("name", "base", "ext"),
    [
        ("a/b.c.d", "b", "d"),
        ("sample.jpg", "sample", "jpg"),
        ("dir.x/noext", "noext", ""),
        (".hidden", "", "hidden"),
        ("x.tar.gz", "x", "gz"),
        ("", "", ""),
    ],
)
def test_basename_and_extension(name: str, base: str, ext: str) -> None:
    assert utils.get_basename(name) == base
    assert utils.get_extension(name) == ext


def test_all_is_the_official_set() -> None:
    assert set(utils.__all__) == {
        "MB_TO_B",
        "convert_mb_to_bytes",
        "convert_bytes_to_mb",
        "unparse_url",
        "get_basename",
        "get_extension",
        "parse_url",
    }
