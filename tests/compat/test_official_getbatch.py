"""The official SDK's Batch API (PyPI aistore==2.0.0, own venv) against our server gets the same
batches as our client: same items in the same order, same bytes and MossOut fields."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import official_sdk
import pytest

from aistore.server import LocalServer

SCRIPT = Path(__file__).parent / "scripts" / "getbatch_calls.py"
MEMBERS = {"a.txt": b"alpha", "dir/b.bin": bytes(range(256)) * 300, "empty": b""}


def _shard(kind: str) -> bytes:
    bio = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(bio, "w", zipfile.ZIP_DEFLATED) as z:
            for n, d in MEMBERS.items():
                z.writestr(n, d)
        return bio.getvalue()
    with tarfile.open(fileobj=bio, mode="w:gz" if kind == "tgz" else "w") as t:
        for n, d in MEMBERS.items():
            info = tarfile.TarInfo(n)
            info.size = len(d)
            t.addfile(info, io.BytesIO(d))
    return bio.getvalue()


@pytest.fixture(scope="module")
def buckets(ais_server: LocalServer) -> Iterator[tuple[str, str]]:
    client = ais_server.client()
    tag = uuid.uuid4().hex[:8]
    b1, b2 = client.bucket(f"gbc1-{tag}").create(), client.bucket(f"gbc2-{tag}").create()
    for i, size in enumerate([0, 10, 1000, 100_000, 1_000_000]):
        for b in (b1, b2):
            b.object(f"o{i}").get_writer().put_content(
                hashlib.sha256(f"{b.name}{i}".encode()).digest() * (size // 32)
            )
    for kind, name in (("tar", "s.tar"), ("tgz", "s.tgz"), ("zip", "s.zip")):
        b1.object(name).get_writer().put_content(_shard(kind))
    yield b1.name, b2.name
    b1.delete(missing_ok=True)
    b2.delete(missing_ok=True)


def _plan(b1: str, b2: str) -> list[dict[str, object]]:
    names = [f"o{i}" for i in range(5)]
    mixed = [
        {"obj": "o3", "start": 10, "length": 100},
        {"obj": "o4", "start": 999_000, "length": -1, "opaque_hex": "00ff10"},
        {"obj": "s.tar", "archpath": "dir/b.bin"},
        {"obj": "s.tgz", "archpath": "/a.txt"},
        {"obj": "s.zip", "archpath": "dir/b.bin", "start": 5, "length": 50},
        {"obj": "s.tar", "archpath": "empty"},
        {"obj": "missing-object"},
        {"obj": "s.tar", "archpath": "missing-member"},
        {"obj": "missing-shard.tar", "archpath": "a.txt"},
        {"obj": "o1", "bck": b2, "provider": "ais"},
    ]
    plan: list[dict[str, object]] = []
    for fmt in (".tar", ".tgz", ".tar.gz", ".zip"):
        for streaming in (True, False):
            for das in [False, True] if not streaming else [False]:
                mode = ("strm" if streaming else "mp") + ("-das" if das else "")
                plan.append(
                    {
                        "name": f"mixed{fmt}-{mode}",
                        "ctor": {"bucket": b1, "output_format": fmt, "streaming_get": streaming},
                        "objects": names,
                        "adds": mixed,
                        "decode_as_stream": das,
                    }
                )
    plan.append(
        {
            "name": "onob",
            "ctor": {"bucket": b1, "only_obj_name": True},
            "objects": names,
            "adds": [{"obj": "missing"}, {"obj": "s.tar", "archpath": "nope"}],
        }
    )
    plan.append(
        {
            "name": "objects-across-buckets",
            "ctor": {},
            "as_objects": True,
            "objects": [[b1, "o2"], [b2, "o2"], [b1, "o4"], [b2, "o0"]],
        }
    )
    plan.append({"name": "duplicates", "ctor": {"bucket": b2}, "objects": ["o1", "o1", "o3", "o1"]})
    plan.append(
        {
            "name": "no-coer",
            "ctor": {"bucket": b1, "cont_on_err": False},
            "objects": ["o1", "missing"],
        }
    )
    plan.append({"name": "no-bucket", "ctor": {"bucket": "no-such-bucket-x"}, "objects": ["o1"]})
    plan.append(
        {
            "name": "bad-range",
            "ctor": {"bucket": b1},
            "adds": [{"obj": "o1", "start": 5, "length": 100}],
        }
    )
    return plan


def _error_kind(result: dict[str, str]) -> tuple[str, str]:
    err = result.get("error", "")
    status = err.split("STATUS:")[1].split(",")[0] if "STATUS:" in err else ""
    return err.split(":")[0], status


def test_official_batch_equals_ours(
    ais_server: LocalServer, official_python: Path, buckets: tuple[str, str]
) -> None:
    plan = json.dumps(_plan(*buckets))
    official = official_sdk.run_script(SCRIPT.read_text(), ais_server.endpoint, [plan], timeout=300)
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    ours_run = subprocess.run(
        [sys.executable, str(SCRIPT), ais_server.endpoint, plan],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd="/",
        check=False,
    )
    assert ours_run.returncode == 0, ours_run.stderr[-3000:]
    ours = json.loads(ours_run.stdout.strip().splitlines()[-1])
    assert official["version"] == official_sdk.OFFICIAL_SDK_VERSION
    for spec in _plan(*buckets):
        name = str(spec["name"])
        if "error" in official[name] or "error" in ours[name]:
            # Same class and status; the message quotes the client's own address.
            assert _error_kind(official[name]) == _error_kind(ours[name]), name
        else:
            assert official[name] == ours[name], name
    # Sanity: the batches did what they say.
    mixed = ours["mixed.tar-strm"]["items"]
    assert [i["obj_name"] for i in mixed][:5] == [f"o{i}" for i in range(5)]
    assert [i["err_msg"] for i in mixed] == [False] * 11 + [True] * 3 + [False]
    assert mixed[5]["len"] == 100 and mixed[6]["len"] == 1000 and mixed[6]["opaque"] == "00ff10"
    assert mixed[7]["len"] == len(MEMBERS["dir/b.bin"]) and mixed[9]["len"] == 50
    assert mixed[10]["len"] == 0 and mixed[11]["len"] == 0
    assert ours["duplicates"]["items"][0] == ours["duplicates"]["items"][1]
    assert ours["no-coer"]["error"].startswith("ErrObjNotFound")
    assert ours["no-bucket"]["error"].startswith("ErrBckNotFound")
    assert ours["bad-range"]["error"].startswith("AISError") and "400" in ours["bad-range"]["error"]
