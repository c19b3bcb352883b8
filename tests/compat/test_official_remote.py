"""The official AIStore Python SDK (PyPI aistore==2.0.0) with an s3:// bucket on our server, the
S3 side being moto in server mode (tests/integration/_s3.py)."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import boto3
import official_sdk

from aistore.server import LocalServer

sys.path.insert(0, str(Path(__file__).parents[1] / "integration"))
from _s3 import MotoServer  # noqa: E402

SCRIPT = Path(__file__).parent / "scripts" / "remote_calls.py"
KEYS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
}


def test_official_sdk_remote_bucket(official_python: Path) -> None:
    moto = MotoServer().start()
    try:
        s3 = boto3.client("s3", endpoint_url=moto.endpoint, region_name="us-east-1", **_boto_keys())
        s3.create_bucket(Bucket="official")
        a, b = os.urandom(200_000), os.urandom(3_000_000)
        s3.put_object(Bucket="official", Key="cold/a", Body=a)
        s3.put_object(Bucket="official", Key="cold/b", Body=b)
        with LocalServer(num_mountpaths=2, env={"S3_ENDPOINT": moto.endpoint, **KEYS}) as srv:
            args = ["official", hashlib.sha256(a).hexdigest(), hashlib.sha256(b).hexdigest()]
            result = official_sdk.run_script(SCRIPT.read_text(), srv.endpoint, args, timeout=240)
        written = s3.get_object(Bucket="official", Key="written/by-official")["Body"].read()
    finally:
        moto.stop()
    failed = {name: err for name, err in result["checks"].items() if err != "ok"}
    assert not failed, "official SDK checks failed:\n" + "\n".join(
        f"--- {n}\n{e}" for n, e in failed.items()
    )
    assert len(result["checks"]) == 10, sorted(result["checks"])
    assert written == b"through the official SDK"


def _boto_keys() -> dict[str, str]:
    return {
        "aws_access_key_id": KEYS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": KEYS["AWS_SECRET_ACCESS_KEY"],
    }
