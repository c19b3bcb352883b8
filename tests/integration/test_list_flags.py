"""List-objects flags as a real ais:// cluster answers them (rest-core.md §9, AIS xact/xs/lso.go):
NO_RECURSION lists one level, each virtual directory once as an entry named with its trailing
'/' and flag EntryIsDir (256); NO_DIRS leaves those out; NAME_ONLY gives names without sizes
whatever `props` asks for, NAME_SIZE names and sizes."""

from __future__ import annotations

import json

import pytest
import requests

from aistore.sdk import Bucket, ListObjectFlag
from aistore.server import LocalServer

NR = [ListObjectFlag.NO_RECURSION]
IS_DIR = 256
NAMES = ["a-b", "a.txt", "a/x", "a/y/z", "a/y/w", "a0", "b/c/d/e", "top"]


@pytest.fixture
def tree(bucket: Bucket) -> Bucket:
    for name in NAMES:
        bucket.object(name).get_writer().put_content(name.encode())
    return bucket


def _listed(entries: list) -> list[str]:
    return [f"[{e.name}]" if e.flags & IS_DIR else e.name for e in entries]


def test_no_recursion_lists_one_level(tree: Bucket) -> None:
    top = tree.list_all_objects(flags=NR)
    # '-' and '.' sort before '/', '0' after it
    assert _listed(top) == ["a-b", "a.txt", "[a/]", "a0", "[b/]", "top"]
    for e in top:
        if e.flags & IS_DIR:
            assert e.flags == IS_DIR and e.size == 0 and not e.is_cached()
        else:
            assert e.is_cached() and e.size == len(e.name)
    assert _listed(tree.list_all_objects(prefix="a/", flags=NR)) == ["a/x", "[a/y/]"]
    assert _listed(tree.list_all_objects(prefix="a/y/", flags=NR)) == ["a/y/w", "a/y/z"]
    assert _listed(tree.list_all_objects(prefix="b/c/", flags=NR)) == ["[b/c/d/]"]
    # without its '/', a prefix that names a directory is walked into, as AIS does
    assert _listed(tree.list_all_objects(prefix="a", flags=NR)) == [
        "a-b",
        "a.txt",
        "a/x",
        "[a/y/]",
        "a0",
    ]
    assert tree.list_all_objects(prefix="nothing/", flags=NR) == []
    # the default listing stays recursive, with no directory entries
    assert [e.name for e in tree.list_all_objects()] == sorted(NAMES)


def test_no_recursion_pages_through_directories(tree: Bucket) -> None:
    whole = _listed(tree.list_all_objects(flags=NR))
    for size in (1, 2, 4):
        assert _listed(tree.list_all_objects(flags=NR, page_size=size)) == whole, size
        assert _listed(list(tree.list_objects_iter(flags=NR, page_size=size))) == whole, size
    first = tree.list_objects(flags=NR, page_size=3)
    assert _listed(first.entries) == ["a-b", "a.txt", "[a/]"]
    assert first.continuation_token == "a/"  # a directory is a token like any name
    rest = tree.list_objects(flags=NR, page_size=10, continuation_token="a/", uuid=first.uuid)
    assert _listed(rest.entries) == ["a0", "[b/]", "top"] and rest.continuation_token == ""


def test_no_dirs(tree: Bucket) -> None:
    no_dirs = [*NR, ListObjectFlag.NO_DIRS]
    assert [e.name for e in tree.list_all_objects(flags=no_dirs)] == ["a-b", "a.txt", "a0", "top"]
    assert [e.name for e in tree.list_all_objects(prefix="a/", flags=no_dirs)] == ["a/x"]
    assert tree.list_all_objects(prefix="b/", flags=no_dirs) == []
    recursive = tree.list_all_objects(flags=[ListObjectFlag.NO_DIRS])
    assert [e.name for e in recursive] == sorted(NAMES)


def test_name_only_and_name_size(tree: Bucket) -> None:
    name_only = [ListObjectFlag.NAME_ONLY, ListObjectFlag.CACHED]
    for props in ("", "name", "name,size", "name,size,version,checksum"):
        entries = tree.list_all_objects(prefix="a/", props=props, flags=name_only)
        assert [e.name for e in entries] == ["a/x", "a/y/w", "a/y/z"], props
        for e in entries:
            assert (e.size, e.version, e.checksum, e.flags) == (0, "", "", 64), (props, e)
    sized = tree.list_all_objects(
        prefix="a/", props="name,size,version", flags=[ListObjectFlag.NAME_SIZE]
    )
    assert [(e.size, e.version) for e in sized] == [(3, ""), (5, ""), (5, "")]
    default = tree.list_all_objects(prefix="a/")  # props "" is name,size,cached
    assert [(e.size, e.version, e.is_cached()) for e in default] == [(3, "", True)] + [
        (5, "", True)
    ] * 2
    full = tree.list_all_objects(prefix="a/x", props="name,size,version")
    assert full[0].version and full[0].size == 3


def test_no_recursion_in_json(tree: Bucket, ais_server: LocalServer) -> None:
    """Clients that take JSON (the CLI) get the same entries."""
    endpoint = ais_server.endpoint
    body = {"action": "list", "value": {"prefix": "a/", "flags": str(1 << 11)}}
    resp = requests.get(
        f"{endpoint}/v1/buckets/{tree.name}",
        params={"provider": "ais"},
        data=json.dumps(body),
        timeout=10,
    )
    resp.raise_for_status()
    entries = resp.json()["entries"]
    assert entries[0]["name"] == "a/x" and entries[0]["flags"] & 64
    assert entries[1] == {"name": "a/y/", "flags": IS_DIR}
