"""The OpenAPI document (docs/openapi.yaml): valid OpenAPI 3 (openapi-spec-validator), the same
text the binary prints and serves, and true to the server: every documented operation answers,
and no method the document leaves out of a documented path does."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from openapi_spec_validator import validate

from aistore.server import LocalServer, find_server_binary

DOC = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"
METHODS = ("get", "head", "put", "post", "delete", "patch")


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    with LocalServer(num_mountpaths=1) as srv:
        yield srv


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    spec = yaml.safe_load(DOC.read_text())
    assert isinstance(spec, dict)
    return spec


def test_committed_document_is_what_the_binary_prints() -> None:
    printed = subprocess.run(
        [str(find_server_binary()), "--print-openapi"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    assert printed == DOC.read_text(), (
        "docs/openapi.yaml is stale: regenerate it with "
        "`aistore-server --print-openapi > docs/openapi.yaml`"
    )


def test_served_document_is_the_committed_one(server: LocalServer) -> None:
    r = requests.get(server.endpoint + "/openapi.yaml", timeout=10)
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "application/yaml"
    assert r.text == DOC.read_text()


def test_document_is_valid_openapi_3(doc: dict[str, Any]) -> None:
    validate(doc)  # raises on the first error
    assert doc["openapi"] == "3.0.3"

    # The printer quotes what YAML would otherwise retype: every key is still a string (a bare
    # 200 would be an int, a bare `on` a bool), and so is every path's response code.
    def keys(node: Any) -> Iterator[Any]:
        if isinstance(node, dict):
            for k, v in node.items():
                yield k
                yield from keys(v)
        elif isinstance(node, list):
            for v in node:
                yield from keys(v)

    assert all(isinstance(k, str) for k in keys(doc))
    codes = {c for item in doc["paths"].values() for op in item.values() for c in op["responses"]}
    assert {"200", "default"} <= codes


def test_document_covers_every_area(doc: dict[str, Any]) -> None:
    paths = doc["paths"]
    for prefix in (
        "/metrics",
        "/v1/health",
        "/v1/tokens",
        "/v1/daemon",
        "/v1/reverse/daemon",
        "/v1/cluster",
        "/v1/buckets",
        "/v1/objects",
        "/v1/ml/moss",
        "/v1/download",
        "/v1/sort",
        "/s3",
    ):
        assert any(p == prefix or p.startswith(prefix + "/") for p in paths), prefix
    obj = paths["/v1/objects/{bucket}/{object}"]
    assert set(obj) == {"get", "head", "put", "post", "delete", "patch"}
    assert obj["get"]["x-ais-access"] == {"open": False, "bits": "GET", "scope": "bucket"}
    actions = {a["action"] for a in paths["/v1/buckets/{bucket}"]["post"]["x-ais-actions"]}
    assert {"create-bck", "copy-bck", "prefetch-listrange", "create-inventory"} <= actions
    err = paths["/s3/{bucket}/{key}"]["get"]["responses"]["default"]["content"]["application/xml"][
        "schema"
    ]
    assert err == {"$ref": "#/components/schemas/S3Error"}


class Probe:
    """Requests one (method, path template) on a fresh bucket holding object "o/x"."""

    def __init__(self, server: LocalServer) -> None:
        self.server = server
        smap = requests.get(server.endpoint + "/v1/daemon?what=smap", timeout=10).json()
        self.node_id = next(iter(smap["tmap"]))

    def __call__(self, method: str, template: str) -> requests.Response:
        bucket = f"probe-{uuid.uuid4().hex[:12]}"
        base = self.server.endpoint
        requests.post(
            f"{base}/v1/buckets/{bucket}", json={"action": "create-bck"}, timeout=10
        ).raise_for_status()
        requests.put(f"{base}/v1/objects/{bucket}/o/x", data=b"data", timeout=10).raise_for_status()
        path = (
            template.replace("{bucket}", bucket).replace("{object}", "o/x").replace("{key}", "o/x")
        )
        path = path.replace("{prefix}", "o").replace("{sub}", f"logs/{self.node_id}")
        headers = {"Ais-Node-Id": self.node_id} if path.startswith("/v1/reverse") else {}
        return requests.request(method.upper(), base + path, headers=headers, timeout=30)


# What the server says of a path it has no route for (AIS's wording): its shape is wrong, or
# the object part of /v1/objects/<bucket>/<object> is missing.
NO_ROUTE = ("invalid URL path", "object name is empty")


def not_served(r: requests.Response) -> bool:
    """A reply that says the route does not exist: 405, or 404/400 naming the path as wrong."""
    if r.status_code == 405:
        return True
    text = r.text if r.request.method != "HEAD" else r.headers.get("Hdr-Error", "")
    return r.status_code in (400, 404) and any(m in text for m in NO_ROUTE)


def test_every_documented_operation_answers(server: LocalServer, doc: dict[str, Any]) -> None:
    probe = Probe(server)
    unanswered = []
    for template, item in doc["paths"].items():
        for method in item:
            r = probe(method, template)
            if not_served(r) or r.status_code >= 500 and r.status_code != 501:
                unanswered.append(f"{method.upper()} {template}: {r.status_code} {r.text[:120]}")
    assert not unanswered, unanswered


def test_no_undocumented_method_answers_on_a_documented_path(
    server: LocalServer, doc: dict[str, Any]
) -> None:
    probe = Probe(server)
    answered = []
    for template, item in doc["paths"].items():
        for method in METHODS:
            if method in item or (method == "head" and template == "/openapi.yaml"):
                continue
            if method == "head" and template == "/metrics":
                continue  # HEAD of a GET-only text document: its headers (as HTTP allows)
            r = probe(method, template)
            if not not_served(r):
                answered.append(f"{method.upper()} {template}: {r.status_code} {r.text[:120]}")
    assert not answered, answered


def test_unknown_paths_are_not_served(server: LocalServer) -> None:
    for path in ("/v1/nosuch", "/v1", "/v2/objects/b/o", "/nosuch"):
        r = requests.get(server.endpoint + path, timeout=10)
        assert r.status_code == 404, (path, r.status_code, r.text)
