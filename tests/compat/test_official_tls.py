"""The official SDK over HTTPS with mutual TLS against our server: its two-leg requests with a
body (head, 307, body), its TLS environment variables (AIS_CLIENT_CA, AIS_CRT, AIS_CRT_KEY)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import official_sdk
import pytest

from aistore.server import LocalServer

SCRIPT = """
import json, sys
from aistore.sdk import Client

client = Client(sys.argv[1])  # CA and client certificate from the environment
bucket = client.bucket("official-tls").create(exist_ok=True)
small, large = b"s" * 1000, bytes(range(256)) * 4096
bucket.object("small").get_writer().put_content(small)
bucket.object("large").get_writer().put_content(large)
print(json.dumps({
    "ready": client.cluster().is_ready(),
    "small": bucket.object("small").get_reader().read_all() == small,
    "large": bucket.object("large").get_reader().read_all() == large,
    "names": sorted(e.name for e in bucket.list_all_objects()),
}))
"""


@pytest.fixture(scope="module")
def mtls_server() -> Iterator[LocalServer]:
    with LocalServer(num_mountpaths=1, threads=2, mtls=True) as srv:
        yield srv


def test_official_sdk_over_mutual_tls(mtls_server: LocalServer, official_python: Path) -> None:
    assert mtls_server.ca_cert is not None and mtls_server.client_cert is not None
    cert, key = mtls_server.client_cert
    env = {"AIS_CLIENT_CA": mtls_server.ca_cert, "AIS_CRT": cert, "AIS_CRT_KEY": key}
    # The official SDK leaves `verify` to its session, and `requests` lets these variables
    # override a session's CA (ours passes it per request): where they are set, they must
    # name the CA too.
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        env[name] = mtls_server.ca_cert
    got = official_sdk.run_script(SCRIPT, mtls_server.endpoint, env=env, timeout=120)
    assert got == {"ready": True, "small": True, "large": True, "names": ["large", "small"]}
