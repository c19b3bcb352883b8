"""Crash safety and process behaviour of the real server.

SIGKILL in the middle of many concurrent PUTs (monolithic, chunked, multipart), appends,
renames, overwrites and deletes, beside running rechunk, copy-bucket and create-inventory jobs,
then a restart on the same mountpaths: every listed object is complete and verifies byte for
byte, every acknowledged write and job survives (an interrupted overwrite keeps the previous
version, an interrupted job leaves whole objects or none), and recovery leaves no temp files,
chunk markers or unreferenced chunk directories.
SIGTERM/SIGINT stop the server cleanly (exit code 0) even with connections open, and `--help`
documents every flag.
"""

from __future__ import annotations

import random
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from _util import (
    assert_bucket_consistent,
    content_for,
    create_bucket,
    list_entries,
    list_names,
    obj_path,
    object_files,
    raw_request,
    set_bprops,
    wait_until,
    work_files,
    xxh64_hex,
)

from aistore.server import LocalServer, find_server_binary

KiB, MiB = 1 << 10, 1 << 20
WRITERS = 8
ROUNDS = 6
NAMES_PER_WRITER = 5
BUCKETS = ("plain", "chunked")
SRC, COPY = "src", "copy"  # a bucket no writer touches, and where copy jobs put it
SRC_OBJECTS = 24
INVENTORY = "snap"

# What an object may be: the pieces its bytes came from, each content_for(origin, size), or
# ABSENT. A PUT makes one piece, an append adds one to what was there, a rename moves them all.
Outcome = tuple[tuple[str, int], ...] | None
ABSENT: Outcome = None


def outcome_bytes(outcome: Outcome) -> bytes:
    assert outcome is not None
    return b"".join(content_for(origin, size) for origin, size in outcome)


def pick_size(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.1:
        return 0
    if r < 0.35:
        return rng.randint(1, 64 * KiB)
    if r < 0.65:
        return rng.randint(64 * KiB, 3 * MiB // 2)
    return rng.randint(3 * MiB // 2, 8 * MiB)


@dataclass
class Ledger:
    """What each object may be after a crash: the set of outcomes it can have.

    A key whose last acknowledged write had outcome O allows {O}; a write in flight at the kill
    adds its outcome. Keys never written are not in `allowed`. Jobs over the untouched `src`
    bucket are tracked the same way: acknowledged (must be complete) or in flight (may be absent,
    never partial).
    """

    allowed: dict[tuple[str, str], set[Outcome]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    acks: int = 0
    done: Counter[str] = field(default_factory=Counter)  # acknowledged writes and jobs by kind
    copied: bool = False  # a copy of src into COPY was acknowledged (later copies only rewrite it)
    inventory_acked: bool = False  # the last create-inventory (with force) was acknowledged

    def begin(self, key: tuple[str, str], outcome: Outcome) -> None:
        with self.lock:
            self.allowed.setdefault(key, {ABSENT}).add(outcome)

    def ack(self, key: tuple[str, str], outcome: Outcome, op: str) -> None:
        with self.lock:
            self.allowed[key] = {outcome}
            self.acks += 1
            self.done[op] += 1

    def settled(self, key: tuple[str, str]) -> Outcome:
        """The one outcome of a key no write is in flight for (only its writer changes it)."""
        with self.lock:
            (only,) = self.allowed.get(key, {ABSENT})
            return only


class Writer(threading.Thread):
    def __init__(self, idx: int, rnd: int, endpoint: str, ledger: Ledger) -> None:
        super().__init__(name=f"writer-{idx}", daemon=True)
        self.idx, self.endpoint, self.ledger = idx, endpoint, ledger
        self.rng = random.Random(f"{idx}:{rnd}")
        self.session = requests.Session()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while True:
                bucket = self.rng.choice(BUCKETS)
                name = self.own_name()
                op = self.rng.random()
                if op < 0.08:
                    self.delete(bucket, name)
                elif op < 0.2 and self.idx % 2 == 0:
                    self.multipart(bucket, name)
                elif op < 0.32:
                    self.append(bucket, name)
                elif op < 0.44:
                    self.rename(bucket, name, self.own_name())
                else:
                    self.put(bucket, name, pick_size(self.rng))
        except requests.RequestException:
            return  # the server is gone: this writer's work for the round is over
        except BaseException as e:  # noqa: BLE001 - reported by the test
            self.error = e

    def own_name(self) -> str:
        return f"w{self.idx}/obj-{self.rng.randrange(NAMES_PER_WRITER)}"

    def url(self, bucket: str, name: str) -> str:
        return self.endpoint + obj_path(bucket, name)

    def put(self, bucket: str, name: str, size: int) -> None:
        key, outcome = (bucket, name), ((f"{bucket}/{name}", size),)
        data = outcome_bytes(outcome)
        self.ledger.begin(key, outcome)
        r = self.session.put(self.url(bucket, name), data=data, timeout=(5, 60))
        assert r.status_code == 200, r.text
        assert r.headers["Ais-Checksum-Value"] == xxh64_hex(data)
        self.ledger.ack(key, outcome, "put")

    def delete(self, bucket: str, name: str) -> None:
        key = (bucket, name)
        self.ledger.begin(key, ABSENT)
        r = self.session.delete(self.url(bucket, name), timeout=(5, 60))
        assert r.status_code in (200, 404), r.text
        self.ledger.ack(key, ABSENT, "delete")

    def multipart(self, bucket: str, name: str) -> None:
        key = (bucket, name)
        sizes = [self.rng.randint(1, 2 * MiB) for _ in range(self.rng.randint(1, 4))]
        outcome = ((f"{bucket}/{name}", sum(sizes)),)
        data = outcome_bytes(outcome)
        url = self.url(bucket, name)
        r = self.session.post(
            url, json={"action": "mpt-upload", "name": "", "value": None}, timeout=(5, 60)
        )
        assert r.status_code == 200, r.text
        upload_id = r.text
        offsets = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
        order = list(range(1, len(sizes) + 1))
        self.rng.shuffle(order)
        for n in order:
            part = data[offsets[n - 1] : offsets[n]]
            r = self.session.put(
                url, params={"uploadId": upload_id, "partNumber": n}, data=part, timeout=(5, 60)
            )
            assert r.status_code == 200, r.text
        self.ledger.begin(key, outcome)
        parts = [{"part-number": n, "etag": ""} for n in order]
        msg = {"action": "mpt-complete", "name": "", "value": parts}
        r = self.session.post(url, params={"uploadId": upload_id}, json=msg, timeout=(5, 60))
        assert r.status_code == 200, r.text
        self.ledger.ack(key, outcome, "multipart")

    def append(self, bucket: str, name: str) -> None:
        """Appends of 1..3 pieces under one handle to what the object holds (if anything); the
        object changes only at the flush."""
        key = (bucket, name)
        cuts = sorted(self.rng.randint(0, 2 * MiB) for _ in range(self.rng.randint(1, 3)))
        before = self.ledger.settled(key) or ()
        piece = (f"{bucket}/{name}+{self.rng.randrange(1 << 30)}", cuts[-1])
        outcome = (*before, piece)
        data = content_for(*piece)
        url, handle = self.url(bucket, name), ""
        for lo, hi in zip([0, *cuts[:-1]], cuts, strict=True):
            params = {"append_type": "append", "append_handle": handle}
            r = self.session.put(url, params=params, data=data[lo:hi], timeout=(5, 60))
            assert r.status_code == 200, r.text
            handle = r.headers["Ais-Append-Handle"]
        self.ledger.begin(key, outcome)
        params = {"append_type": "flush", "append_handle": handle}
        r = self.session.put(url, params=params, timeout=(5, 60))
        assert r.status_code == 200, r.text
        assert r.headers["Ais-Checksum-Value"] == xxh64_hex(outcome_bytes(outcome))
        self.ledger.ack(key, outcome, "append")

    def rename(self, bucket: str, name: str, to: str) -> None:
        src, dst = (bucket, name), (bucket, to)
        moved = self.ledger.settled(src)
        if name == to or moved is ABSENT:
            return
        self.ledger.begin(dst, moved)
        self.ledger.begin(src, ABSENT)
        msg = {"action": "rename-obj", "name": to, "value": None}
        r = self.session.post(self.url(bucket, name), json=msg, timeout=(5, 60))
        assert r.status_code == 200, r.text
        self.ledger.ack(dst, moved, "rename")
        self.ledger.ack(src, ABSENT, "rename")


class JobLoop(threading.Thread):
    """Runs one kind of job after another until the server dies; `begin`/`ack` record each."""

    def __init__(self, name: str, rnd: int, endpoint: str, ledger: Ledger) -> None:
        super().__init__(name=name, daemon=True)
        self.rnd, self.endpoint, self.ledger = rnd, endpoint, ledger
        self.session = requests.Session()
        self.jobs = 0
        self.error: BaseException | None = None

    def request(self) -> tuple[str, dict[str, Any], dict[str, str]]:
        """The next job: bucket, action message, query."""
        raise NotImplementedError

    def begin(self) -> None:
        pass

    def ack(self) -> None:
        pass

    def run(self) -> None:
        try:
            while True:
                bucket, msg, query = self.request()
                self.begin()
                r = self.session.post(
                    f"{self.endpoint}/v1/buckets/{bucket}", params=query, json=msg, timeout=(5, 60)
                )
                assert r.status_code == 200, r.text
                while True:
                    st = self.session.get(
                        f"{self.endpoint}/v1/cluster?what=status",
                        json={"id": r.text},
                        timeout=(5, 60),
                    )
                    assert st.status_code == 200, st.text
                    if st.json()["end_time"]:
                        assert not st.json()["err"], st.text
                        break
                    time.sleep(0.01)  # poll interval
                self.ack()
                with self.ledger.lock:
                    self.ledger.done[msg["action"]] += 1
                self.jobs += 1
        except requests.RequestException:
            return
        except BaseException as e:  # noqa: BLE001 - reported by the test
            self.error = e


class Rechunker(JobLoop):
    """Rechunk jobs over both writer buckets (content-preserving)."""

    def request(self) -> tuple[str, dict[str, Any], dict[str, str]]:
        limit = ("1MiB", 0, "512KiB")[(self.rnd + self.jobs) % 3]
        value = {"objsize-limit": limit, "chunk-size": "128KiB"}
        return BUCKETS[self.jobs % 2], {"action": "rechunk", "name": "", "value": value}, {}


class Copier(JobLoop):
    """Copies src into COPY, again and again (a copy rewrites what an earlier one wrote)."""

    def request(self) -> tuple[str, dict[str, Any], dict[str, str]]:
        msg = {"action": "copy-bck", "name": "", "value": {"prefix": ""}}
        return SRC, msg, {"bck_to": f"ais/@#/{COPY}/"}

    def ack(self) -> None:
        self.ledger.copied = True


class Inventorist(JobLoop):
    """Rebuilds src's inventory with force, which removes the old one first."""

    def request(self) -> tuple[str, dict[str, Any], dict[str, str]]:
        value = {"name": INVENTORY, "force": True, "names_per_chunk": 7}
        return SRC, {"action": "create-inventory", "name": "", "value": value}, {}

    def begin(self) -> None:
        self.ledger.inventory_acked = False

    def ack(self) -> None:
        self.ledger.inventory_acked = True


def fill_src(endpoint: str) -> dict[str, int]:
    create_bucket(endpoint, SRC, {"chunks": {"objsize_limit": "1MiB", "chunk_size": "256KiB"}})
    rng = random.Random("src")
    sizes = {f"s/{i:03d}": rng.randint(0, 3 * MiB) for i in range(SRC_OBJECTS)}
    for name, size in sizes.items():
        r = raw_request(endpoint, "PUT", obj_path(SRC, name), body=content_for(name, size))
        assert r.status == 200, r.body
    return sizes


def verify(srv: LocalServer, ledger: Ledger, src: dict[str, int]) -> None:
    """Everything listed is complete and allowed; everything acknowledged is there."""
    session = requests.Session()

    def read(bucket: str, name: str) -> bytes:
        r = session.get(srv.endpoint + obj_path(bucket, name), timeout=60)
        assert r.status_code == 200, r.text
        assert r.headers["Ais-Checksum-Value"] == xxh64_hex(r.content)
        return r.content

    for bucket in BUCKETS:
        listed = assert_bucket_consistent(srv.endpoint, srv.mountpaths, bucket)
        keys = {k[1] for k in ledger.allowed if k[0] == bucket}
        assert listed <= keys, f"objects nobody wrote: {listed - keys}"
        for name in keys:
            allowed = ledger.allowed[(bucket, name)]
            if name not in listed:
                assert ABSENT in allowed, (
                    f"{bucket}/{name}: acknowledged write lost (allowed {allowed})"
                )
                assert (
                    session.head(srv.endpoint + obj_path(bucket, name), timeout=10).status_code
                    == 404
                )
                ledger.allowed[(bucket, name)] = {ABSENT}
                continue
            data = read(bucket, name)
            found = [o for o in allowed if o is not None and outcome_bytes(o) == data]
            assert found, f"{bucket}/{name}: {len(data)} bytes, none of {allowed}"
            ledger.allowed[(bucket, name)] = {found[0]}  # settled: the next round starts here

    # src is never written; a copy is complete once acknowledged and never partial before.
    assert assert_bucket_consistent(srv.endpoint, srv.mountpaths, SRC) == set(src)
    copied = assert_bucket_consistent(srv.endpoint, srv.mountpaths, COPY)
    assert copied <= set(src), f"copied objects src never had: {copied - set(src)}"
    if ledger.copied:
        assert copied == set(src), f"acknowledged copy lost {sorted(set(src) - copied)[:5]}"
    for name in copied:
        assert read(COPY, name) == content_for(name, src[name]), f"{COPY}/{name}: bad bytes"

    # The inventory is there and whole once acknowledged; in flight it is absent or whole.
    bucket = srv.client().bucket(SRC)
    shown = bucket.show_inventory()
    if ledger.inventory_acked:
        assert shown, "acknowledged inventory lost"
    if shown:
        (info,) = shown.values()
        assert info.name == INVENTORY and info.ntotal == len(src)
        names = [e.name for e in bucket.list_all_objects(inventory_name=INVENTORY)]
        assert names == sorted(src)


def leftovers(mps: list[Path]) -> list[str]:
    return [p for p in work_files(mps) if p.endswith(".tmp") or Path(p).name.startswith("chunks-")]


def all_alive(threads: list[threading.Thread]) -> bool:
    return all(t.is_alive() for t in threads)


@pytest.fixture
def crash_srv(tmp_path: Path) -> Iterator[LocalServer]:
    srv = LocalServer(mountpaths=[tmp_path / f"mp{i}" for i in range(4)]).start()
    yield srv
    srv.stop()


def crash_round(srv: LocalServer, ledger: Ledger, rnd: int) -> bool:
    """Writers and jobs run until a random number of writes are acknowledged; then SIGKILL and
    restart.

    Returns whether the kill left work for recovery (temp files or chunk markers).
    """
    target = ledger.acks + random.Random(rnd).randint(5, 40)
    writers: list[Writer] = [Writer(i, rnd, srv.endpoint, ledger) for i in range(WRITERS)]
    jobs: list[JobLoop] = [
        cls(cls.__name__, rnd, srv.endpoint, ledger) for cls in (Rechunker, Copier, Inventorist)
    ]
    threads: list[Writer | JobLoop] = [*writers, *jobs]
    for t in threads:
        t.start()

    def enough() -> bool:  # the first round also waits for one finished job of each kind
        return ledger.acks >= target and (rnd > 0 or all(j.jobs for j in jobs))

    wait_until(lambda: enough() or not all_alive(threads), 60, "acknowledged writes and jobs")
    srv.kill()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive()
        assert t.error is None, f"{t.name}: {t.error!r}"
    assert ledger.acks >= target, "writers stopped before the kill"
    interrupted = bool(leftovers(srv.mountpaths))
    srv.restart()
    assert not work_files(srv.mountpaths), "recovery runs before the server listens"
    return interrupted


def test_sigkill_mid_writes_then_restart(crash_srv: LocalServer) -> None:
    srv = crash_srv
    create_bucket(srv.endpoint, "plain")
    create_bucket(
        srv.endpoint, "chunked", {"chunks": {"objsize_limit": "1MiB", "chunk_size": "256KiB"}}
    )
    create_bucket(srv.endpoint, COPY)
    src = fill_src(srv.endpoint)
    ledger = Ledger()
    interrupted = 0
    for rnd in range(ROUNDS):
        interrupted += crash_round(srv, ledger, rnd)
        verify(srv, ledger, src)
    # The kill must have interrupted real work, or this test proved nothing.
    assert interrupted >= 1, "no round was killed mid-write"
    assert sum(s != {ABSENT} for s in ledger.allowed.values()) > 10
    kinds = ("put", "delete", "multipart", "append", "rename")
    kinds += ("rechunk", "copy-bck", "create-inventory")
    assert all(ledger.done[k] for k in kinds), f"not every kind of work was done: {ledger.done}"
    assert ledger.copied


def test_chunked_restart_keeps_layout(crash_srv: LocalServer) -> None:
    """After a crash, chunked objects still read right and report their chunks."""
    srv = crash_srv
    create_bucket(srv.endpoint, "b")
    set_bprops(srv.endpoint, "b", {"chunks": {"objsize_limit": "1MiB", "chunk_size": "256KiB"}})
    data = content_for("x", 5 * MiB + 1)
    assert raw_request(srv.endpoint, "PUT", obj_path("b", "x"), body=data).status == 200
    srv.kill()
    srv.restart()
    r = raw_request(srv.endpoint, "HEAD", obj_path("b", "x") + "?props=chunked")
    assert r.header("Ais-Chunks-Count") == "21" and r.header("Ais-Chunks-Max-Chunk-Size") == str(
        256 * KiB
    )
    assert raw_request(srv.endpoint, "GET", obj_path("b", "x")).body == data
    assert list_names(srv.endpoint, "b") == {"x"}
    assert_bucket_consistent(srv.endpoint, srv.mountpaths, "b")


def test_listing_after_restarts_shows_each_object_as_it_is(crash_srv: LocalServer) -> None:
    """A stopping server saves the object headers it knows (`<mp>/.ais.headers`) for its next
    start, which takes them and removes the file: the first listing then reads no object file
    whose header was saved, yet never shows a saved header of an object that changed since -
    neither by the running server nor by a file swapped in while it was down."""
    srv = crash_srv
    create_bucket(srv.endpoint, "snap")

    def put(name: str, body: bytes) -> None:
        assert raw_request(srv.endpoint, "PUT", obj_path("snap", name), body=body).status == 200

    def sizes() -> dict[str, int]:
        return {e["name"]: int(e["size"]) for e in list_entries(srv.endpoint, "snap")}

    for name, size in (("a", 1), ("b", 2), ("c", 3), ("d/x", 4)):
        put(name, b"x" * size)

    assert sizes() == {"a": 1, "b": 2, "c": 3, "d/x": 4}
    srv.stop(keep_data=True)
    assert any((mp / ".ais.headers").is_file() for mp in srv.mountpaths)
    # While it is down, c's header is damaged in place: the server never writes a file in place,
    # so only the saved header can list it now.
    with open(object_files(srv.mountpaths, "snap")["c"], "r+b") as f:
        f.write(b"garbage!")
    srv.start()
    assert sizes() == {"a": 1, "b": 2, "c": 3, "d/x": 4}
    assert not any((mp / ".ais.headers").exists() for mp in srv.mountpaths)  # one start only

    # Changed by the running server, then by hand while it is down: b's file replaced by a copy
    # of e's (a new inode in a changed directory: b's saved header must not be taken for it).
    put("a", b"y" * 10)
    put("c", b"y" * 6)  # the damaged one rewritten
    assert raw_request(srv.endpoint, "DELETE", obj_path("snap", "d/x")).status == 200
    put("e", b"z" * 5)
    want = {"a": 10, "b": 2, "c": 6, "e": 5}
    assert sizes() == want
    srv.stop(keep_data=True)
    files = object_files(srv.mountpaths, "snap")
    shutil.copyfile(files["e"], files["b"].with_name("swap.tmp"))
    files["b"].with_name("swap.tmp").replace(files["b"])
    srv.start()
    want["b"] = 5
    assert sizes() == want
    srv.restart()
    assert sizes() == want
    srv.kill()  # nothing saved: every header read from its file
    srv.start()
    assert sizes() == want


def test_headers_saved_while_running_serve_the_first_listing_after_a_crash(tmp_path: Path) -> None:
    """The server saves the headers it knows every --header-snapshot-interval while it runs (a
    directory changed within the last 2 s waits for the next round), so the first listing
    after a SIGKILL takes them too - but never one of an object changed after the save."""
    srv = LocalServer(
        mountpaths=[tmp_path / f"mp{i}" for i in range(2)],
        args=["--header-snapshot-interval", "200"],
    ).start()
    try:
        create_bucket(srv.endpoint, "snap")
        names = [f"d{i % 7}/obj-{i:04d}" for i in range(300)]
        for name in names:
            assert raw_request(srv.endpoint, "PUT", obj_path("snap", name), body=b"x").status == 200
        time.sleep(4)  # past the 2 s settle and a few rounds
        assert any((mp / ".ais.headers").is_file() for mp in srv.mountpaths)
        # Changed after the save: its saved header must not be taken for it.
        changed = raw_request(srv.endpoint, "PUT", obj_path("snap", names[0]), body=b"yy")
        assert changed.status == 200
        srv.kill()
        srv.start()
        sizes = {e["name"]: int(e["size"]) for e in list_entries(srv.endpoint, "snap")}
        assert sizes == {name: 2 if name == names[0] else 1 for name in names}
        # All but those of the changed directory (d0/ on the changed object's mountpath).
        log = raw_request(srv.endpoint, "GET", "/v1/daemon?what=log").body.decode(errors="replace")
        taken = re.search(r"(\d+) object headers of the last run taken", log)
        in_d0 = sum(name.startswith("d0/") for name in names)
        assert taken and int(taken.group(1)) >= len(names) - in_d0, log[-2000:]
    finally:
        srv.stop()


# ---- process behaviour --------------------------------------------------------------------------


def start_binary(mp: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [str(find_server_binary()), "--host", "127.0.0.1", "--port", "0", "--mountpath", str(mp)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until the server listens (or exits)
    assert "listening on http://" in line, line
    return proc, line.split("listening on ")[1].strip()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_cleanly(tmp_path: Path, sig: signal.Signals) -> None:
    proc, ep = start_binary(tmp_path)
    try:
        create_bucket(ep, "b")
        assert raw_request(ep, "PUT", obj_path("b", "kept"), body=b"kept").status == 200
        u = urlsplit(ep)
        idle = socket.create_connection((u.hostname, u.port))  # an idle keep-alive connection
        half = socket.create_connection((u.hostname, u.port))  # a PUT stuck mid-body
        head = (
            f"PUT {obj_path('b', 'half')} HTTP/1.1\r\nHost: x\r\nContent-Length: {8 * MiB}\r\n\r\n"
        )
        half.sendall(head.encode())
        half.sendall(b"h" * MiB)
        wait_until(lambda: work_files([tmp_path]), 5, "the stuck PUT's temp file")
        t0 = time.monotonic()
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - t0 < 5, "shutdown waited for open connections"
        assert proc.stdout is not None and "stopped" in proc.stdout.read()
        idle.close()
        half.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    proc, ep = start_binary(
        tmp_path
    )  # same mountpath: committed data is there, the half PUT is not
    try:
        assert raw_request(ep, "GET", obj_path("b", "kept")).body == b"kept"
        assert list_names(ep, "b") == {"kept"}
        assert not work_files([tmp_path])
        assert_bucket_consistent(ep, [tmp_path], "b")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0


FLAGS = ["--mountpath", "--port", "--host", "--threads", "--fsync", "--help"]


@pytest.mark.parametrize("how", ["binary", "console-script"])
def test_help_documents_every_flag(how: str) -> None:
    if how == "binary":
        cmd = [str(find_server_binary()), "--help"]
    else:
        script = shutil.which("aistore-server")
        if script is None:
            pytest.skip("console script aistore-server is not on PATH")
        cmd = [script, "--help"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    for flag in FLAGS:
        lines = [ln for ln in out.stdout.splitlines() if ln.strip().startswith(flag)]
        assert lines, f"{flag} is not documented:\n{out.stdout}"
        assert len(lines[0].split(None, 2)) >= 2, f"{flag} has no description"  # flag [ARG] text


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--bogus"], "Usage"),
        (["--mountpath", "/tmp", "--port", "70000"], "--port"),
        (["--mountpath", "/tmp", "--threads", "0"], "--threads"),
        ([], "--mountpath"),
        (["--mountpath", "relative/dir"], "absolute"),
        (["--mountpath", "/tmp", "extra"], "unexpected argument"),
    ],
)
def test_bad_flags_exit_2(args: list[str], needle: str) -> None:
    out = subprocess.run(
        [str(find_server_binary()), *args], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 2
    assert needle in out.stderr
