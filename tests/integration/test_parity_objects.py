"""Objects as the official SDK handles them, against the real server: the version a PUT
reports, promote from the server's promote directory (file and directory, as a job), a file
added to a shard (PUT ?archpath=, `ais archive put`), names that need URL encoding in every call,
and the 1.25-era aliases (Object.head_v2, dict-style access to head() results) as deprecated."""

from __future__ import annotations

import io
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from _parity import err

from aistore.sdk.archive_config import ArchiveConfig
from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.const import AIS_VERSION
from aistore.sdk.errors import AISError, ErrObjNotFound
from aistore.server import LocalServer

ODD_NAMES = [
    "sp ace.txt",
    "hash#frag",
    "q?x=1&y=2",
    "pct%41%2F",
    "plus+sign",
    "dir/ü/日本語.bin",
    "semi;colon,comma",
    "tilde~(paren)!$'*",
    "-dash",
    ".hidden",
]


def test_version_reported_after_put(bucket: Bucket, tmp_path: Path) -> None:
    obj = bucket.object("v")
    r1 = obj.get_writer().put_content(b"one")
    assert r1.headers[AIS_VERSION] == "1"
    r2 = obj.get_writer().put_content(b"two")
    assert r2.headers[AIS_VERSION] == "2"
    f = tmp_path / "f"
    f.write_bytes(b"three")
    r3 = obj.get_writer().put_file(f)
    assert r3.headers[AIS_VERSION] == "3"
    assert obj.head("version").obj_version == "3"
    assert obj.props.obj_version == "3"
    reader = obj.get_reader()
    assert reader.read_all() == b"three" and reader.attributes.obj_version == "3"
    assert r3.headers["ais-checksum-type"] == "xxhash2" and r3.headers["ais-checksum-value"]


@pytest.mark.parametrize("name", ODD_NAMES)
def test_names_needing_url_encoding(bucket: Bucket, client: Client, name: str) -> None:
    data = name.encode() * 3
    obj = bucket.object(name)
    obj.get_writer().put_content(data)
    assert obj.get_reader().read_all() == data
    assert obj.head().size == len(data)
    assert requests.get(obj.get_url(), timeout=10).content == data
    assert [e.name for e in bucket.list_all_objects(prefix=name)] == [name]
    dst = bucket.object(name + " copy")
    obj.copy(dst)
    assert dst.get_reader().read_all() == data
    obj.get_writer().set_custom_props({"k": "v"})
    assert obj.head("custom").custom_metadata == {"k": "v"}
    if "#" not in name and "?" not in name:  # a URL's fragment and query are not the name
        assert client.get_object_from_url(f"ais://{bucket.name}/{name}").name == name
    job_id = bucket.objects(obj_names=[name]).archive("arch.tar")[0]
    assert client.job(job_id).wait(timeout=60).success
    with tarfile.open(fileobj=io.BytesIO(bucket.object("arch.tar").get_reader().read_all())) as tar:
        assert tar.getnames() == [name]
    job_id = bucket.objects(obj_names=[name, name + " copy"]).delete()
    assert client.job(job_id).wait(timeout=60).success
    with pytest.raises(ErrObjNotFound):
        obj.get_reader().read_all()


def test_deprecated_head_v2_and_dict_access(bucket: Bucket) -> None:
    obj = bucket.object("old-api")
    obj.get_writer().put_content(b"12345")
    with pytest.warns(DeprecationWarning, match="head_v2"):
        attrs = obj.head_v2("version,checksum")
    assert attrs.obj_version == "1" and attrs.size == 5
    props = obj.head("version,checksum,custom")
    with pytest.warns(DeprecationWarning, match="dict-style"):
        assert props[AIS_VERSION] == "1"
    with pytest.warns(DeprecationWarning):
        assert props["Content-Length"] == "5"
    with pytest.warns(DeprecationWarning):
        assert props.get("ais-present") == "true"
    with pytest.warns(DeprecationWarning):
        assert "ais-checksum-value" in props
    with pytest.warns(DeprecationWarning):
        assert "ais-version" in {k.lower() for k in props.keys()}  # noqa: SIM118
    with pytest.warns(DeprecationWarning):
        assert {k.lower(): v for k, v in props.items()}["ais-checksum-type"] == "xxhash2"
    with pytest.warns(DeprecationWarning):
        assert "ais-present" in [k.lower() for k in props]


@pytest.fixture(scope="module")
def promote_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalServer, Path]]:
    root = tmp_path_factory.mktemp("promote-root")
    data = tmp_path_factory.mktemp("promote-data")
    srv = LocalServer(mountpaths=[data / "mp0", data / "mp1"], promote_root=root).start()
    yield srv, root
    srv.stop()


@pytest.fixture
def promote_env(promote_server: tuple[LocalServer, Path]) -> Iterator[tuple[Client, Bucket, Path]]:
    srv, root = promote_server
    client = srv.client()
    bck = client.bucket(f"prom-{uuid.uuid4().hex[:8]}").create()
    src = root / uuid.uuid4().hex[:8]
    (src / "sub" / "deeper").mkdir(parents=True)
    (src / "a.txt").write_bytes(b"A")
    (src / "b c.txt").write_bytes(b"BC")
    (src / "sub" / "s.txt").write_bytes(b"S")
    (src / "sub" / "deeper" / "d.txt").write_bytes(b"D")
    yield client, bck, src
    bck.delete(missing_ok=True)


def test_promote_file(promote_env: tuple[Client, Bucket, Path]) -> None:
    client, bck, src = promote_env
    assert bck.object("file/a").promote(str(src / "a.txt")) == ""  # done before the reply
    assert bck.object("file/a").get_reader().read_all() == b"A"
    assert bck.object("dir/").promote(str(src / "b c.txt")) == ""  # "dir/" + file name
    assert bck.object("dir/b c.txt").get_reader().read_all() == b"BC"
    (src / "a.txt").write_bytes(b"A2")
    bck.object("file/a").promote(str(src / "a.txt"))  # exists, no overwrite: kept
    assert bck.object("file/a").get_reader().read_all() == b"A"
    bck.object("file/a").promote(str(src / "a.txt"), overwrite_dest=True, delete_source=True)
    assert bck.object("file/a").get_reader().read_all() == b"A2"
    assert not (src / "a.txt").exists()


def test_promote_directory_is_a_job(promote_env: tuple[Client, Bucket, Path]) -> None:
    client, bck, src = promote_env
    job_id = bck.object("flat").promote(str(src))
    assert job_id
    assert client.job(job_id).wait(timeout=60).success
    assert sorted(e.name for e in bck.list_all_objects(prefix="flat/")) == [
        "flat/a.txt",
        "flat/b c.txt",
    ]
    job_id = bck.object("tree").promote(str(src), recursive=True)
    result = client.job(job_id).wait(timeout=60)
    assert result.success
    snap = client.job(job_id).get_details().list_snapshots()[0]
    assert snap.kind == "promote" and snap.stats is not None and snap.stats.objects == 4
    got = sorted(e.name for e in bck.list_all_objects(prefix="tree/"))
    assert got == ["tree/a.txt", "tree/b c.txt", "tree/sub/deeper/d.txt", "tree/sub/s.txt"]
    assert bck.object("tree/sub/deeper/d.txt").get_reader().read_all() == b"D"


def test_promote_bad_sources(promote_env: tuple[Client, Bucket, Path], tmp_path: Path) -> None:
    client, bck, src = promote_env
    outside = tmp_path / "secret"
    outside.write_bytes(b"no")
    cases = [
        (str(outside), 400, "must be under"),
        ("relative/path", 400, "must be an absolute path"),
        (str(src / ".." / "x"), 400, "'.' or '..'"),
        (str(src / "missing.txt"), 404, "does not exist"),
    ]
    for path, status, needle in cases:
        with pytest.raises(AISError) as e:
            bck.object("x").promote(path)
        assert e.value.status_code == status and needle in e.value.message, (path, e.value.message)
    r = requests.post(
        f"{client.cluster().get_primary_url()}/v1/objects/{bck.name}",
        json={"action": "promote", "name": "", "value": None},
        params={"provider": "ais"},
        timeout=10,
    )
    assert "pathname is empty" in err(r, 400)


def test_promote_is_off_without_a_root(
    ais_server: LocalServer, bucket: Bucket, tmp_path: Path
) -> None:
    """The session server names no promote root: promote reads nothing until the operator
    names one (--promote-root)."""
    f = tmp_path / "f"
    f.write_bytes(b"x")
    with pytest.raises(AISError) as e:
        bucket.object("x").promote(str(f))
    assert e.value.status_code == 400 and "disabled" in e.value.message


def test_blob_download_needs_a_remote_bucket(bucket: Bucket) -> None:
    bucket.object("b").get_writer().put_content(b"x")
    with pytest.raises(AISError) as e:
        bucket.object("b").blob_download()
    assert (
        e.value.status_code == 400
        and "blob-download: expecting remote bucket (have ais://" in e.value.message
    )


def _shard_put(
    bucket: Bucket, shard: str, member: str, data: bytes, pine: str | None, **params: str
) -> requests.Response:
    """What `ais archive put` sends: PUT the file with archpath (and Ais-Pine for an append)."""
    url = f"{bucket.client.base_url}/objects/{bucket.name}/{shard}"
    headers = {} if pine is None else {"Ais-Pine": pine}
    return requests.put(
        url, params={"archpath": member, "provider": "ais", **params}, data=data, headers=headers,
        timeout=30,
    )  # fmt: skip


def _members(bucket: Bucket, shard: str) -> dict[str, bytes]:
    data = bucket.object(shard).get_reader().read_all()
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]


def test_put_a_file_into_a_shard(bucket: Bucket) -> None:
    assert _shard_put(bucket, "s.tar", "a.txt", b"alpha", None).status_code == 200
    assert _members(bucket, "s.tar") == {"a.txt": b"alpha"}
    assert _shard_put(bucket, "s.tar", "dir/b.txt", b"beta", "1").status_code == 200  # append
    assert _members(bucket, "s.tar") == {"a.txt": b"alpha", "dir/b.txt": b"beta"}
    assert bucket.object("s.tar").get_reader(
        archive_config=ArchiveConfig(archpath="dir/b.txt")
    ).read_all() == b"beta"  # fmt: skip
    # Append-or-put makes a missing shard, and appends to one that exists.
    assert _shard_put(bucket, "n.tar", "c.txt", b"c", "2").status_code == 200
    assert _shard_put(bucket, "n.tar", "d.txt", b"d", "2").status_code == 200
    assert _members(bucket, "n.tar") == {"c.txt": b"c", "d.txt": b"d"}
    # Without a flag, a new shard of that one file replaces the old.
    assert _shard_put(bucket, "n.tar", "e.txt", b"e", "0").status_code == 200
    assert _members(bucket, "n.tar") == {"e.txt": b"e"}
    # The format from archmime when the name does not say it.
    assert _shard_put(bucket, "plain", "z", b"zip me", None, archmime=".zip").status_code == 200
    assert bucket.object("plain").get_reader(
        archive_config=ArchiveConfig(archpath="z")
    ).read_all() == b"zip me"  # fmt: skip


def test_put_into_a_shard_bad_input(bucket: Bucket) -> None:
    assert "does not exist" in err(_shard_put(bucket, "none.tar", "a", b"x", "1"), 404)
    assert "Content-Length is required" in err(_shard_put(bucket, "e.tar", "a", b"", None), 400)
    assert "invalid Ais-Pine" in err(_shard_put(bucket, "e.tar", "a", b"x", "9"), 400)
    assert "cannot tell the archive format" in err(
        _shard_put(bucket, "e.bin", "a", b"x", None), 400
    )
    with pytest.raises(AISError) as e:  # (HEAD: its 404 has no body to classify the error by)
        bucket.object("e.tar").head()
    assert e.value.status_code == 404
