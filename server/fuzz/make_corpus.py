"""Writes the seed corpora of the fuzz targets (server/fuzz/corpus/<target>/) from real inputs.

HTTP requests and JSON bodies are the bytes our SDK sends (official module paths, the same wire
format) to a real server, recorded by a small TCP proxy between them; object headers and inventory
parts are the files that server wrote on its mountpaths; archives come from tarfile/zipfile and the
lz4 tool. Run it from the repository root with the package installed (scripts/setup.sh):

    python3 server/fuzz/make_corpus.py

It replaces the corpus directories it writes. Keep what it writes small (< 1 MB in all).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import shutil
import socket
import subprocess
import tarfile
import threading
import warnings
import zipfile
from pathlib import Path

from aistore import Client
from aistore.server import LocalServer

CORPUS = Path(__file__).resolve().parent / "corpus"
HTTP_SPLIT = b"\x80"  # http_request's first byte: where the header read splits (here: midway)
SUFFIXES = [".tar", ".tgz", ".tar.gz", ".tar.lz4", ".zip", ""]  # shard's first byte, mod 6


def write(target: str, name: str, data: bytes) -> None:
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


class RecordingProxy:
    """Forwards TCP connections to `upstream` and keeps every byte the clients send."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.streams: list[bytearray] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            sent = bytearray()
            self.streams.append(sent)
            threading.Thread(target=self._pump, args=(client, server, sent), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, None), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket, keep: bytearray | None) -> None:
        try:
            while data := src.recv(65536):
                if keep is not None:
                    keep += data
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def requests(self) -> list[bytes]:
        """The recorded streams cut into requests (header + Content-Length body)."""
        out = []
        for stream in self.streams:
            buf = bytes(stream)
            while b"\r\n\r\n" in buf:
                head, rest = buf.split(b"\r\n\r\n", 1)
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    k, _, v = line.partition(b":")
                    if k.strip().lower() == b"content-length":
                        length = int(v.strip())
                out.append(head + b"\r\n\r\n" + rest[:length])
                buf = rest[length:]
        return out


def body_of(request: bytes) -> bytes:
    return request.split(b"\r\n\r\n", 1)[1]


def tar_bytes(
    entries: list[tuple[str, bytes]], fmt: int = tarfile.USTAR_FORMAT, mode: str = "w"
) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode, format=fmt) as tf:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1700000000
            tf.addfile(info, io.BytesIO(data))
        d = tarfile.TarInfo("dir/")
        d.type = tarfile.DIRTYPE
        tf.addfile(d)
    return buf.getvalue()


def zip_bytes(entries: list[tuple[str, bytes]], method: int) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buf, "w", compression=method) as zf:
        warnings.simplefilter("ignore")  # the twin "a.txt" is on purpose: the first one wins
        for name, data in entries:
            zf.writestr(name, data)
    return buf.getvalue()


def archives() -> dict[str, bytes]:
    small = [("a.txt", b"alpha\n"), ("dir/b.bin", bytes(range(256)) * 2), ("a.txt", b"second a")]
    long_name = [("d/" + "n" * 150 + ".txt", b"long"), ("x", b"")]
    out = {
        "ustar.tar": tar_bytes(small),
        "gnu_longname.tar": tar_bytes(long_name, tarfile.GNU_FORMAT),
        "pax.tar": tar_bytes(long_name + [("\u00e9t\u00e9.txt", b"pax")], tarfile.PAX_FORMAT),
        "small.tgz": gzip.compress(tar_bytes(small), mtime=0),
        "stored.zip": zip_bytes(small, zipfile.ZIP_STORED),
        "deflated.zip": zip_bytes(long_name, zipfile.ZIP_DEFLATED),
    }
    lz4 = subprocess.run(
        ["lz4", "-q", "-c"], input=tar_bytes(small), capture_output=True, check=True
    )
    out["small.tar.lz4"] = lz4.stdout
    return out


def server_files(srv: LocalServer, bucket: str, part: str) -> list[Path]:
    files = []
    for mp in srv.mountpaths:
        files += sorted(p for p in (Path(mp) / "ais" / bucket / part).rglob("*") if p.is_file())
    return files


def from_sdk() -> None:
    with LocalServer(num_mountpaths=2) as srv:
        host, port = srv.endpoint.split("//")[1].split(":")
        proxy = RecordingProxy((host, int(port)))
        client = Client(f"http://127.0.0.1:{proxy.port}")
        bucket = client.bucket("data").create()
        obj = bucket.object("dir/hello.txt")
        obj.get_writer().put_content(b"hello, world")
        obj.get_reader().read_all()
        obj.get_reader(byte_range="bytes=2-5").read_all()
        obj.head()
        obj.get_writer().set_custom_props({"k": "v", "etag": '"abc"'})
        bucket.object("shards/s.tar").get_writer().put_content(archives()["ustar.tar"])
        bucket.list_objects(prefix="dir/", props="name,size,checksum,atime,version")
        bucket.list_all_objects(page_size=2)
        bucket.head()
        for _ in client.batch(["dir/hello.txt"], bucket=bucket).get():
            pass
        batch = client.batch(bucket=bucket, output_format=".tgz", only_obj_name=True)
        batch.add("shards/s.tar", archpath="a.txt")
        batch.add("dir/hello.txt", start=1, length=3)
        for _ in batch.get():
            pass
        big = client.bucket("chunked").create()
        big.make_request(
            "PATCH", "set-bprops", value={"chunks": {"objsize_limit": "1KiB", "chunk_size": "1KiB"}}
        )
        big.object("big.bin").get_writer().put_content(bytes(3000))
        client.job(bucket.create_inventory(name="inv", names_per_chunk=2)).wait(timeout=30)
        obj.get_reader().read_all()
        obj.delete()

        requests = proxy.requests()
        lists = 0
        for i, req in enumerate(requests):
            line = req.split(b"\r\n", 1)[0].decode()
            write("http_request", f"sdk_{i:02d}_{line.split()[0].lower()}", HTTP_SPLIT + req)
            body = body_of(req)
            if b"/v1/ml/moss" in req.split(b"\r\n", 1)[0]:
                write("moss_request", f"sdk_{i:02d}", body)
            elif body.startswith(b"{"):
                msg = json.loads(body)
                if msg.get("action") == "list":
                    write("list_objects_msg", f"sdk_{lists:02d}", body)
                    lists += 1
                elif msg.get("action") in ("set-bprops", "create-bck"):
                    write(
                        "bucket_props",
                        f"sdk_{msg['action']}",
                        json.dumps(msg.get("value")).encode(),
                    )
        write("bucket_props", "head_bucket_props", srv_bucket_props(client))

        for name, path in [
            ("monolithic", server_files(srv, "data", "%ob")[0]),
            ("chunked", server_files(srv, "chunked", "%ob")[0]),
            ("inventory", server_files(srv, ".sys-inventory", "%ob")[0]),
        ]:
            data = path.read_bytes()
            write("object_meta", name, data[: 4096 + 64])  # the header block and the data's start
        parts = server_files(srv, ".sys-inventory", "%ch")
        write("inventory_index", "index", parts[0].read_bytes())
        for k, p in enumerate(parts[1:]):
            write("inventory_chunk", f"chunk_{k}", p.read_bytes())
        proxy.sock.close()
        srv.stop(keep_data=True)  # saves the headers it knows: a snapshot per mountpath
        for k, mp in enumerate(srv.mountpaths):
            snapshot = (Path(mp) / ".ais.headers").read_bytes()
            write("header_snapshot", f"mp{k}", snapshot[8:-8])  # the target adds magic and checksum


def srv_bucket_props(client: Client) -> bytes:
    """HEAD bucket's Ais-Bucket-Props: tools that copy props send it back as a patch."""
    return client.bucket("chunked").head()["Ais-Bucket-Props"].encode()


def main() -> None:
    for d in CORPUS.glob("*"):
        shutil.rmtree(d)
    from_sdk()

    for header in [
        "bytes=0-0",
        "bytes=2-5",
        "bytes=0-",
        "bytes=-1",
        "bytes=-10",
        "bytes=9-18446744073709551615",
        "bytes= 3-7 ",
        "bytes=0-1,4-5",
        "bytes=5-4",
    ]:
        write(
            "byte_range",
            header.replace("=", "_").replace(",", "_").replace(" ", "_"),
            header.encode(),
        )
    for name, value in {
        "objnames": {"objnames": ["a.txt", "dir/b.bin"]},
        "bash": {"template": "shard-{0000..0099..2}-{a..b}.tar"},
        "bash_two": {"template": "x-{0..3}/y-{10..12}.tar"},
        "at": {"template": "img-@0999.jpg"},
        "prefix": {"template": "train/"},
    }.items():
        write("object_selection", name, json.dumps(value).encode())
    stored = {
        "checksum_type": "xxhash",
        "validate_warm_get": False,
        "enable_read_range": False,
        "versioning": True,
        "objsize_limit": 0,
        "max_monolithic_size": 0,
        "chunk_size": 0,
        "checkpoint_every": 0,
        "created_ns": 1700000000000000000,
        "bid": 3141592653,
    }
    write("bucket_props", "stored", json.dumps(stored).encode())
    for name, data in archives().items():
        if name.endswith(".tar"):
            write("tar_scanner", name, data)
        suffix = next(s for s in SUFFIXES if s and name.endswith(s))
        write("shard", name, bytes([SUFFIXES.index(suffix)]) + data)
    write("shard", "sniffed.tar", bytes([SUFFIXES.index("")]) + archives()["ustar.tar"])
    write("shard", "chunked.zip", bytes([6 + SUFFIXES.index(".zip")]) + archives()["stored.zip"])
    total = sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file())
    print(f"corpus: {sum(1 for p in CORPUS.rglob('*') if p.is_file())} files, {total} bytes")


if __name__ == "__main__":
    main()
