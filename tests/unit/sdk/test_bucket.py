"""Bucket requests on the wire: create/delete/head, listing pages, cluster calls."""

from __future__ import annotations

import json

import msgspec
import pytest
from _fakes import FakeServer, Reply, Req

from aistore import Client
from aistore.sdk import ListObjectFlag, Namespace
from aistore.sdk.errors import InvalidBckProvider


def _page(names: list[str], token: str, uuid: str = "lso-1") -> Reply:
    doc = {
        "UUID": uuid,
        "ContinuationToken": token,
        "Flags": 0,
        "Entries": [{"n": n, "s": len(n), "f": 64} for n in names],
    }
    return Reply(200, msgspec.msgpack.encode(doc), {"Content-Type": "application/msgpack"})


def test_create_delete_head_wire(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, b"", {"Ais-Bucket-Props": '{"provider":"ais"}'})
    bucket = client.bucket("b1")
    bucket.create()
    bucket.delete()
    headers = bucket.head()
    create, delete, head = server.requests
    assert (create.method, create.path, create.query) == (
        "POST",
        "/v1/buckets/b1",
        {"provider": "ais"},
    )
    assert json.loads(create.body) == {"action": "create-bck", "name": "", "value": None}
    assert delete.method == "DELETE" and json.loads(delete.body)["action"] == "destroy-bck"
    assert head.method == "HEAD"
    assert headers["ais-bucket-props"] == '{"provider":"ais"}'


def test_remote_bucket_cannot_be_created(client: Client) -> None:
    with pytest.raises(InvalidBckProvider):
        client.bucket("b", provider="aws").create()
    with pytest.raises(InvalidBckProvider):
        client.bucket("b", provider="gs").delete()
    with pytest.raises(NotImplementedError):
        client.bucket("b", provider="aws").list_objects(start_after="x")


def test_list_objects_request_and_entries(server: FakeServer, client: Client) -> None:
    server.route = lambda req: _page(["a", "b"], "")
    ns = Namespace(uuid="", name="team")
    page = client.bucket("b1", namespace=ns).list_objects(
        prefix="p/",
        props="name,size",
        page_size=2,
        flags=[ListObjectFlag.NAME_SIZE],
        inventory_name="inv1",
        start_after="p/0",
    )
    (req,) = server.requests
    assert req.method == "GET" and req.path == "/v1/buckets/b1"
    assert req.query == {"provider": "ais", "namespace": "@#team"}
    assert req.headers["Accept"] == "application/msgpack"
    assert req.headers["Ais-Inv-Name"] == "inv1"
    body = json.loads(req.body)
    assert body["action"] == "list" and body["name"] == ""
    assert body["value"] == {
        "prefix": "p/",
        "pagesize": 2,
        "uuid": "",
        "props": "name,size",
        "continuation_token": "",
        "flags": str((1 << 5) | (1 << 15)),
        "target": "",
        "start_after": "p/0",
    }
    assert [e.name for e in page.entries] == ["a", "b"]
    assert page.entries[0].object.name == "a"
    assert page.entries[0].object.bucket_name == "b1"


def test_list_archive_lists_by_the_archive_name(server: FakeServer, client: Client) -> None:
    """A cluster lists an archive's files only together with the archive: the prefix is the
    archive's name (as the official SDK sends it), never `<name>/`, which lists nothing."""
    names = ["s.tar", "s.tar-1", "s.tar/a", "s.tar/b"]
    server.route = lambda req: _page(names, "")
    bucket = client.bucket("b1")
    assert [e.name for e in bucket.list_archive("s.tar")] == ["s.tar/a", "s.tar/b"]
    with_self = bucket.list_archive("s.tar", include_archive_obj=True, page_size=7)
    assert [e.name for e in with_self] == ["s.tar", "s.tar/a", "s.tar/b"]
    for req in server.requests:
        value = json.loads(req.body)["value"]
        assert value["prefix"] == "s.tar"
        assert value["flags"] == str(1 << ListObjectFlag.ARCH_DIR.value)
    assert json.loads(server.requests[-1].body)["value"]["pagesize"] == 7


def _paged_route(names: list[str], page_size: int) -> tuple[list[Req], object]:
    seen: list[Req] = []

    def route(req: Req) -> Reply:
        seen.append(req)
        value = json.loads(req.body)["value"]
        token = value["continuation_token"]
        start = names.index(token) + 1 if token else 0
        chunk = names[start : start + page_size]
        full = len(chunk) == page_size
        return _page(chunk, chunk[-1] if full else "", uuid="u1")

    return seen, route


def test_iter_and_list_all_follow_tokens(server: FakeServer, client: Client) -> None:
    names = [f"obj-{i:03d}" for i in range(7)]
    seen, route = _paged_route(names, 3)
    server.route = route  # type: ignore[assignment]
    bucket = client.bucket("b")
    assert [e.name for e in bucket.list_objects_iter(page_size=3, start_after="x")] == names
    values = [json.loads(r.body)["value"] for r in seen]
    assert [v["continuation_token"] for v in values] == ["", "obj-002", "obj-005"]
    assert [v["uuid"] for v in values] == ["", "u1", "u1"]
    assert "start_after" in values[0] and "start_after" not in values[1]
    seen.clear()
    assert [e.name for e in bucket.list_all_objects(page_size=3)] == names
    assert len(seen) == 3


def test_exactly_full_last_page_ends_with_empty_page(server: FakeServer, client: Client) -> None:
    names = [f"n{i}" for i in range(4)]
    seen, route = _paged_route(names, 2)
    server.route = route  # type: ignore[assignment]
    assert [e.name for e in client.bucket("b").list_all_objects(page_size=2)] == names
    assert len(seen) == 3


def test_list_all_objects_iter_prefills_props(server: FakeServer, client: Client) -> None:
    server.route = lambda req: _page(["abc"], "")
    (obj,) = list(client.bucket("b").list_all_objects_iter(prefix="a"))
    assert obj.name == "abc"
    assert obj.props_cached is not None and obj.props_cached.size == 3
    assert json.loads(server.requests[0].body)["value"]["props"] == "name,size"


def test_bucket_paths_and_model(client: Client) -> None:
    bucket = client.bucket("b", namespace=Namespace(uuid="u", name="n"))
    assert bucket.get_path() == "ais/@u#n/b/"
    model = bucket.as_model()
    assert (model.name, model.provider, model.namespace) == (
        "b",
        "ais",
        Namespace(uuid="u", name="n"),
    )
    assert client.bucket("b").get_path() == "ais/@#/b/"


def test_make_request_and_list_urls(server: FakeServer, client: Client) -> None:
    server.route = lambda req: _page(["x/1"], "") if req.method == "GET" else Reply(200, b"job-1")
    bucket = client.bucket("b")
    resp = bucket.make_request(
        "POST", "copy-bck", value={"prefix": ""}, params={"provider": "ais", "bck_to": "ais/@#/c/"}
    )
    assert resp.text == "job-1"
    req = server.requests[0]
    assert req.query == {"provider": "ais", "bck_to": "ais/@#/c/"}
    assert json.loads(req.body) == {"action": "copy-bck", "name": "", "value": {"prefix": ""}}
    assert list(bucket.list_urls()) == [f"{server.url}/v1/objects/b/x/1?provider=ais"]


def test_cluster_calls(server: FakeServer, client: Client) -> None:
    smap = {
        "tmap": {
            "t1": {
                "daemon_id": "t1",
                "daemon_type": "target",
                "public_net": {"direct_url": server.url},
            }
        },
        "pmap": {},
        "proxy_si": {
            "daemon_id": "p1",
            "daemon_type": "proxy",
            "public_net": {"direct_url": server.url},
        },
        "uuid": "cluster-uuid",
        "version": "5",
    }

    def route(req: Req) -> Reply:
        if req.path == "/v1/daemon":
            return Reply(200, json.dumps(smap).encode(), {"Content-Type": "application/json"})
        if req.path == "/v1/health":
            return Reply(200 if req.query.get("prr") == "true" else 500)
        if req.path == "/v1/buckets":
            return Reply(200, b'[{"name":"b","provider":"ais","namespace":{"uuid":"","name":""}}]')
        return Reply(404)

    server.route = route
    cluster = client.cluster()
    assert cluster.get_info().version == 5
    assert cluster.get_uuid() == "cluster-uuid"
    assert cluster.get_primary_url() == server.url
    assert cluster.is_ready() is True
    assert [b.name for b in cluster.list_buckets()] == ["b"]
    listing = [r for r in server.requests if r.path == "/v1/buckets"][0]
    assert listing.query == {"provider": "ais"}
    assert json.loads(listing.body) == {"action": "list", "name": "", "value": None}
    cluster.list_buckets(provider="")
    assert server.requests[-1].query == {"provider": ""}


def test_is_ready_false_on_any_failure(client: Client) -> None:
    dead = Client("http://127.0.0.1:1", timeout=(0.2, 0.2), retry_config=client.retry_config)
    manager = dead._request_client._retry_manager
    manager._retrying = manager._retrying.copy(stop=lambda s: True)
    assert dead.cluster().is_ready() is False
