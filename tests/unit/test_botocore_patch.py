"""The botocore patch follows AIS redirects and leaves other replies to botocore."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import pytest

botocore_utils = pytest.importorskip("botocore.utils")

import aistore.botocore_patch.botocore  # noqa: E402,F401 - importing applies the patch


@dataclass
class _Http:
    status_code: int
    headers: dict[str, str] = field(default_factory=dict)


class _Client:
    """Stands for the botocore client the redirector holds a weak reference to."""


def _request() -> dict[str, Any]:
    return {"url": "http://proxy/b/o", "context": {"s3_redirect": {}}}


def test_redirects_are_followed_three_times() -> None:
    redirector = botocore_utils.S3RegionRedirectorv2(None, _Client())
    req = _request()
    reply = (_Http(307, {"Location": "http://target/b/o"}), {})
    for n in range(1, 5):
        assert redirector.redirect_from_error(req, reply, None) == 0
        assert req["url"] == "http://target/b/o"
        assert req["context"]["s3_redirect"]["ais_redirect_count"] == n
    # Past the limit the reply is botocore's own business (it fails on our bare request).
    with contextlib.suppress(Exception):
        redirector.redirect_from_error(req, reply, None)
    assert req["context"]["s3_redirect"]["ais_redirect_count"] == 4


def test_other_replies_go_to_botocore() -> None:
    redirector = botocore_utils.S3RegionRedirectorv2(None, _Client())
    req = _request()
    assert redirector.redirect_from_error(req, None, None) is None
    assert redirector.redirect_from_error(req, (_Http(200), {}), None) is None
    assert req["url"] == "http://proxy/b/o"


def test_patching_twice_wraps_once() -> None:
    before = botocore_utils.S3RegionRedirectorv2.redirect_from_error
    import importlib

    importlib.reload(aistore.botocore_patch.botocore)
    assert botocore_utils.S3RegionRedirectorv2.redirect_from_error is before
