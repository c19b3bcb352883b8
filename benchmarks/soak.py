#!/usr/bin/env python3
"""Soak benchmark: 1,000 concurrent keep-alive connections of mixed GET/PUT/list/GetBatch for
60 s, then the same with abrupt client disconnects mid-body; every byte checked, every
acknowledged write read back, the server's RSS and open fds watched (issue 16, "Load").

Starts our server (``LocalServer``, 4 mountpaths under /tmp; or ``--endpoint URL`` for a running
one) and preloads bucket ``soak``: static objects (1-64 KiB), eight 8 MiB objects and a few
"hot" objects every client overwrites. Then, per phase, ``--processes`` client processes hold
``--connections`` keep-alive connections in total (an asyncio event loop per process, raw
HTTP/1.1 on each connection, one request at a time per connection) for ``--duration`` seconds:

* GET whole objects (static, own, hot, now and then an 8 MiB one) and GET ranges
  (``bytes=S-E``, ``S-``, ``-N``);
* PUT of new names and overwrites (of the connection's own objects and of the shared hot ones);
* list-objects pages (of the connection's own prefix: must be exactly its acknowledged names
  and sizes; of the static prefix from a random continuation token);
* GetBatch (streaming tar of 4-24 items: whole objects and ranges, own, static and hot).

An object's bytes are a function of its name and a version number: 8-byte word ``i`` is
``H(name) + version * A + i * K`` (mod 2^64), and the size follows from (name, version). A
reader decodes the version from any aligned word and compares every byte, so a wrong, shifted,
torn or truncated reply is caught, whole or range, GET or GetBatch. Each connection owns its
objects (it knows their exact version); hot objects may be at any written version.

Phase 2 runs the same mix plus abrupt disconnects: PUTs of 256 KiB-1 MiB that stop after half
the body, and GETs of 8 MiB that stop after a few KiB, each closed either with a RST
(SO_LINGER 0) or a FIN. The connection then reconnects and reads the object back: it must be
absent (a new name) or exactly the previous version, never partial.

At the end every acknowledged write is checked with our SDK (list of the written prefix plus
GetBatch of every object): the last acknowledged version of each own object, no name that was
never acknowledged, and for hot objects a version that no later-started acknowledged PUT
should have replaced. The server's VmRSS and open fds are sampled every second; ``.ais.work``
must hold no temp file once the clients are gone. A warm-up pass (``--warmup`` seconds of each
phase, rows ``w1``/``w2``, checked like the rest) comes first: the RSS at its end is the
reference the measured phases must stay near.

Latency is from sending the request to the last byte of the reply, as the client sees it:
it includes the Python event loop's queueing (hundreds of connections per process), so it is
an upper bound of the server's. The machine has 2 cores shared by server and clients.

Usage:
    python3 benchmarks/soak.py                          # 1,000 connections, 2 x 60 s (~4 min)
    python3 benchmarks/soak.py --processes 2 --connections 100 --duration 5   # smoke
    python3 benchmarks/soak.py --endpoint http://host:8080 --server-pid PID
Exits 1 on any error, wrong byte, lost write, partial object, leaked fd or temp file, RSS
growth beyond the tolerance, or a server that died.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import http.client
import io
import json
import multiprocessing as mp
import os
import random
import resource
import socket
import struct
import sys
import tarfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec
import numpy as np
from _table import render_table

KiB, MiB = 1 << 10, 1 << 20
MASK = (1 << 64) - 1
A = 0x9E3779B97F4A7C15  # odd: invertible mod 2^64
K = 0xBF58476D1CE4E5B9
A_INV = pow(A, -1, 1 << 64)
MAX_VERSION = 1 << 40  # any larger decoded version means the bytes are not ours
BIG_SIZE = 8 * MiB
REQUEST_TIMEOUT = 60.0
OPS = ["GET", "GET range", "PUT new", "PUT overwrite", "list page", "GetBatch"]
WEIGHTS = {
    "GET": 40,
    "GET range": 15,
    "PUT new": 10,
    "PUT overwrite": 15,
    "list page": 5,
    "GetBatch": 10,
}
CUT_WEIGHTS = {"PUT cut": 5, "GET cut": 5}  # added in phase 2


# -- object contents ------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def name_hash(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "little")


def obj_size(name: str, version: int) -> int:
    """Size of `name` at `version`: 8 MiB for big/*, 256 KiB-1 MiB when version % 4 == 3 (the
    bodies phase 2 cuts), else 1-64 KiB."""
    if name.startswith("big/"):
        return BIG_SIZE
    h = name_hash(f"{name}#{version}")
    if version & 3 == 3:
        return 256 * KiB + h % (768 * KiB)
    return KiB + h % (63 * KiB)


@lru_cache(maxsize=1024)
def content(name: str, version: int) -> bytes:
    size = obj_size(name, version)
    words = np.arange((size + 7) // 8, dtype="<u8")
    words *= np.uint64(K)
    words += np.uint64((name_hash(name) + version * A) & MASK)
    return words.tobytes()[:size]


def decode_version(name: str, data: bytes, offset: int) -> int | None:
    """The version whose bytes `data` (read from `offset`) claim to be; None if too short."""
    i = -(-offset // 8)
    j = i * 8 - offset
    if j + 8 > len(data):
        return None
    word = int.from_bytes(data[j : j + 8], "little")
    return ((word - name_hash(name) - i * K) * A_INV) & MASK


def check_bytes(
    name: str, data: bytes, offset: int, total: int | None, allowed: set[int] | None
) -> str | None:
    """None if `data` is exactly bytes [offset, offset+len) of `name` at an allowed version
    (any written version when `allowed` is None) whose size is `total`; else what is wrong."""
    version = decode_version(name, data, offset)
    if version is None:
        return f"{len(data)} bytes at {offset}: too short to identify"
    if version >= MAX_VERSION or (allowed is not None and version not in allowed):
        want = "any" if allowed is None else sorted(allowed)
        return f"bytes at {offset} decode to version {version:#x}, expected {want}"
    size = obj_size(name, version)
    if total is not None and total != size:
        return f"version {version}: object size {total}, expected {size}"
    expected = content(name, version)[offset : offset + len(data)]
    if data != expected:
        if len(data) != len(expected):
            return f"version {version}: {len(data)} bytes at {offset}, expected {len(expected)}"
        first = next(k for k in range(len(data)) if data[k] != expected[k])
        return f"version {version}: first wrong byte at {offset + first}"
    return None


def static_name(i: int) -> str:
    return f"s/{i:06d}"


# -- a minimal HTTP/1.1 client on asyncio streams -------------------------------------------


class Reply:
    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def describe(self) -> str:
        return f"{self.status} {self.body[:300]!r}"


class Conn:
    """One keep-alive connection; one request at a time."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port, limit=MiB)

    @property
    def open(self) -> bool:
        return self.writer is not None

    def head(self, method: str, path: str, body_len: int | None, extra: str = "") -> bytes:
        length = "" if body_len is None else f"Content-Length: {body_len}\r\n"
        return (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{length}{extra}\r\n"
        ).encode()

    async def send(self, data: bytes) -> None:
        assert self.writer is not None
        self.writer.write(data)
        await self.writer.drain()

    async def read_head(self) -> tuple[int, dict[str, str]]:
        assert self.reader is not None
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        return status, headers

    async def read_reply(self, method: str) -> Reply:
        assert self.reader is not None
        status, headers = await self.read_head()
        if method == "HEAD" or status in (204, 304):
            body = b""
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            parts = []
            while True:
                n = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if n == 0:
                    while await self.reader.readuntil(b"\r\n") != b"\r\n":
                        pass
                    break
                parts.append(await self.reader.readexactly(n))
                await self.reader.readexactly(2)
            body = b"".join(parts)
        elif "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        else:
            body = await self.reader.read()
            self.drop()
        if headers.get("connection", "").lower() == "close":
            self.drop()
        return Reply(status, headers, body)

    async def request(
        self, method: str, path: str, body: bytes | None = None, extra: str = ""
    ) -> Reply:
        if not self.open:
            await self.connect()
        await self.send(
            self.head(method, path, None if body is None else len(body), extra) + (body or b"")
        )
        return await self.read_reply(method)

    def cut(self, rst: bool) -> None:
        """Drop the connection now: RST (SO_LINGER 0) or FIN, whatever is unsent is lost."""
        assert self.writer is not None
        if rst:
            sock = self.writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.writer.transport.abort()
        else:
            self.writer.close()
        self.reader = self.writer = None

    def drop(self) -> None:
        if self.writer is not None:
            self.writer.transport.abort()
        self.reader = self.writer = None


# -- one client process ---------------------------------------------------------------------


@dataclass
class Config:
    host: str = "127.0.0.1"
    port: int = 0
    processes: int = 4
    connections: int = 1000
    duration: float = 60.0
    statics: int = 2000
    bigs: int = 8
    hots: int = 32
    seed: int = 1
    bucket: str = "soak"  # a fresh one per run against --endpoint


@dataclass
class ProcResult:
    lat: dict[str, list[float]] = field(default_factory=dict)  # op -> seconds
    cuts: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    statuses: Counter[str] = field(default_factory=Counter)  # "op status" of failures
    wrong_bytes: int = 0
    partial: int = 0  # a cut PUT's object read back neither absent nor the previous version
    messages: list[str] = field(default_factory=list)
    connects: int = 0
    hot_seq: int = 0  # versions of hot objects are unique per process
    owned: dict[str, int] = field(default_factory=dict)  # name -> last acknowledged version
    unknown: dict[str, list[int]] = field(default_factory=dict)  # PUTs that failed: may be in
    cut_names: dict[str, list[int]] = field(default_factory=dict)  # versions never to be seen
    hot: list[tuple[str, int, float, float]] = field(default_factory=list)  # acked PUTs


class Client:
    """One connection's loop: picks an operation, runs it, checks the reply."""

    def __init__(
        self, cfg: Config, run: int, phase: int, proc: int, idx: int, res: ProcResult
    ) -> None:
        self.cfg, self.run_no, self.phase, self.proc, self.res = cfg, run, phase, proc, res
        self.rng = random.Random(hash((cfg.seed, run, proc, idx)))
        self.conn = Conn(cfg.host, cfg.port)
        self.prefix = f"w/{run}/{proc}/{idx}/"
        self.names: list[str] = []  # own names with an acknowledged version
        self.seq = 0  # own versions are (seq << 2) | size class; seq never repeats
        weights = dict(WEIGHTS)
        if phase == 2:
            weights.update(CUT_WEIGHTS)
        self.ops = list(weights)
        self.weights = list(weights.values())

    def fail(self, op: str, what: str, wrong: bool = False) -> None:
        self.res.errors[op] += 1
        if wrong:
            self.res.wrong_bytes += 1
        if len(self.res.messages) < 40:
            self.res.messages.append(f"[phase {self.phase}] {op}: {what}")

    def record(self, op: str, seconds: float) -> None:
        self.res.lat.setdefault(op, []).append(seconds)

    def path(self, name: str) -> str:
        return f"/v1/objects/{self.cfg.bucket}/{name}?provider=ais"

    async def connect(self) -> None:
        await self.conn.connect()
        self.res.connects += 1

    async def run(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            op = self.rng.choices(self.ops, self.weights)[0]
            try:
                await asyncio.wait_for(
                    getattr(self, "op_" + op.replace(" ", "_"))(), REQUEST_TIMEOUT
                )
            except (
                OSError,
                asyncio.IncompleteReadError,
                asyncio.LimitOverrunError,
                asyncio.TimeoutError,
                ValueError,
                IndexError,
            ) as e:
                self.fail(op, f"{type(e).__name__}: {e}")
                self.conn.drop()
            if not self.conn.open:
                await self.connect()
        self.conn.drop()

    # targets

    def pick_read(self) -> tuple[str, set[int] | None]:
        """A name to read and the versions it may have (None: any written one)."""
        r = self.rng.random()
        if r < 0.25 and self.names:
            name = self.rng.choice(self.names)
            return name, {self.res.owned[name]}
        if r < 0.35:
            return f"h/{self.rng.randrange(self.cfg.hots):03d}", None
        return static_name(self.rng.randrange(self.cfg.statics)), {0}

    # operations

    async def op_GET(self) -> None:
        name: str
        allowed: set[int] | None
        if self.rng.random() < 0.02:
            name, allowed = f"big/{self.rng.randrange(self.cfg.bigs)}", {0}
        else:
            name, allowed = self.pick_read()
        t0 = time.perf_counter()
        reply = await self.conn.request("GET", self.path(name))
        self.record("GET", time.perf_counter() - t0)
        if reply.status != 200:
            self.res.statuses[f"GET {reply.status}"] += 1
            return self.fail("GET", f"GET {name}: {reply.describe()}")
        if err := check_bytes(name, reply.body, 0, len(reply.body), allowed):
            self.fail("GET", f"GET {name}: {err}", wrong=True)

    async def op_GET_range(self) -> None:
        name, allowed = self.pick_read()
        if allowed is None:  # hot: its size changes under us, so no range
            name, allowed = static_name(self.rng.randrange(self.cfg.statics)), {0}
        (version,) = allowed
        size = obj_size(name, version)
        start = self.rng.randrange(0, size - 16)
        end = min(size - 1, start + self.rng.randrange(15, 64 * KiB))
        kind = self.rng.random()
        if kind < 0.8:
            spec = f"{start}-{end}"
        elif kind < 0.9:
            spec, end = f"{start}-", size - 1
        else:
            spec, start, end = f"-{size - start}", start, size - 1
        t0 = time.perf_counter()
        reply = await self.conn.request("GET", self.path(name), extra=f"Range: bytes={spec}\r\n")
        self.record("GET range", time.perf_counter() - t0)
        want = f"bytes {start}-{end}/{size}"
        if reply.status != 206 or reply.headers.get("content-range") != want:
            self.res.statuses[f"GET range {reply.status}"] += 1
            got = reply.headers.get("content-range")
            return self.fail(
                "GET range",
                f"GET {name} bytes={spec}: {reply.describe()}, "
                f"Content-Range {got!r}, expected {want!r}",
            )
        if err := check_bytes(name, reply.body, start, size, allowed):
            self.fail("GET range", f"GET {name} bytes={spec}: {err}", wrong=True)

    async def put(self, op: str, name: str, version: int) -> bool:
        data = content(name, version)
        t0 = time.perf_counter()
        try:
            reply = await self.conn.request("PUT", self.path(name), data)
        except BaseException:
            self.res.unknown.setdefault(name, []).append(version)
            raise
        self.record(op, time.perf_counter() - t0)
        if reply.status != 200:
            self.res.unknown.setdefault(name, []).append(version)
            self.res.statuses[f"{op} {reply.status}"] += 1
            self.fail(op, f"PUT {name} ({len(data)} B): {reply.describe()}")
            return False
        return True

    def next_version(self, size_class: int) -> int:
        self.seq += 1
        return (self.seq << 2) | size_class

    async def op_PUT_new(self) -> None:
        name = f"{self.prefix}{self.seq + 1:06d}"
        version = self.next_version(self.rng.randrange(3))
        if await self.put("PUT new", name, version):
            self.res.owned[name] = version
            self.names.append(name)

    async def op_PUT_overwrite(self) -> None:
        if self.names and self.rng.random() < 0.75:
            name = self.rng.choice(self.names)
            version = self.next_version(self.rng.randrange(3))
            if await self.put("PUT overwrite", name, version):
                self.res.owned[name] = version
            return
        name = f"h/{self.rng.randrange(self.cfg.hots):03d}"
        self.res.hot_seq += 1
        version = ((((self.run_no << 8) | self.proc) << 24 | self.res.hot_seq) << 2) | (
            self.rng.randrange(3)
        )
        t0 = time.monotonic()
        if await self.put("PUT overwrite", name, version):
            self.res.hot.append((name, version, t0, time.monotonic()))

    async def list_page(self, prefix: str, token: str, page: int) -> tuple[list[Any], str]:
        msg = {
            "action": "list",
            "name": "",
            "value": {
                "prefix": prefix,
                "pagesize": page,
                "continuation_token": token,
                "props": "name,size",
                "flags": "0",
                "uuid": "",
            },
        }
        t0 = time.perf_counter()
        reply = await self.conn.request(
            "GET",
            f"/v1/buckets/{self.cfg.bucket}?provider=ais",
            json.dumps(msg).encode(),
            "Accept: application/msgpack\r\n",
        )
        self.record("list page", time.perf_counter() - t0)
        if reply.status != 200:
            self.res.statuses[f"list page {reply.status}"] += 1
            raise ValueError(f"list {prefix!r} after {token!r}: {reply.describe()}")
        page_res = msgspec.msgpack.decode(reply.body)
        return page_res.get("Entries") or [], page_res.get("ContinuationToken") or ""

    async def op_list_page(self) -> None:
        if self.names and self.rng.random() < 0.5:
            got: dict[str, int] = {}
            token = ""
            while True:  # the whole own prefix: no own PUT is in flight
                entries, token = await self.list_page(self.prefix, token, 100)
                got.update((e["n"], e.get("s", 0)) for e in entries)
                if not token:
                    break
            want = {n: obj_size(n, self.res.owned[n]) for n in self.names}
            unsure = {n for n in self.res.unknown if n.startswith(self.prefix)}
            bad = {n for n in set(got) | set(want) if got.get(n) != want.get(n)} - unsure
            if bad:
                n = min(bad)
                self.fail(
                    "list page",
                    f"list {self.prefix}: {n} listed with size "
                    f"{got.get(n)}, expected {want.get(n)}",
                    wrong=True,
                )
            return
        first = self.rng.randrange(self.cfg.statics)
        entries, _ = await self.list_page("s/", static_name(first), 100)
        want_names = [static_name(i) for i in range(first + 1, min(first + 101, self.cfg.statics))]
        got_pairs = [(e["n"], e.get("s")) for e in entries]
        want_pairs = [(n, obj_size(n, 0)) for n in want_names]
        if got_pairs != want_pairs:
            self.fail(
                "list page",
                f"list s/ after {static_name(first)}: {got_pairs[:3]}... "
                f"({len(got_pairs)}), expected {want_pairs[:3]}... "
                f"({len(want_pairs)})",
                wrong=True,
            )

    async def op_GetBatch(self) -> None:
        items: list[dict[str, Any]] = []
        checks: list[tuple[str, int, int | None, set[int] | None]] = []
        for _ in range(self.rng.randrange(4, 25)):
            name, allowed = self.pick_read()
            if allowed is not None and self.rng.random() < 0.3:
                (version,) = allowed
                size = obj_size(name, version)
                start = self.rng.randrange(size - 16)
                length = self.rng.randrange(16, size - start + 1)
                items.append({"objname": name, "start": start, "length": length})
                checks.append((name, start, size, allowed))
            else:
                items.append({"objname": name})
                checks.append((name, 0, None, allowed))
        body = json.dumps({"in": items, "mime": ".tar", "strm": True, "coer": False}).encode()
        t0 = time.perf_counter()
        reply = await self.conn.request("GET", f"/v1/ml/moss/{self.cfg.bucket}?provider=ais", body)
        self.record("GetBatch", time.perf_counter() - t0)
        if reply.status != 200:
            self.res.statuses[f"GetBatch {reply.status}"] += 1
            return self.fail("GetBatch", f"{len(items)} items: {reply.describe()}")
        try:
            with tarfile.open(fileobj=io.BytesIO(reply.body), mode="r:") as tar:
                members = [
                    (m.name, tar.extractfile(m).read())  # type: ignore[union-attr]
                    for m in tar
                    if m.isfile()
                ]
        except tarfile.TarError as e:
            return self.fail("GetBatch", f"{len(items)} items: bad tar: {e}", wrong=True)
        if len(members) != len(items):
            return self.fail(
                "GetBatch", f"{len(members)} entries for {len(items)} items", wrong=True
            )
        for (mname, data), (name, start, total, allowed) in zip(members, checks, strict=True):
            if mname != f"{self.cfg.bucket}/{name}":
                return self.fail("GetBatch", f"entry {mname!r} for {name}", wrong=True)
            if err := check_bytes(name, data, start, total, allowed):
                return self.fail("GetBatch", f"{name} at {start}: {err}", wrong=True)

    async def op_PUT_cut(self) -> None:
        """Send half of a 256 KiB-1 MiB body, then RST or FIN; then read the object back."""
        if self.names and self.rng.random() < 0.5:
            name = self.rng.choice(self.names)
        else:
            name = f"{self.prefix}{self.seq + 1:06d}"
        before = self.res.owned.get(name)
        version = self.next_version(3)
        self.res.cut_names.setdefault(name, []).append(version)
        data = content(name, version)
        rst = self.rng.random() < 0.5
        op = f"PUT cut ({'RST' if rst else 'FIN'})"
        await self.conn.send(
            self.conn.head("PUT", self.path(name), len(data)) + data[: len(data) // 2]
        )
        await asyncio.sleep(self.rng.random() * 0.01)
        self.conn.cut(rst)
        self.res.cuts[f"PUT {'RST' if rst else 'FIN'}"] += 1
        await self.connect()
        t0 = time.perf_counter()
        reply = await self.conn.request("GET", self.path(name))
        self.record("GET after cut", time.perf_counter() - t0)
        if before is None:
            if reply.status != 404:
                self.res.partial += 1
                self.fail(
                    "GET after cut",
                    f"{op} of new {name}: GET {reply.status}, expected 404 ({len(reply.body)} B)",
                    wrong=True,
                )
        elif reply.status != 200:
            self.fail("GET after cut", f"{op} of {name}: GET {reply.describe()}")
        elif err := check_bytes(name, reply.body, 0, len(reply.body), {before}):
            self.res.partial += 1
            self.fail("GET after cut", f"{op} of {name}: {err}", wrong=True)

    async def op_GET_cut(self) -> None:
        """Read the head and a few KiB of an 8 MiB reply, then RST or FIN."""
        name = f"big/{self.rng.randrange(self.cfg.bigs)}"
        rst = self.rng.random() < 0.5
        await self.conn.send(self.conn.head("GET", self.path(name), None))
        status, _ = await self.conn.read_head()
        if status != 200:
            raise ValueError(f"GET {name}: {status}")
        assert self.conn.reader is not None
        await self.conn.reader.readexactly(self.rng.randrange(1, 64) * KiB)
        self.conn.cut(rst)
        self.res.cuts[f"GET {'RST' if rst else 'FIN'}"] += 1


async def _proc_main(
    cfg: Config, run: int, phase: int, proc: int, conns: int, ready: Any, go: Any, start_at: Any
) -> ProcResult:
    res = ProcResult()
    clients = [Client(cfg, run, phase, proc, i, res) for i in range(conns)]
    for i in range(0, conns, 50):  # connect in steps, not a SYN flood
        await asyncio.gather(*(c.connect() for c in clients[i : i + 50]))
    ready.put(proc)
    while not go.is_set():
        await asyncio.sleep(0.01)
    deadline = start_at.value + cfg.duration
    await asyncio.gather(*(c.run(deadline) for c in clients))
    return res


def proc_main(
    cfg: Config,
    run: int,
    phase: int,
    proc: int,
    conns: int,
    ready: Any,
    go: Any,
    start_at: Any,
    out: Any,
) -> None:
    raise_nofile(conns + 64)
    try:
        res = asyncio.run(_proc_main(cfg, run, phase, proc, conns, ready, go, start_at))
    except BaseException as e:  # the parent reports it: a dead client must not pass as idle
        ready.put(proc)
        out.put((proc, f"client process {proc} died: {type(e).__name__}: {e}"))
        raise
    out.put((proc, res))


def raise_nofile(need: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(need, soft), hard), hard))


# -- the parent: server, phases, sampling, final check ---------------------------------------


class Sampler(threading.Thread):
    """VmRSS (KiB) and open fds of the server, once a second."""

    def __init__(self, pid: int | None) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.samples: list[tuple[float, int, int]] = []  # (monotonic, rss KiB, fds)
        self.stop_event = threading.Event()

    def sample(self) -> tuple[int, int] | None:
        if self.pid is None:
            return None
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
            fds = len(os.listdir(f"/proc/{self.pid}/fd"))
        except OSError:
            return None
        rss = next(
            int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")
        )
        return rss, fds

    def run(self) -> None:
        while not self.stop_event.wait(1.0):
            if s := self.sample():
                self.samples.append((time.monotonic(), *s))


class Prober(threading.Thread):
    """Once a second during a phase: a GET of a static object on a new connection (connect,
    request, whole reply, check), timed: how long a newcomer waits while the load runs."""

    def __init__(self, cfg: Config) -> None:
        super().__init__(daemon=True)
        self.cfg = cfg
        self.phase: int | None = None  # the run being probed; None between runs
        self.lat: dict[int, list[float]] = {}
        self.errors: Counter[int] = Counter()
        self.messages: list[str] = []
        self.stop_event = threading.Event()

    def probe(self, run: int) -> None:
        name = static_name(0)
        t0 = time.perf_counter()
        conn = http.client.HTTPConnection(self.cfg.host, self.cfg.port, timeout=REQUEST_TIMEOUT)
        try:
            conn.request("GET", f"/v1/objects/{self.cfg.bucket}/{name}?provider=ais")
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        if resp.status != 200 or data != content(name, 0):
            raise ValueError(f"GET {name}: {resp.status}, {len(data)} B")
        self.lat.setdefault(run, []).append(time.perf_counter() - t0)

    def run(self) -> None:
        while not self.stop_event.wait(1.0):
            if (run := self.phase) is None:
                continue
            try:
                self.probe(run)
            except (OSError, http.client.HTTPException, ValueError) as e:
                self.errors[run] += 1
                self.messages.append(f"[run {run}] new-connection probe: {type(e).__name__}: {e}")


@dataclass
class PhaseResult:
    run: int
    phase: int
    seconds: float
    results: list[ProcResult]
    failures: list[str]
    warmup: bool = False

    @property
    def label(self) -> str:
        return f"w{self.phase}" if self.warmup else f"{self.phase}"


def run_phase(
    cfg: Config, run: int, phase: int, prober: Prober, warmup: bool = False
) -> PhaseResult:
    ctx = mp.get_context("spawn")
    ready, out = ctx.Queue(), ctx.Queue()
    go, start_at = ctx.Event(), ctx.Value("d", 0.0)
    per = [
        cfg.connections // cfg.processes + (i < cfg.connections % cfg.processes)
        for i in range(cfg.processes)
    ]
    procs = [
        ctx.Process(target=proc_main, args=(cfg, run, phase, i, n, ready, go, start_at, out))
        for i, n in enumerate(per)
    ]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=120)
    start_at.value = time.monotonic()
    go.set()
    prober.phase = run
    results: list[ProcResult] = []
    failures: list[str] = []
    for _ in procs:
        proc, res = out.get(timeout=cfg.duration + 4 * REQUEST_TIMEOUT)
        if isinstance(res, str):
            failures.append(res)
        else:
            results.append(res)
    seconds = time.monotonic() - start_at.value
    prober.phase = None
    for p in procs:
        p.join(30)
    seconds = min(seconds, cfg.duration + REQUEST_TIMEOUT)
    return PhaseResult(run, phase, seconds, results, failures, warmup)


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def table_rows(ph: PhaseResult, duration: float, prober: Prober) -> list[list[str]]:
    rows = []
    lat: dict[str, list[float]] = {}
    errors: Counter[str] = Counter()
    cuts: Counter[str] = Counter()
    for r in ph.results:
        for op, values in r.lat.items():
            lat.setdefault(op, []).extend(values)
        errors.update(r.errors)
        cuts.update(r.cuts)
    total = 0
    for op in [*OPS, "GET after cut"]:
        values = sorted(lat.get(op, []))
        if not values and op == "GET after cut":
            continue
        total += len(values)
        ms = [f"{1e3 * percentile(values, q):.1f}" if values else "—" for q in (0.5, 0.99)]
        rows.append(
            [
                ph.label,
                op,
                f"{len(values):,}",
                f"{len(values) / duration:,.0f}",
                f"{errors[op]}",
                *ms,
                f"{1e3 * values[-1]:.1f}" if values else "—",
            ]
        )
    probes = sorted(prober.lat.get(ph.run, []))
    if probes or prober.errors[ph.run]:
        rows.append(
            [
                ph.label,
                "GET new conn (probe)",
                f"{len(probes)}",
                "",
                f"{prober.errors[ph.run]}",
                *(f"{1e3 * percentile(probes, q):.1f}" for q in (0.5, 0.99, 1.0)),
            ]
        )
    for op in ("PUT", "GET") if ph.phase == 2 else ():
        n = cuts[f"{op} RST"] + cuts[f"{op} FIN"]
        rows.append(
            [
                ph.label,
                f"{op} cut mid-body",
                f"{n:,}",
                f"{n / duration:,.0f}",
                f"{errors[f'{op} cut']}",
                "—",
                "—",
                "—",
            ]
        )
    all_errors = sum(errors.values())
    rows.append(
        [
            ph.label,
            "all requests",
            f"{total:,}",
            f"{total / duration:,.0f}",
            f"{all_errors}",
            "",
            "",
            "",
        ]
    )
    return rows


def render(rows: list[list[str]]) -> str:
    header = ["phase", "operation", "count", "req/s", "errors", "p50 ms", "p99 ms", "max ms"]
    return render_table([header, *rows])


def preload(endpoint: str, cfg: Config) -> None:
    """Bucket, static, big and hot objects at version 0, with our SDK's client."""
    from concurrent.futures import ThreadPoolExecutor

    from aistore import Client as SdkClient

    client = SdkClient(endpoint)
    bucket = client.bucket(cfg.bucket).create(exist_ok=True)
    names = [static_name(i) for i in range(cfg.statics)]
    names += [f"big/{i}" for i in range(cfg.bigs)] + [f"h/{i:03d}" for i in range(cfg.hots)]

    def put(name: str) -> None:
        bucket.object(name).get_writer().put_content(content(name, 0))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, names))


def final_check(endpoint: str, cfg: Config, phases: list[PhaseResult]) -> dict[str, Any]:
    """Read back every acknowledged write with our SDK (list + GetBatch)."""
    from urllib3 import HTTPResponse

    from aistore import Client as SdkClient

    client = SdkClient(endpoint)
    bucket = client.bucket(cfg.bucket)
    owned: dict[str, int] = {}
    unknown: dict[str, set[int]] = {}
    cut: dict[str, set[int]] = {}
    hot: dict[str, list[tuple[int, float, float]]] = {}
    for ph in phases:
        for r in ph.results:
            owned.update(r.owned)
            for n, vs in r.unknown.items():
                unknown.setdefault(n, set()).update(vs)
            for n, vs in r.cut_names.items():
                cut.setdefault(n, set()).update(vs)
            for n, v, t0, t1 in r.hot:
                hot.setdefault(n, []).append((v, t0, t1))
    problems: list[str] = []
    lost = wrong = partial = 0
    listed = {e.name: e.size for e in bucket.list_all_objects(prefix="w/", props="name,size")}
    for name in sorted(set(listed) - set(owned) - set(unknown)):
        partial += 1
        problems.append(
            f"{name}: listed ({listed[name]} B), never acknowledged "
            f"(cut versions {sorted(cut.get(name, ()))})"
        )
    for name in sorted(set(owned) - set(listed)):
        lost += 1
        problems.append(f"{name}: acknowledged version {owned[name]}, not listed")
    expect: dict[str, set[int] | None] = {
        n: {v} | unknown.get(n, set()) for n, v in owned.items() if n in listed
    }
    expect.update({static_name(i): {0} for i in range(cfg.statics)})
    expect.update({f"h/{i:03d}": None for i in range(cfg.hots)})
    final_hot: dict[str, int] = {}
    names = sorted(expect)
    read = 0
    for i in range(0, len(names), 500):
        chunk = names[i : i + 500]
        batch = client.batch(chunk, bucket=bucket).get()
        assert not isinstance(batch, HTTPResponse)
        for name, (info, data) in zip(chunk, batch, strict=True):
            read += 1
            allowed = expect[name]
            if err := check_bytes(name, data, 0, len(data), allowed):
                if name in owned and decode_version(name, data, 0) in cut.get(name, set()):
                    partial += 1
                elif name in owned or name.startswith("h/"):
                    lost += 1
                else:
                    wrong += 1
                problems.append(f"{name} ({info.obj_name}): {err}")
            elif allowed is None:
                final_hot[name] = decode_version(name, data, 0) or 0
    for name, version in final_hot.items():
        acked = hot.get(name, [])
        if version == 0:
            if acked:
                lost += 1
                problems.append(f"{name}: still version 0 after {len(acked)} acknowledged PUTs")
            continue
        mine = [a for a in acked if a[0] == version]
        if not mine:
            if version not in unknown.get(name, set()):
                lost += 1
                problems.append(f"{name}: final version {version:#x} was never acknowledged")
            continue
        later = [a for a in acked if a[1] > mine[0][2]]
        if later:
            lost += 1
            problems.append(
                f"{name}: final version {version:#x} (acked at {mine[0][2]:.3f}) "
                f"but {later[0][0]:#x} started later ({later[0][1]:.3f})"
            )
    return {
        "read_back": read,
        "acknowledged_objects": len(owned),
        "hot_puts": sum(len(v) for v in hot.values()),
        "lost": lost,
        "wrong": wrong,
        "partial": partial,
        "problems": problems,
    }


def healthy(endpoint: str) -> bool:
    url = urlsplit(endpoint)
    conn = http.client.HTTPConnection(url.hostname or "", url.port or 80, timeout=30)
    try:
        conn.request("GET", "/v1/health")
        return conn.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def destroy(endpoint: str, bucket: str) -> None:
    from aistore import Client as SdkClient

    SdkClient(endpoint).bucket(bucket).delete(missing_ok=True)


def work_files(mountpaths: list[Path]) -> int:
    return sum(1 for mp_ in mountpaths for p in (mp_ / ".ais.work").glob("*.tmp"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--processes", type=int, default=4, help="client processes (default 4)")
    ap.add_argument("--connections", type=int, default=1000, help="in total (default 1000)")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds per phase")
    ap.add_argument(
        "--warmup",
        type=float,
        default=15.0,
        help=(
            "seconds per phase of a warm-up pass over the same phases before the measured ones; "
            "the RSS at its end is the reference (default 15; 0: the RSS before the load)"
        ),
    )
    ap.add_argument(
        "--rss-tolerance",
        type=float,
        default=0.25,
        help=(
            "RSS growth allowed after warm-up: this fraction of the warm RSS or 32 MiB, whichever "
            "is larger (default 0.25)"
        ),
    )
    ap.add_argument("--statics", type=int, default=2000, help="static 1-64 KiB objects")
    ap.add_argument("--endpoint", help="use a running server instead of starting one")
    ap.add_argument("--server-pid", type=int, help="its pid, for the RSS and fd checks")
    ap.add_argument("--phases", default="1,2", help="which phases to run (default 1,2)")
    ap.add_argument("--json", metavar="PATH", help="also write every figure as JSON")
    args = ap.parse_args()
    phases_wanted = [int(p) for p in args.phases.split(",")]
    raise_nofile(2 * args.connections + 1024)  # LocalServer inherits the limit

    from aistore.server import LocalServer

    srv: LocalServer | None = None
    if args.endpoint:
        endpoint, pid, mountpaths = args.endpoint.rstrip("/"), args.server_pid, []
        bucket = f"soak-{os.getpid()}-{int(time.time())}"
    else:
        srv = LocalServer(num_mountpaths=4).start()
        endpoint, pid, mountpaths = srv.endpoint, srv.pid, srv.mountpaths
        bucket = "soak"
    url = urlsplit(endpoint)
    cfg = Config(
        host=url.hostname or "127.0.0.1",
        port=url.port or 80,
        processes=args.processes,
        connections=args.connections,
        duration=args.duration,
        statics=args.statics,
        bucket=bucket,
    )
    load_before = os.getloadavg()[0]
    sampler = Sampler(pid)
    prober = Prober(cfg)
    failures: list[str] = []
    try:
        t0 = time.perf_counter()
        preload(endpoint, cfg)
        preload_s = time.perf_counter() - t0
        time.sleep(1.0)
        start = sampler.sample()
        sampler.start()
        prober.start()
        phases: list[PhaseResult] = []
        run_ends: list[str] = []  # RSS MiB at the end of each run
        # The warm-up pass meets every kind of load the measured pass brings (phase 2's cuts
        # and reconnects need more memory than phase 1), so the measured pass must stay flat.
        warm_cfg = replace(cfg, duration=args.warmup)
        for phase in phases_wanted if args.warmup > 0 else ():
            phases.append(run_phase(warm_cfg, len(phases) + 1, phase, prober, warmup=True))
            failures += phases[-1].failures
            run_ends.append(f"{s[0] / 1024:.1f}" if (s := sampler.sample()) else "?")
        warm = sampler.sample()
        for phase in phases_wanted:
            phases.append(run_phase(cfg, len(phases) + 1, phase, prober))
            failures += phases[-1].failures
            run_ends.append(f"{s[0] / 1024:.1f}" if (s := sampler.sample()) else "?")
        end = sampler.sample()
        # The clients are gone: the server's fds must come back to where they started.
        settle = time.monotonic() + 15
        after = end
        while start and after and after[1] > start[1] and time.monotonic() < settle:
            time.sleep(0.5)
            after = sampler.sample()
        check = final_check(endpoint, cfg, phases)
        leftovers = work_files(mountpaths)
        alive = (srv.running if srv else True) and healthy(endpoint)
        if args.endpoint:
            destroy(endpoint, cfg.bucket)
        sampler.stop_event.set()
        prober.stop_event.set()
    finally:
        if srv:
            output = srv.output
            srv.stop()
    rss_max = max((s[1] for s in sampler.samples), default=None)
    fds_max = max((s[2] for s in sampler.samples), default=None)

    rows = [row for ph in phases for row in table_rows(ph, ph.seconds, prober)]
    errors = sum(sum(r.errors.values()) for ph in phases for r in ph.results)
    errors += sum(prober.errors.values())
    wrong = sum(r.wrong_bytes for ph in phases for r in ph.results) + check["wrong"]
    partial = sum(r.partial for ph in phases for r in ph.results) + check["partial"]
    statuses: Counter[str] = Counter()
    for ph in phases:
        for r in ph.results:
            statuses.update(r.statuses)
    if errors:
        failures.append(f"{errors} request errors")
    if wrong:
        failures.append(f"{wrong} replies with wrong bytes")
    if check["lost"]:
        failures.append(f"{check['lost']} lost writes")
    if partial:
        failures.append(f"{partial} partial objects after cut PUTs")
    if leftovers:
        failures.append(f"{leftovers} temp files left in .ais.work")
    if not alive:
        failures.append("the server died")
    lines = [
        f"lost writes: {check['lost']} (read back {check['read_back']:,} objects: "
        f"{check['acknowledged_objects']:,} own with their last acknowledged version, "
        f"{cfg.statics:,} static, {cfg.hots} hot after {check['hot_puts']:,} "
        "acknowledged hot PUTs)",
        f"wrong bytes: {wrong}; partial objects after cut PUTs: {partial}; "
        f"temp files left: {leftovers if mountpaths else 'n/a'}",
    ]
    if statuses:
        lines.append("error statuses: " + ", ".join(f"{k} ×{v}" for k, v in statuses.items()))
    cuts: Counter[str] = Counter()
    for ph in phases:
        for r in ph.results:
            cuts.update(r.cuts)
    if cuts:
        lines.append("cuts: " + ", ".join(f"{k} ×{v:,}" for k, v in sorted(cuts.items())))
    connects = sum(r.connects for ph in phases for r in ph.results)
    lines.append(
        f"connections opened: {connects:,} ({cfg.connections} held per phase, "
        "the rest reconnects after cuts/errors)"
    )
    mib = 1024
    if start and end and warm and rss_max is not None:
        limit = warm[0] + max(args.rss_tolerance * warm[0], 32 * mib)
        flat = end[0] <= limit
        lines.append(
            f"server RSS (MiB): start {start[0] / mib:.1f}, after the warm-up pass "
            f"({args.warmup:g} s per phase) {warm[0] / mib:.1f}, after each phase "
            f"{' / '.join(run_ends)}, end {end[0] / mib:.1f}, max {rss_max / mib:.1f}; "
            f"flat (end ≤ warm + max({args.rss_tolerance:.0%}, 32 MiB) = "
            f"{limit / mib:.1f}): {'yes' if flat else 'NO'}"
        )
        if not flat:
            failures.append(f"server RSS grew from {warm[0] / mib:.1f} to {end[0] / mib:.1f} MiB")
        leaked = after is not None and after[1] > start[1]
        lines.append(
            f"server open fds: {start[1]} before, max {fds_max} during, "
            f"{after[1] if after else '?'} after the clients closed "
            f"({'LEAK' if leaked else 'no leak'})"
        )
        if leaked:
            failures.append(f"server fds {start[1]} -> {after[1] if after else '?'}")
    else:
        lines.append("server RSS and fds: n/a (no --server-pid)")
    lines.append(f"server process alive at the end: {'yes' if alive else 'NO'}")

    print(
        f"# aistore soak benchmark: {os.cpu_count()} cores, {cfg.processes} client processes "
        f"× {cfg.connections // cfg.processes} keep-alive connections, {cfg.duration:g} s per "
        f"phase after a warm-up pass of {args.warmup:g} s per phase (rows w1, w2) "
        f"(1: mixed load; 2: the same with RST/FIN cuts mid-body), {cfg.statics:,} "
        f"static objects + {cfg.bigs} × 8 MiB (preload {preload_s:.1f} s)"
    )
    print(render(rows))
    for line in [
        *lines,
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} "
        "after (other work on the machine skews every figure)",
    ]:
        print(f"# {line}")
    messages = [m for ph in phases for r in ph.results for m in r.messages] + prober.messages
    for m in [*messages[:20], *check["problems"][:20]]:
        print(f"# ! {m}")
    if srv and failures:
        print("# server log (tail):\n" + "\n".join(output.splitlines()[-20:]))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "config": asdict(cfg),
                    "rows": rows,
                    "lines": lines,
                    "failures": failures,
                    "messages": messages,
                    "problems": check["problems"],
                    "rss_samples": sampler.samples,
                },
                indent=2,
            )
            + "\n"
        )
    if failures:
        print("# FAILED: " + "; ".join(failures))
        sys.exit(1)
    print("# PASS: 0 errors, 0 wrong bytes, 0 lost writes, 0 partial objects, RSS flat, no fd leak")


if __name__ == "__main__":
    main()
