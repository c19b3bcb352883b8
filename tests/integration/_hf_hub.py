"""A local HuggingFace-compatible Hub: the endpoints `huggingface_hub` and AIS's CLI call to list
and fetch a repository's files (tests/integration/test_download_hf.py, benchmarks/download.py).

Endpoints (REPO is `org/name`; TYPE `models` or `datasets`; a model's files live at `/REPO/...`,
a dataset's at `/datasets/REPO/...`):
  GET  /api/TYPE/REPO[/revision/REV][?blobs=true]   repo info: `sha`, `siblings` (sizes with blobs)
  GET  /api/TYPE/REPO/tree/REV[?recursive=true]    the files (snapshot_download lists them so)
  GET  /api/datasets/REPO/parquet                   {config: {split: [url, ...]}}
  HEAD|GET [/datasets]/REPO/resolve/REV/PATH        the file; from 1 MiB a 302 to /cdn/... (as
                                                    the Hub sends LFS files to its CDN)
  HEAD|GET /cdn/TYPE/REPO/PATH                      the file (Range: bytes=a-b)
With `cdn` set, the redirect goes to the URL it gives for a file instead (e.g. another server
holding the same bytes, as the Hub's CDN is not the Hub). A gated repo answers 401 to a request
without `Authorization: Bearer <its token>`, as the Hub does. Every request is counted per path
(`hits`), with the Authorization header it carried (`auth`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, quote, unquote, urlsplit

from _http_files import QuietHTTPServer, reply_file

LFS_THRESHOLD = 1 << 20  # files this large are redirected to the CDN path


@dataclass
class HfRepo:
    repo_type: str  # "model" or "dataset"
    repo_id: str  # "org/name"
    files: dict[str, int]  # path in the repo -> size; content: file_bytes(content_name(...), size)
    token: str | None = None  # set: gated, every request needs it
    # A dataset's parquet conversion: config -> split -> paths of `files` (as the Hub lists them
    # from its refs/convert/parquet branch).
    parquet: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    @property
    def sha(self) -> str:
        return hashlib.sha1(f"{self.repo_type}/{self.repo_id}".encode()).hexdigest()

    def content_name(self, path: str) -> str:
        """The name file_bytes seeds this file's content with."""
        return f"{self.repo_type}/{self.repo_id}/{path}"


class HfHub:
    """The Hub on 127.0.0.1 and an ephemeral port, on its own threads; `stop()` ends it."""

    def __init__(self, cdn: Callable[[HfRepo, str], str] | None = None) -> None:
        self.cdn = cdn
        self.repos: dict[tuple[str, str], HfRepo] = {}
        self.hits: Counter[str] = Counter()
        self.auth: dict[str, str] = {}  # path -> the Authorization header of its last request
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                owner._serve(self, head=True)

            def do_GET(self) -> None:
                owner._serve(self, head=False)

        self._httpd = QuietHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def add(self, repo: HfRepo) -> HfRepo:
        self.repos[(repo.repo_type, repo.repo_id)] = repo
        return repo

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- serving --------------------------------------------------------------------------------

    def _serve(self, h: BaseHTTPRequestHandler, *, head: bool) -> None:
        u = urlsplit(h.path)
        with self._lock:
            self.hits[u.path] += 1
            self.auth[u.path] = h.headers.get("Authorization", "")
        parts = [unquote(p) for p in u.path.strip("/").split("/")]
        try:
            if parts[0] == "api" and len(parts) >= 4:
                return self._api(h, parts[1:], parse_qs(u.query), head=head)
            if parts[0] == "cdn" and len(parts) >= 4:
                repo = self._repo(h, parts[1].rstrip("s"), "/".join(parts[2:4]))
                if repo:
                    self._file(h, repo, "/".join(parts[4:]), head=head, redirect=False)
                return None
            repo_type = "model"
            if parts[0] == "datasets":
                repo_type, parts = "dataset", parts[1:]
            if len(parts) >= 5 and parts[2] == "resolve":
                repo = self._repo(h, repo_type, "/".join(parts[:2]))
                if repo:
                    self._file(h, repo, "/".join(parts[4:]), head=head, redirect=True)
                return None
            return self._json(h, 404, {"error": "unknown path"}, head=head)
        except (BrokenPipeError, ConnectionResetError):
            return None

    def _repo(self, h: BaseHTTPRequestHandler, repo_type: str, repo_id: str) -> HfRepo | None:
        """The repo, if it exists and the request may see it; else the Hub's error reply."""
        repo = self.repos.get((repo_type, repo_id))
        if repo is None:
            self._json(h, 404, {"error": "Repository not found"}, code="RepoNotFound")
            return None
        if repo.token and h.headers.get("Authorization", "") != f"Bearer {repo.token}":
            self._json(h, 401, {"error": f"Access to {repo_id} is restricted"}, code="GatedRepo")
            return None
        return repo

    def _api(
        self,
        h: BaseHTTPRequestHandler,
        parts: list[str],
        query: dict[str, list[str]],
        *,
        head: bool,
    ) -> None:
        repo_type = {"models": "model", "datasets": "dataset"}.get(parts[0], "")
        repo = self._repo(h, repo_type, "/".join(parts[1:3]))
        if repo is None:
            return None
        rest = parts[3:]
        if rest == ["parquet"] and repo_type == "dataset":
            branch = quote("refs/convert/parquet", safe="")
            base = f"{self.url}/datasets/{repo.repo_id}/resolve/{branch}"
            listing = {
                config: {split: [f"{base}/{p}" for p in paths] for split, paths in splits.items()}
                for config, splits in repo.parquet.items()
            }
            return self._json(h, 200, listing, head=head)
        if rest and rest[0] == "tree":
            entries = [
                {"type": "file", "path": path, "size": size, "oid": self._oid(repo, path)}
                for path, size in sorted(repo.files.items())
            ]
            return self._json(h, 200, entries, head=head)
        if rest and rest[0] != "revision":
            return self._json(h, 404, {"error": "unknown path"}, head=head)
        blobs = query.get("blobs", [""])[0].lower() == "true"
        siblings = []
        for path, size in sorted(repo.files.items()):
            entry: dict[str, object] = {"rfilename": path}
            if blobs:
                entry["size"] = size
                entry["blobId"] = self._oid(repo, path)
            siblings.append(entry)
        info = {"id": repo.repo_id, "sha": repo.sha, "private": False, "siblings": siblings}
        return self._json(h, 200, info, head=head)

    @staticmethod
    def _oid(repo: HfRepo, path: str) -> str:
        return hashlib.sha1(repo.content_name(path).encode()).hexdigest()

    def _file(
        self, h: BaseHTTPRequestHandler, repo: HfRepo, path: str, *, head: bool, redirect: bool
    ) -> None:
        size = repo.files.get(path)
        if size is None:
            return self._json(h, 404, {"error": "Entry not found"}, code="EntryNotFound", head=head)
        etag = hashlib.sha256(repo.content_name(path).encode()).hexdigest()
        headers = {"X-Repo-Commit": repo.sha, "ETag": f'"{etag}"'}
        if redirect and size >= LFS_THRESHOLD:
            cdn = (
                self.cdn(repo, path)
                if self.cdn
                else f"/cdn/{repo.repo_type}s/{repo.repo_id}/{quote(path)}"
            )
            h.send_response(302)
            h.send_header("Location", cdn)
            h.send_header("X-Linked-Size", str(size))
            h.send_header("X-Linked-Etag", f'"{etag}"')
            for k, v in headers.items():
                h.send_header(k, v)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return None
        reply_file(h, repo.content_name(path), size, head=head, headers=headers)
        return None

    @staticmethod
    def _json(
        h: BaseHTTPRequestHandler, status: int, doc: object, *, code: str = "", head: bool = False
    ) -> None:
        body = json.dumps(doc).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        if code:
            h.send_header("X-Error-Code", code)
        h.end_headers()
        if not head:
            h.wfile.write(body)
