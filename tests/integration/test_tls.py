"""HTTPS: the real server with a test CA's certificate (one server per mode in this module), our
client over it (objects, listing, GetBatch, parallel download, datasets), certificate checks,
mutual TLS, and connections that are not TLS at all.
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import ssl
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from tenacity import Retrying, stop_after_attempt
from urllib3.util.retry import Retry

from aistore._internal.tls_files import TlsFiles, make_ca, make_tls_files
from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.retry_config import RetryConfig
from aistore.server import LocalServer

MIB = 1 << 20


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA that signed nothing the servers here present."""
    return make_ca(tmp_path_factory.mktemp("other-ca"), "other")[0]


@pytest.fixture(scope="module")
def https_server(tls_files: TlsFiles) -> Iterator[LocalServer]:
    with LocalServer(
        num_mountpaths=2,
        threads=2,
        tls_cert=tls_files.server_cert,
        tls_key=tls_files.server_key,
        ca_cert=tls_files.ca_cert,
    ) as srv:
        yield srv


@pytest.fixture(scope="module")
def mtls_server() -> Iterator[LocalServer]:
    """Mutual TLS, with the certificates LocalServer makes for itself."""
    with LocalServer(num_mountpaths=1, threads=2, mtls=True) as srv:
        yield srv


@pytest.fixture
def tls_bucket(https_server: LocalServer) -> Iterator[Bucket]:
    b = https_server.client().bucket(f"tls-{uuid.uuid4().hex[:8]}").create()
    yield b
    b.delete(missing_ok=True)


def _no_retry() -> RetryConfig:
    """One attempt: a certificate that fails verification fails every time."""
    return RetryConfig(
        http_retry=Retry(total=0), network_retry=Retrying(stop=stop_after_attempt(1), reraise=True)
    )


def _net_http_config(srv: LocalServer) -> dict[str, object]:
    """The cluster config's net.http, as the CLI reads it."""
    reply = requests.get(
        f"{srv.endpoint}/v1/daemon",
        params={"what": "config"},
        verify=srv.ca_cert,
        cert=srv.client_cert,
        timeout=10,
    )
    reply.raise_for_status()
    conf: dict[str, object] = reply.json()["net"]["http"]
    return conf


def test_endpoint_and_config_show_https(https_server: LocalServer, tls_files: TlsFiles) -> None:
    assert https_server.endpoint.startswith("https://127.0.0.1:")
    assert "TLS: object bytes are read and encrypted in user space" in https_server.output
    http_conf = _net_http_config(https_server)
    assert http_conf["use_https"] is True
    assert http_conf["server_crt"] == str(tls_files.server_cert)
    assert http_conf["server_key"] == str(tls_files.server_key)
    assert http_conf["client_auth_tls"] == 0


def test_objects_and_listing(tls_bucket: Bucket) -> None:
    small = os.urandom(10 << 10)
    large = os.urandom(5 * MIB + 123)  # past the inline reply size: the file path over TLS
    tls_bucket.object("small").get_writer().put_content(small)
    tls_bucket.object("dir/large").get_writer().put_content(large)
    assert tls_bucket.object("small").get_reader().read_all() == small
    assert tls_bucket.object("dir/large").get_reader().read_all() == large
    assert tls_bucket.object("small").head().size == len(small)
    names = [e.name for e in tls_bucket.list_all_objects()]
    assert sorted(names) == ["dir/large", "small"]
    tls_bucket.object("small").delete()
    assert [e.name for e in tls_bucket.list_all_objects()] == ["dir/large"]


def test_keep_alive_across_large_bodies(https_server: LocalServer, tls_bucket: Bucket) -> None:
    """Large bodies (sealed outside the TLS engine) and small ones (through it) alternate on one
    connection: each reply arrives whole and the connection stays usable."""
    large = os.urandom(2 * MIB + 1)
    small = os.urandom(100)
    tls_bucket.object("ka-large").get_writer().put_content(large)
    tls_bucket.object("ka-small").get_writer().put_content(small)
    assert https_server.ca_cert is not None
    ctx = ssl.create_default_context(cafile=str(https_server.ca_cert))
    host, port = "127.0.0.1", _port(https_server)
    conn = http.client.HTTPSConnection(host, port, context=ctx, timeout=30)
    try:
        first_socket = None
        for _ in range(3):
            for name, data in (("ka-large", large), ("ka-small", small)):
                conn.request("GET", f"/v1/objects/{tls_bucket.name}/{name}")
                reply = conn.getresponse()
                assert reply.status == 200 and reply.read() == data
                first_socket = first_socket or conn.sock
                assert conn.sock is first_socket  # not closed and reopened
    finally:
        conn.close()


def test_range_reads(tls_bucket: Bucket) -> None:
    data = os.urandom(3 * MIB)
    obj = tls_bucket.object("ranged")
    obj.get_writer().put_content(data)
    reader = obj.get_reader(byte_range="bytes=100000-2500000")
    assert reader.read_all() == data[100000:2500001]


def test_parallel_download(tls_bucket: Bucket, tmp_path: Path) -> None:
    data = os.urandom(9 * MIB + 7)
    obj = tls_bucket.object("parallel")
    obj.get_writer().put_content(data)
    reader = obj.get_reader(num_workers=4, chunk_size=MIB)
    with reader.read_all() as buf:
        assert buf.buf == data
    out = tmp_path / "out"
    assert reader.download_to(out) == len(data) and out.read_bytes() == data


@pytest.mark.parametrize("streaming", [True, False])
def test_getbatch(https_server: LocalServer, tls_bucket: Bucket, streaming: bool) -> None:
    contents = {f"o{i}": os.urandom(1000 * i + 1) for i in range(6)}
    contents["big"] = os.urandom(3 * MIB + 5)  # records sealed a chunk at a time
    for name, data in contents.items():
        tls_bucket.object(name).get_writer().put_content(data)
    batch = https_server.client().batch(streaming_get=streaming)
    for name in contents:
        batch.add(name, bck=tls_bucket.name, provider="ais")
    got = [data for _, data in batch.get()]
    assert got == list(contents.values())


def test_pytorch_datasets(https_server: LocalServer, tls_bucket: Bucket) -> None:
    pytest.importorskip("torch")
    from aistore.pytorch import AISIterDataset, AISMapDataset

    contents = {f"s{i:02}": os.urandom(100 + i) for i in range(8)}
    for name, data in contents.items():
        tls_bucket.object(name).get_writer().put_content(data)
    bucket = https_server.client().bucket(tls_bucket.name)
    mapped = AISMapDataset(bucket)
    assert sorted(mapped[i] for i in range(len(mapped))) == sorted(contents.items())
    assert sorted(data for _, data in AISIterDataset(bucket)) == sorted(contents.values())


def test_ca_from_environment(
    https_server: LocalServer, tls_files: TlsFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIS_CLIENT_CA", str(tls_files.ca_cert))
    assert Client(https_server.endpoint).cluster().is_ready()


def test_wrong_ca_is_an_ssl_error(https_server: LocalServer, other_ca: Path) -> None:
    client = Client(https_server.endpoint, ca_cert=str(other_ca), retry_config=_no_retry())
    with pytest.raises(requests.exceptions.SSLError, match="CERTIFICATE_VERIFY_FAILED"):
        client.cluster().get_info()
    # System CAs do not know the test CA either.
    with pytest.raises(requests.exceptions.SSLError):
        Client(https_server.endpoint, retry_config=_no_retry()).cluster().get_info()


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")
def test_skip_verify(https_server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.warns(UserWarning, match="insecure"):
        client = Client(https_server.endpoint, skip_verify=True)
    assert client.cluster().is_ready()
    monkeypatch.setenv("AIS_SKIP_VERIFY_CRT", "true")
    with pytest.warns(UserWarning, match="insecure"):
        client = Client(https_server.endpoint)
    assert client.cluster().is_ready()


def test_curl_with_cacert(
    https_server: LocalServer, tls_bucket: Bucket, tls_files: TlsFiles
) -> None:
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("no curl")
    data = os.urandom(200 << 10)
    tls_bucket.object("c").get_writer().put_content(data)
    url = f"{https_server.endpoint}/v1/objects/{tls_bucket.name}/c"
    out = subprocess.run(
        [curl, "-sSf", "--cacert", str(tls_files.ca_cert), url], capture_output=True, timeout=30
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == data
    # Without the CA, curl refuses the server (exit 60: certificate problem).
    out = subprocess.run([curl, "-sS", url], capture_output=True, timeout=30)
    assert out.returncode == 60


def _port(srv: LocalServer) -> int:
    return int(srv.endpoint.rsplit(":", 1)[1])


def test_plain_http_to_the_https_port(https_server: LocalServer) -> None:
    url = https_server.endpoint.replace("https://", "http://") + "/v1/health"
    reply = requests.get(url, timeout=10)
    assert reply.status_code == 400
    assert "HTTP request to an HTTPS server" in reply.json()["message"]
    assert https_server.client().cluster().is_ready()


def test_broken_handshakes_leave_the_server_serving(https_server: LocalServer) -> None:
    port = _port(https_server)
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    for payload in (
        b"",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
        os.urandom(4096),
        b"DELETE / HTTP/1.1\r\n\r\n",
    ):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            s.settimeout(10)
            while s.recv(65536):  # the server closes: no hang
                pass
    # A client that completes the handshake and leaves without a word, one that leaves in the
    # middle of a request, and one that leaves in the middle of a large reply.
    client = https_server.client()
    bucket = client.bucket(f"leave-{uuid.uuid4().hex[:8]}").create()
    bucket.object("large").get_writer().put_content(os.urandom(8 * MIB))
    get_large = f"GET /v1/objects/{bucket.name}/large HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        ctx.wrap_socket(raw) as s,
    ):
        s.sendall(get_large)
        assert s.recv(4096).startswith(b"HTTP/1.1 200")
    for tail in (b"", b"GET /v1/health HTTP/1.1\r\nHost: x\r\n"):
        with (
            socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
            ctx.wrap_socket(raw) as s,
        ):
            if tail:
                s.sendall(tail)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not https_server.client().cluster().is_ready():
        time.sleep(0.1)
    assert https_server.client().cluster().is_ready()
    assert https_server.running


def test_mtls_requires_a_client_certificate(mtls_server: LocalServer) -> None:
    assert mtls_server.client_cert is not None and mtls_server.ca_cert is not None
    conf = _net_http_config(mtls_server)
    assert conf["client_auth_tls"] == 4 and conf["client_ca_tls"] == mtls_server.ca_cert
    # Without a certificate the server ends the handshake (under TLS 1.3, the client learns it
    # on its first read): an SSL error or a reset connection, never a reply.
    bare = Client(mtls_server.endpoint, ca_cert=mtls_server.ca_cert, retry_config=_no_retry())
    with pytest.raises(requests.exceptions.ConnectionError):
        bare.cluster().get_info()
    assert mtls_server.running


def test_mtls_with_a_certificate(mtls_server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    client = mtls_server.client()
    b = client.bucket(f"m-{uuid.uuid4().hex[:8]}").create()
    try:
        b.object("x").get_writer().put_content(b"mutual")
        assert b.object("x").get_reader().read_all() == b"mutual"
    finally:
        b.delete()
    cert, key = mtls_server.client_cert or ("", "")
    monkeypatch.setenv("AIS_CLIENT_CA", mtls_server.ca_cert or "")
    monkeypatch.setenv("AIS_CRT", cert)
    monkeypatch.setenv("AIS_CRT_KEY", key)
    assert Client(mtls_server.endpoint).cluster().is_ready()


def test_mtls_refuses_a_certificate_of_another_ca(
    mtls_server: LocalServer, tls_files: TlsFiles
) -> None:
    stranger = Client(
        mtls_server.endpoint,
        ca_cert=mtls_server.ca_cert,
        client_cert=(str(tls_files.client_cert), str(tls_files.client_key)),
        retry_config=_no_retry(),
    )
    with pytest.raises(requests.exceptions.ConnectionError):
        stranger.cluster().get_info()
    assert mtls_server.running


def test_connection_limit_refuses_over_tls() -> None:
    with LocalServer(num_mountpaths=1, threads=2, tls=True, args=["--max-connections", "1"]) as srv:
        ctx = ssl.create_default_context(cafile=srv.ca_cert)
        with (
            socket.create_connection(("127.0.0.1", _port(srv)), timeout=10) as raw,
            ctx.wrap_socket(raw, server_hostname="127.0.0.1"),
        ):
            deadline = time.monotonic() + 10
            reply = None
            while time.monotonic() < deadline:  # until the first connection is counted
                reply = requests.get(f"{srv.endpoint}/v1/health", verify=srv.ca_cert, timeout=10)
                if reply.status_code == 503:
                    break
                time.sleep(0.05)
            assert reply is not None and reply.status_code == 503
            assert reply.headers["Retry-After"] == "1"
            assert "too many connections" in reply.json()["message"]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not srv.client().cluster().is_ready():
            time.sleep(0.05)
        assert srv.client().cluster().is_ready()
