"""Bucket management as the official SDK does it, against the real server: properties
(set-bprops/reset-bprops, HEAD incl. chunk settings), info()/summary() with prefix and presence
filters, rename and copy as jobs (dry run, prefix, prepend, ext), put_files, write_dataset and
start_after listings. Bad input is a 4xx AIS error document."""

from __future__ import annotations

import io
import json
import os
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from _parity import act, err, put_many

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.dataset.data_attribute import DataAttribute
from aistore.sdk.dataset.dataset_config import DatasetConfig
from aistore.sdk.dataset.label_attribute import LabelAttribute
from aistore.sdk.enums import FLTPresence
from aistore.sdk.errors import AISError, ErrBckNotFound
from aistore.server import LocalServer


def new_name(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def filled(client: Client, ais_server: LocalServer) -> Iterator[Bucket]:
    """A bucket with a/0..a/4 (sizes 1..5), b/0..b/2 (sizes 10..12) and top (size 100)."""
    bck = client.bucket(new_name("filled")).create()
    sizes = {f"a/{i}": i + 1 for i in range(5)} | {f"b/{i}": 10 + i for i in range(3)}
    sizes["top"] = 100
    put_many(ais_server.endpoint, bck.name, sizes, lambda n: b"x" * sizes[n])
    yield bck
    bck.delete(missing_ok=True)


def props_of(bck: Bucket) -> dict[str, object]:
    doc: dict[str, object] = json.loads(bck.head()["Ais-Bucket-Props"])
    return doc


def test_props_set_reset_and_head(bucket: Bucket, ais_server: LocalServer) -> None:
    props = props_of(bucket)
    assert props["chunks"] == {
        "objsize_limit": "0B",
        "max_monolithic_size": "1TiB",
        "chunk_size": "1GiB",
        "checkpoint_every": 0,
        "flags": 0,
    }
    assert props["checksum"]["type"] == "xxhash2"  # type: ignore[index]
    value = {
        "chunks": {"objsize_limit": "64MiB", "chunk_size": "16MiB"},
        "checksum": {"type": "md5"},
    }
    r = act(ais_server.endpoint, "PATCH", f"buckets/{bucket.name}", "set-bprops", value)
    assert r.status_code == 200, r.text
    props = props_of(bucket)
    assert props["chunks"]["objsize_limit"] == "64MiB"  # type: ignore[index]
    assert props["chunks"]["chunk_size"] == "16MiB"  # type: ignore[index]
    assert props["checksum"]["type"] == "md5"  # type: ignore[index]
    r = act(ais_server.endpoint, "PATCH", f"buckets/{bucket.name}", "reset-bprops")
    assert r.status_code == 200, r.text
    props = props_of(bucket)
    assert props["chunks"]["chunk_size"] == "1GiB"  # type: ignore[index]
    assert props["checksum"]["type"] == "xxhash2"  # type: ignore[index]


def test_props_bad_input(bucket: Bucket, ais_server: LocalServer) -> None:
    ep = ais_server.endpoint
    bad = {"chunks": {"chunk_size": "1B"}}
    assert "chunk_size" in err(act(ep, "PATCH", f"buckets/{bucket.name}", "set-bprops", bad), 400)
    msg = err(act(ep, "PATCH", f"buckets/{bucket.name}", "set-props"), 400)
    assert 'invalid action "set-props"' in msg
    msg = err(act(ep, "PATCH", "buckets/no-such-bucket-x", "reset-bprops"), 404)
    assert 'bucket "ais://no-such-bucket-x" does not exist' in msg


def test_backend_bck_is_refused_not_dropped(bucket: Bucket, ais_server: LocalServer) -> None:
    ep = ais_server.endpoint
    before = props_of(bucket)
    # As AIS's full props carry it, empty: accepted (nothing to honour).
    empty = {"backend_bck": {"name": "", "provider": ""}, "checksum": {"type": "md5"}}
    r = act(ep, "PATCH", f"buckets/{bucket.name}", "set-bprops", empty)
    assert r.status_code == 200, r.text
    # Naming a bucket: refused, and nothing of the request applied.
    value = {"backend_bck": {"name": "origin", "provider": "aws"}, "checksum": {"type": "sha256"}}
    msg = err(act(ep, "PATCH", f"buckets/{bucket.name}", "set-bprops", value), 400)
    assert '"value.backend_bck.name"' in msg and "backend_bck" in msg and "not supported" in msg
    props = props_of(bucket)
    assert props["checksum"]["type"] == "md5"  # type: ignore[index]
    assert props.get("backend_bck", {}).get("name", "") == ""  # type: ignore[union-attr]
    act(ep, "PATCH", f"buckets/{bucket.name}", "set-bprops", {"checksum": before["checksum"]})


@pytest.mark.parametrize("provider", ["ht", "http", "hf", "x"])
def test_not_a_provider_is_a_bad_request(provider: str, ais_server: LocalServer) -> None:
    r = requests.get(
        f"{ais_server.endpoint}/v1/objects/b/o", params={"provider": provider}, timeout=10
    )
    assert r.status_code == 400, r.text
    msg = r.json()["message"]
    assert msg.startswith(
        f'invalid backend provider "{provider}": must be one of [ais, aws (s3://)'
    )


def test_summary_counts_and_sizes(filled: Bucket) -> None:
    s = filled.summary()
    assert s["name"] == filled.name and s["provider"] == "ais" and s["is_present"] is True
    assert s["ObjCount"] == {"obj_count_present": "9", "obj_count_remote": "0"}
    total = sum(range(1, 6)) + 10 + 11 + 12 + 100
    assert s["TotalSize"]["size_all_present_objs"] == str(total)
    assert s["TotalSize"]["size_all_remote_objs"] == "0"
    assert int(s["TotalSize"]["size_on_disk"]) >= total  # files carry headers too
    assert int(s["TotalSize"]["total_disks_size"]) > 0
    assert s["ObjSize"] == {
        "obj_min_size": 1,
        "obj_avg_size": round(total / 9),
        "obj_max_size": 100,
    }
    a = filled.summary(prefix="a/")
    assert a["ObjCount"]["obj_count_present"] == "5"
    assert a["ObjSize"]["obj_max_size"] == 5


def test_info_with_presence_and_prefix(filled: Bucket) -> None:
    props, summ = filled.info()
    assert json.loads(props)["provider"] == "ais"
    assert summ["ObjCount"]["obj_count_present"] == "9"
    _, b_only = filled.info(flt_presence=FLTPresence.FLT_PRESENT, prefix="b/")
    assert b_only["ObjCount"]["obj_count_present"] == "3"
    assert b_only["TotalSize"]["size_all_present_objs"] == str(10 + 11 + 12)
    _, none = filled.info(flt_presence=FLTPresence.FLT_PRESENT_NO_PROPS, prefix="zzz/")
    assert none["ObjCount"]["obj_count_present"] == "0"
    with pytest.raises(ValueError, match="FLTPresence"):
        filled.info(flt_presence=9)


def test_info_bad_input(filled: Bucket, ais_server: LocalServer) -> None:
    import requests

    url = f"{ais_server.endpoint}/v1/buckets/{filled.name}"
    r = requests.head(url, params={"provider": "ais", "bsumm_remote": "true", "presence": "x"})
    assert "flt-presence" in err(r, 400)
    r = requests.head(url + "/a/", params={"provider": "ais"})  # a prefix needs the summary
    assert "expecting just the bucket name" in err(r, 400)
    r = requests.get(
        url, params={"provider": "ais"}, json={"action": "summary-bck", "value": {"uuid": "nope"}}
    )
    assert "not found" in err(r, 404)
    missing = Client(ais_server.endpoint).bucket("no-such-bucket-y")
    with pytest.raises(ErrBckNotFound):
        missing.summary()


def test_rename_is_a_job(filled: Bucket, client: Client) -> None:
    old = filled.name
    names = sorted(e.name for e in filled.list_all_objects())
    new = new_name("renamed")
    job_id = filled.rename(new)
    assert filled.name == new  # the SDK follows the new name at once
    result = client.job(job_id).wait(timeout=60)
    assert result.success, result.error
    assert client.job(job_id).status().end_time > 0
    assert sorted(e.name for e in client.bucket(new).list_all_objects()) == names
    with pytest.raises(AISError) as e:
        client.bucket(old).head()
    assert e.value.status_code == 404
    assert [b.name for b in client.cluster().list_buckets()].count(new) == 1
    client.bucket(new).delete()


def test_rename_bad_input(filled: Bucket, bucket: Bucket, ais_server: LocalServer) -> None:
    with pytest.raises(AISError) as e:
        Bucket(filled.name, filled.client).rename(bucket.name)
    assert e.value.status_code == 400
    assert f'bucket "ais://{bucket.name}" already exists' in json.loads(e.value.message)["message"]
    ep = ais_server.endpoint
    msg = err(
        act(ep, "POST", f"buckets/{filled.name}", "move-bck", params={"bck_to": "ais/@#/"}), 400
    )
    assert "invalid destination bucket" in msg
    msg = err(
        act(
            ep,
            "POST",
            f"buckets/{filled.name}",
            "move-bck",
            params={"bck_to": f"ais/@#/{filled.name}/"},
        ),
        400,
    )
    assert "onto itself" in msg
    with pytest.raises(ErrBckNotFound):
        Bucket("no-such-bucket-z", filled.client).rename(new_name("x"))


def test_copy_prefix_prepend_ext(filled: Bucket, client: Client, ais_server: LocalServer) -> None:
    dst = client.bucket(new_name("copy-dst"))
    job_id = filled.copy(dst, prefix_filter="a/", prepend="c/", ext={"bin": "txt"})
    assert client.job(job_id).wait(timeout=60).success
    got = sorted(e.name for e in dst.list_all_objects())
    assert got == [f"c/a/{i}" for i in range(5)]
    assert dst.object("c/a/3").get_reader().read_all() == b"xxxx"
    snaps = client.job(job_id).get_details().list_snapshots()
    assert snaps[0].kind == "copy-bck" and snaps[0].stats is not None
    assert snaps[0].stats.objects == 5 and snaps[0].stats.bytes == 15
    assert snaps[0].destination_bck is not None and snaps[0].destination_bck.name == dst.name
    put_many(ais_server.endpoint, filled.name, ["img.bin"])
    job_id = filled.copy(dst, prefix_filter="img", ext={"bin": "txt"})
    assert client.job(job_id).wait(timeout=60).success
    assert dst.object("img.txt").get_reader().read_all() == b"img.bin"
    dst.delete()


def test_copy_dry_run_writes_nothing(filled: Bucket, client: Client) -> None:
    dst = client.bucket(new_name("dry-dst"))
    job_id = filled.copy(dst, dry_run=True)
    result = client.job(job_id).wait(timeout=60)
    assert result.success
    snap = client.job(job_id).get_details().list_snapshots()[0]
    assert snap.stats is not None and snap.stats.objects == 9
    with pytest.raises(AISError):
        dst.head()  # not even created


def test_copy_missing_source(client: Client) -> None:
    with pytest.raises(ErrBckNotFound):
        client.bucket("no-such-src-q").copy(client.bucket("whatever-dst"))


def test_put_files(bucket: Bucket, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for rel in ("a.txt", "b.bin", "sub/c.txt", "sub/ab.txt"):
        (tmp_path / rel).write_bytes(rel.encode())
    names = bucket.put_files(tmp_path, pattern="*.txt", verbose=False)
    assert sorted(names) == ["a.txt"]
    names = bucket.put_files(tmp_path, recursive=True, prepend="r-", pattern="*.txt")
    assert sorted(names) == ["r-a.txt", "r-sub/ab.txt", "r-sub/c.txt"]
    names = bucket.put_files(
        tmp_path, recursive=True, basename=True, prefix_filter="a", prepend="b/"
    )
    assert sorted(names) == ["b/a.txt", "b/ab.txt"]
    dry = bucket.put_files(tmp_path, recursive=True, dry_run=True, prepend="dry/")
    assert len(dry) == 4
    listed = sorted(e.name for e in bucket.list_all_objects())
    assert listed == ["a.txt", "b/a.txt", "b/ab.txt", "r-a.txt", "r-sub/ab.txt", "r-sub/c.txt"]
    assert bucket.object("r-sub/c.txt").get_reader().read_all() == b"sub/c.txt"
    with pytest.raises(ValueError):
        bucket.put_files(tmp_path / "a.txt")


def test_put_files_in_parallel_keeps_order_and_bytes(bucket: Bucket, tmp_path: Path) -> None:
    files = {f"f{i:03d}.bin": os.urandom(i * 997) for i in range(60)}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    order = [p.name for p in tmp_path.glob("*") if p.is_file()]
    names = bucket.put_files(tmp_path, prepend="par/", verbose=False, max_workers=6)
    assert names == [f"par/{n}" for n in order]
    for name, data in files.items():
        assert bucket.object(f"par/{name}").get_reader().read_all() == data
    with pytest.raises(ValueError, match="max_workers"):
        bucket.put_files(tmp_path, max_workers=0)


def test_write_dataset(bucket: Bucket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    images = tmp_path / "images"
    images.mkdir()
    for i in range(5):
        (images / f"cat_{i}.jpg").write_bytes(b"jpg%d" % i)
    (images / "dog_9.jpg").write_bytes(b"dog")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    posted: list[str] = []
    config = DatasetConfig(
        DataAttribute(images, "image", "jpg"), [LabelAttribute("cls", lambda n: n.split("_")[0])]
    )
    bucket.write_dataset(config, pattern="train", maxcount=4, post=posted.append)
    assert posted == ["train-0.tar", "train-1.tar"]
    assert not list(work.iterdir())  # local shards are removed once uploaded
    assert sorted(e.name for e in bucket.list_all_objects()) == posted
    members: dict[str, bytes] = {}
    for shard in posted:
        data = bucket.object(shard).get_reader().read_all()
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for m in tar.getmembers():
                f = tar.extractfile(m)
                assert f is not None
                members[m.name] = f.read()
    assert members["sample_0.image.jpg"] == b"jpg0"
    assert members["sample_0.cls"] == b"cat"
    assert members["sample_5.cls"] == b"dog"
    assert len(members) == 12


def test_list_start_after_first_page_only(bucket: Bucket, ais_server: LocalServer) -> None:
    names = [f"o-{i:02d}" for i in range(12)]
    put_many(ais_server.endpoint, bucket.name, names)
    got = [e.name for e in bucket.list_objects_iter(start_after="o-04", page_size=3)]
    assert got == names[5:]
    page = bucket.list_objects(start_after="o-09")
    assert [e.name for e in page.entries] == names[10:]
    assert [e.name for e in bucket.list_all_objects(start_after="o-11")] == []
    assert [o.name for o in bucket.list_all_objects_iter(start_after="o-10")] == ["o-11"]
    remote = Bucket("r", bucket.client, provider="aws")
    with pytest.raises(NotImplementedError):
        remote.list_objects(start_after="x")
