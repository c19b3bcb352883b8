"""The official AIStore Python SDK (PyPI aistore==2.0.0) with an s3:// bucket on our server, the
S3 side being moto in server mode (tests/integration/_s3.py)."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import official_sdk

sys.path.insert(0, str(Path(__file__).parents[1] / "integration"))
from _s3 import remote_s3  # noqa: E402

SCRIPT = Path(__file__).parent / "scripts" / "remote_calls.py"


def test_official_sdk_remote_bucket(official_python: Path) -> None:
    with remote_s3() as r:
        r.s3.create_bucket(Bucket="official")
        a, b = os.urandom(200_000), os.urandom(3_000_000)
        r.s3.put_object(Bucket="official", Key="cold/a", Body=a)
        r.s3.put_object(Bucket="official", Key="cold/b", Body=b)
        args = ["official", hashlib.sha256(a).hexdigest(), hashlib.sha256(b).hexdigest()]
        result = official_sdk.run_script(SCRIPT.read_text(), r.server.endpoint, args, timeout=240)
        written = r.s3.get_object(Bucket="official", Key="written/by-official")["Body"].read()
    failed = {name: err for name, err in result["checks"].items() if err != "ok"}
    assert not failed, "official SDK checks failed:\n" + "\n".join(
        f"--- {n}\n{e}" for n, e in failed.items()
    )
    assert len(result["checks"]) == 10, sorted(result["checks"])
    assert written == b"through the official SDK"
