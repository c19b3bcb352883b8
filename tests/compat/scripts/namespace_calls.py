"""The official SDK's namespaces against our server: a local namespace (`Namespace(name=...)`)
and an attached remote cluster's bucket (`Namespace(uuid=<alias>)`); run by
test_official_namespaces.py in the official SDK's venv.

argv: endpoint, tag (unique per run), alias of the attached remote, the name of a bucket of the
remote holding object "r.txt" = b"remote bytes".

Prints one JSON object mapping each check's name to "ok" or the error.
"""

import json
import sys
import traceback
from collections.abc import Callable

from aistore import Client
from aistore.sdk.errors import AISError
from aistore.sdk.namespace import Namespace

ENDPOINT, TAG, ALIAS, REMOTE_BUCKET = sys.argv[1:5]
results: dict[str, str] = {}


def check(fn: Callable[[], None]) -> Callable[[], None]:
    try:
        fn()
        results[fn.__name__] = "ok"
    except Exception:  # every failure is reported, none stops the run
        results[fn.__name__] = traceback.format_exc(limit=6)
    return fn


client = Client(ENDPOINT)
NS = Namespace(name=f"ns{TAG}")
NAME = f"b{TAG}"


@check
def local_namespace_is_its_own_bucket() -> None:
    local = client.bucket(NAME, namespace=NS).create()
    glob = client.bucket(NAME).create()
    local.object("o").get_writer().put_content(b"in the namespace")
    glob.object("o").get_writer().put_content(b"global")
    assert local.object("o").get_reader().read_all() == b"in the namespace"
    assert glob.object("o").get_reader().read_all() == b"global"
    assert [e.name for e in local.list_all_objects()] == ["o"]


@check
def list_buckets_shows_the_namespace() -> None:
    found = [b for b in client.cluster().list_buckets() if b.name == NAME]
    spaces = sorted((b.namespace.name if b.namespace else "") for b in found)
    assert spaces == ["", NS.name], spaces


@check
def destroy_namespaced_bucket() -> None:
    client.bucket(NAME, namespace=NS).delete()
    try:
        client.bucket(NAME, namespace=NS).head()
        raise AssertionError("still there")
    except AISError as e:  # (a HEAD's 404 carries no message to classify it by)
        assert e.status_code == 404, e
    assert client.bucket(NAME).object("o").get_reader().read_all() == b"global"
    client.bucket(NAME).delete()


@check
def remote_cluster_bucket_reads_through() -> None:
    bck = client.bucket(REMOTE_BUCKET, namespace=Namespace(uuid=ALIAS))
    assert [e.name for e in bck.list_all_objects()] == ["r.txt"]
    assert bck.object("r.txt").get_reader().read_all() == b"remote bytes"
    bck.object("w.txt").get_writer().put_content(b"written through")
    assert bck.object("w.txt").get_reader().read_all() == b"written through"


print(json.dumps(results))
