"""HuggingFace repositories into a bucket: `Download.start_hf` lists a repository with
`huggingface_hub` against a local Hub-compatible API (_hf_hub.py) and the server's download job
fetches its files; tokens, HF_ENDPOINT and HF_TOKEN as huggingface_hub honours them."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("huggingface_hub", reason="the hf extra (huggingface_hub) is not installed")

from _hf_hub import HfHub, HfRepo  # noqa: E402
from _http_files import file_bytes  # noqa: E402
from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError  # noqa: E402

from aistore.sdk.client import Client  # noqa: E402
from aistore.server import LocalServer  # noqa: E402

MODEL_FILES = {
    "config.json": 321,
    "tokenizer/vocab.txt": 5000,
    "model-00001.safetensors": 3 << 20,  # redirected to the CDN path, as the Hub does LFS files
    "model-00002.safetensors": (2 << 20) + 7,
    ".gitattributes": 40,
}
TOKEN = "hf_test_token_123"


@pytest.fixture(scope="module")
def hub() -> Iterator[HfHub]:
    h = HfHub()
    h.add(HfRepo("model", "org/tiny-model", dict(MODEL_FILES)))
    h.add(HfRepo("model", "org/gated-model", {"weights.bin": 70000, "README.md": 12}, token=TOKEN))
    h.add(
        HfRepo(
            "dataset",
            "org/squadish",
            {
                "data/train.jsonl": 9000,
                "default/train/0000.parquet": 40000,
                "default/test/0000.parquet": 1234,
                "default/test/0001.parquet": 4321,
            },
            parquet={
                "default": {
                    "train": ["default/train/0000.parquet"],
                    "test": ["default/test/0000.parquet", "default/test/0001.parquet"],
                }
            },
        )
    )
    h.add(HfRepo("dataset", "org/no-parquet", {"a.csv": 10}))
    yield h
    h.stop()


@pytest.fixture(scope="module")
def srv() -> Iterator[LocalServer]:
    with LocalServer(num_mountpaths=2, download_allow_loopback=True) as s:
        yield s


@pytest.fixture(scope="module")
def client(srv: LocalServer) -> Client:
    return srv.client()


def new_bucket(client: Client):  # type: ignore[no-untyped-def]
    return client.bucket(f"hf-{uuid.uuid4().hex[:10]}")


def content(repo: HfRepo, path: str) -> bytes:
    return file_bytes(repo.content_name(path), repo.files[path])


def test_whole_model_lands_at_one_commit(client: Client, hub: HfHub) -> None:
    repo = hub.repos[("model", "org/tiny-model")]
    bucket = new_bucket(client)
    dl = client.download()
    dl.start_hf(bucket, "org/tiny-model", prefix="tiny/", endpoint=hub.url, token=False)
    st = dl.wait(timeout=60, progress=False)
    data_files = sorted(p for p in MODEL_FILES if p != ".gitattributes")
    assert st.finished_cnt == len(data_files) and st.error_cnt == 0
    assert st.description == "huggingface model org/tiny-model"
    assert sorted(e.name for e in bucket.list_all_objects()) == [f"tiny/{p}" for p in data_files]
    for p in data_files:
        assert bucket.object(f"tiny/{p}").get_reader().read_all() == content(repo, p), p
    # Every file came from the commit the listing named, not from a branch that may move.
    resolved = [
        path for path in hub.hits if "/resolve/" in path and path.startswith("/org/tiny-model/")
    ]
    assert resolved and all(f"/resolve/{repo.sha}/" in path for path in resolved)
    # The large files went through the Hub's redirect to its CDN path.
    assert hub.hits["/cdn/models/org/tiny-model/model-00001.safetensors"] >= 1
    assert st.finished_tasks and {t.total for t in st.finished_tasks} >= {3 << 20}


def test_one_file_at_a_revision(client: Client, hub: HfHub) -> None:
    repo = hub.repos[("model", "org/tiny-model")]
    bucket = new_bucket(client)
    dl = client.download()
    dl.start_hf(
        bucket,
        "org/tiny-model",
        filename="tokenizer/vocab.txt",
        revision="v1.0",
        endpoint=hub.url,
        token=False,
    )
    st = dl.wait(timeout=60, progress=False)
    assert st.finished_cnt == 1
    assert hub.hits["/org/tiny-model/resolve/v1.0/tokenizer/vocab.txt"] >= 1
    got = bucket.object("tokenizer/vocab.txt").get_reader().read_all()
    assert got == content(repo, "tokenizer/vocab.txt")


def test_gated_repo_needs_its_token(client: Client, hub: HfHub) -> None:
    repo = hub.repos[("model", "org/gated-model")]
    bucket = new_bucket(client)
    with pytest.raises(GatedRepoError):
        client.download().start_hf(bucket, "org/gated-model", endpoint=hub.url, token=False)

    # One file without the token: the listing is skipped, so the job's GET is what fails.
    dl = client.download()
    dl.start_hf(bucket, "org/gated-model", filename="weights.bin", endpoint=hub.url, token=False)
    st = dl.wait(timeout=60, progress=False, raise_on_error=False)
    assert st.error_cnt == 1 and "status 401" in st.errors[0].error
    assert "weights.bin" not in {e.name for e in bucket.list_all_objects()}

    dl = client.download()
    dl.start_hf(bucket, "org/gated-model", endpoint=hub.url, token=TOKEN, connections=1)
    st = dl.wait(timeout=60, progress=False)
    assert st.finished_cnt == 2
    assert bucket.object("weights.bin").get_reader().read_all() == content(repo, "weights.bin")
    # The server sent the token with the file GETs, not only the SDK with the listing.
    assert hub.auth[f"/org/gated-model/resolve/{repo.sha}/weights.bin"] == f"Bearer {TOKEN}"


def test_dataset_parquet_as_the_cli_names_it(client: Client, hub: HfHub) -> None:
    repo = hub.repos[("dataset", "org/squadish")]
    bucket = new_bucket(client)
    dl = client.download()
    dl.start_hf(bucket, "org/squadish", repo_type="dataset", endpoint=hub.url, token=False)
    dl.wait(timeout=60, progress=False)
    expect = {
        "train/0.parquet": "default/train/0000.parquet",
        "default/test/0.parquet": "default/test/0000.parquet",
        "default/test/1.parquet": "default/test/0001.parquet",
    }
    assert sorted(e.name for e in bucket.list_all_objects()) == sorted(expect)
    for name, path in expect.items():
        assert bucket.object(name).get_reader().read_all() == content(repo, path), name


def test_dataset_own_files_and_errors(client: Client, hub: HfHub) -> None:
    repo = hub.repos[("dataset", "org/squadish")]
    bucket = new_bucket(client)
    dl = client.download()
    dl.start_hf(
        bucket, "org/squadish", repo_type="dataset", parquet=False, endpoint=hub.url, token=False
    )
    dl.wait(timeout=60, progress=False)
    assert sorted(e.name for e in bucket.list_all_objects()) == sorted(repo.files)
    got = bucket.object("data/train.jsonl").get_reader().read_all()
    assert got == content(repo, "data/train.jsonl")

    with pytest.raises(ValueError, match="no parquet files found for dataset 'org/no-parquet'"):
        client.download().start_hf(
            bucket, "org/no-parquet", repo_type="dataset", endpoint=hub.url, token=False
        )
    with pytest.raises(RepositoryNotFoundError):
        client.download().start_hf(bucket, "org/missing", endpoint=hub.url, token=False)
    with pytest.raises(ValueError, match="repo_type"):
        client.download().start_hf(bucket, "org/tiny-model", repo_type="space", endpoint=hub.url)


def test_hf_endpoint_and_hf_token_from_the_environment(
    srv: LocalServer, hub: HfHub, tmp_path: Path
) -> None:
    """As huggingface_hub reads them: HF_ENDPOINT when it is imported, HF_TOKEN on use; so in a
    process of its own."""
    repo = hub.repos[("model", "org/gated-model")]
    bname = f"hf-{uuid.uuid4().hex[:10]}"
    script = (
        "from aistore.sdk.client import Client\n"
        f"c = Client({srv.endpoint!r})\n"
        f"dl = c.download(); dl.start_hf(c.bucket({bname!r}), 'org/gated-model')\n"
        "print(dl.wait(timeout=60, progress=False).finished_cnt)\n"
    )
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.url,
        "HF_TOKEN": TOKEN,
        "HF_HOME": str(tmp_path),  # no saved login of this machine's user
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2"
    got = srv.client().bucket(bname).object("weights.bin").get_reader().read_all()
    assert got == content(repo, "weights.bin")
