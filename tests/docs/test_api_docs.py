"""The API reference builds from the docstrings of every public module without a warning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import aistore

REPO = Path(__file__).resolve().parents[2]


def test_api_reference_builds_without_warnings(tmp_path: Path) -> None:
    pytest.importorskip("pdoc", reason="needs the dev or docs extra (pdoc)")
    pytest.importorskip("torch", reason="aistore.pytorch is documented too: needs torch")
    env = dict(os.environ)
    # Document the aistore this test imports (the installed one, or the source tree).
    package_root = str(Path(aistore.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    out = tmp_path / "api"
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "api_docs.py"), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    pages = {p.relative_to(out).as_posix() for p in out.rglob("*.html")}
    for page in (
        "aistore.html",
        "aistore/server.html",
        "aistore/sdk/bucket.html",
        "aistore/sdk/obj/object_reader.html",
        "aistore/sdk/batch/batch.html",
        "aistore/pytorch.html",
        "aistore/pytorch/parallel_map_dataset.html",
        "aistore/pytorch/batch_iter_dataset.html",
    ):
        assert page in pages
    assert not [p for p in pages if "/_" in f"/{p}"], "a private module was documented"
    assert 'id="Bucket.list_objects"' in (out / "aistore/sdk/bucket.html").read_text()
