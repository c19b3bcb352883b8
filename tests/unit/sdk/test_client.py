"""Client settings (arguments, environment, defaults), default headers, pickling, URLs."""

from __future__ import annotations

import importlib.metadata
import json
import os
import pickle
from pathlib import Path

import pytest
from _fakes import FakeServer, Reply

from aistore import Client, __version__
from aistore._internal import config
from aistore.sdk import Bucket, Namespace
from aistore.sdk.errors import InvalidBckProvider, InvalidURLException
from aistore.sdk.provider import Provider

ENV_VARS = (
    "AIS_ENDPOINT",
    "AIS_CONNECT_TIMEOUT",
    "AIS_READ_TIMEOUT",
    "AIS_MAX_CONN_POOL",
    "AIS_AUTHN_TOKEN",
    "AIS_AUTHN_TOKEN_FILE",
    "AIS_SKIP_VERIFY",
    "AIS_SKIP_VERIFY_CRT",
    "AIS_CLIENT_CA",
    "AIS_CRT",
    "AIS_CRT_KEY",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no CLI token file


def test_version_is_the_distributions() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = Path(__file__).resolve().parents[3] / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text())["project"]
    assert __version__ == project["version"]
    # The installed distribution (the test command installs it) carries the same version.
    try:
        installed = importlib.metadata.version(project["name"])
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{project['name']} is not installed (tests run from the source tree)")
    assert installed == __version__


def test_endpoint_from_argument_or_env(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Client("http://h:8080")._request_client.base_url == "http://h:8080/v1"
    monkeypatch.setenv("AIS_ENDPOINT", "http://env-host:51080")
    assert Client()._request_client.base_url == "http://env-host:51080/v1"
    assert Client("http://arg:1")._request_client.base_url == "http://arg:1/v1"


def test_missing_endpoint_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="AIS_ENDPOINT"):
        Client()


@pytest.mark.parametrize(
    ("timeout", "env", "expected"),
    [
        (None, {}, (3.0, 20.0)),
        (None, {"AIS_CONNECT_TIMEOUT": "1.5", "AIS_READ_TIMEOUT": "60"}, (1.5, 60.0)),
        (None, {"AIS_READ_TIMEOUT": "0"}, (3.0, None)),
        (None, {"AIS_CONNECT_TIMEOUT": "0", "AIS_READ_TIMEOUT": "0"}, None),
        (0, {}, None),
        ((0, 0), {}, None),
        ((0, 7), {}, (None, 7)),
        ((2, 0), {}, (2, None)),
        (5.0, {"AIS_READ_TIMEOUT": "60"}, 5.0),
        ((1, 2), {}, (1, 2)),
    ],
)
def test_timeout_resolution(
    monkeypatch: pytest.MonkeyPatch,
    timeout: config.TimeoutArg,
    env: dict[str, str],
    expected: config.TimeoutArg,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert Client("http://h", timeout=timeout)._request_client.timeout == expected


def test_bad_timeout_env_warns_and_uses_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIS_READ_TIMEOUT", "soon")
    with pytest.warns(UserWarning, match="AIS_READ_TIMEOUT"):
        assert config.resolve_timeout(None) == (3.0, 20.0)


def test_pool_size(monkeypatch: pytest.MonkeyPatch) -> None:
    assert config.resolve_max_pool_size(None) == 10
    monkeypatch.setenv("AIS_MAX_CONN_POOL", "33")
    assert config.resolve_max_pool_size(None) == 33
    assert config.resolve_max_pool_size(4) == 4
    monkeypatch.setenv("AIS_MAX_CONN_POOL", "many")
    with pytest.warns(UserWarning):
        assert config.resolve_max_pool_size(None) == 10
    client = Client("http://h", max_pool_size=7)
    adapter = client._request_client.session_manager.session.get_adapter("http://h")
    assert adapter._pool_maxsize == 7  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", ["1", "t", "TRUE", "y", "yes", " On "])
def test_skip_verify_env_truthy(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("AIS_SKIP_VERIFY_CRT", value)
    assert config.resolve_skip_verify(False) is True


def test_skip_verify_env_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIS_SKIP_VERIFY", "true")
    assert config.resolve_skip_verify(False) is True
    monkeypatch.setenv("AIS_SKIP_VERIFY_CRT", "false")
    assert config.resolve_skip_verify(False) is False
    with pytest.warns(UserWarning, match="insecure"):
        client = Client("https://h", skip_verify=True)
    assert client._request_client.session_manager.session.verify is False


def test_tls_settings_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIS_CLIENT_CA", "/etc/ca.pem")
    monkeypatch.setenv("AIS_CRT", "/c.pem")
    assert config.resolve_client_cert(None) is None  # both parts are needed
    monkeypatch.setenv("AIS_CRT_KEY", "/k.pem")
    session = Client("https://h")._request_client.session_manager.session
    assert session.verify == "/etc/ca.pem"
    assert session.cert == ("/c.pem", "/k.pem")
    session = Client("https://h", ca_cert="/mine.pem", client_cert="/both.pem")
    assert session._request_client.session_manager.session.verify == "/mine.pem"
    assert session._request_client.session_manager.session.cert == "/both.pem"


def test_token_order_argument_env_named_file_default_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert config.resolve_token(None) == ""  # no default file: no token, no warning
    default = tmp_path / "config" / "ais" / "cli" / "auth.token"
    default.parent.mkdir(parents=True)
    default.write_text(json.dumps({"token": "cli-token"}))
    assert config.resolve_token(None) == "cli-token"
    named = tmp_path / "alice.token"
    named.write_text(json.dumps({"token": "file-token"}))
    monkeypatch.setenv("AIS_AUTHN_TOKEN_FILE", str(named))
    assert config.resolve_token(None) == "file-token"
    monkeypatch.setenv("AIS_AUTHN_TOKEN", "env-token")
    assert config.resolve_token(None) == "env-token"
    assert config.resolve_token("arg-token") == "arg-token"


@pytest.mark.parametrize(
    "content", [None, "not json", json.dumps(["token"]), json.dumps({"token": 7})]
)
def test_unreadable_named_token_file_warns_and_sends_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: str | None
) -> None:
    named = tmp_path / "auth.token"
    if content is not None:
        named.write_text(content)
    monkeypatch.setenv("AIS_AUTHN_TOKEN_FILE", str(named))
    with pytest.warns(UserWarning, match="token"):
        assert config.resolve_token(None) == ""


def test_default_headers_and_token(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.route = lambda req: Reply(200, b"")
    monkeypatch.setenv("AIS_AUTHN_TOKEN", "env-token")
    Client(server.url).bucket("b").head()
    Client(server.url, token="arg-token").bucket("b").head()
    first, second = server.requests
    assert first.headers["Authorization"] == "Bearer env-token"
    assert second.headers["Authorization"] == "Bearer arg-token"
    assert first.headers["User-Agent"] == f"ais/python/{__version__}"
    assert first.headers["Content-Type"] == "application/json"
    assert first.method == "HEAD" and first.path == "/v1/buckets/b"
    assert first.query == {"provider": "ais"}


def test_no_token_no_authorization(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, b"")
    client.bucket("b").head()
    assert "Authorization" not in server.requests[0].headers


def test_client_pickles_and_works_after(server: FakeServer, client: Client) -> None:
    server.route = lambda req: Reply(200, b"")
    assert client._request_client.session_manager.session  # a live session must not travel
    copy = pickle.loads(pickle.dumps(client))
    assert copy._request_client.session_manager._sessions == {}
    assert copy.retry_config.network_retry is not None
    copy.bucket("b").head()
    assert len(server.requests) == 1


def test_one_session_per_process(client: Client) -> None:
    manager = client._request_client.session_manager
    parent = manager.session
    assert manager.session is parent
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        ok = manager.session is not parent and manager.session is manager.session
        os.write(write_fd, b"1" if ok else b"0")
        os._exit(0)
    os.close(write_fd)
    os.waitpid(pid, 0)
    assert os.read(read_fd, 1) == b"1"
    os.close(read_fd)
    assert manager.session is parent


def test_factories_send_nothing(server: FakeServer, client: Client) -> None:
    bucket = client.bucket("b", provider="s3", namespace=Namespace(uuid="u", name="n"))
    assert isinstance(bucket, Bucket)
    assert bucket.provider is Provider.AMAZON
    assert bucket.qparam == {"provider": "aws", "namespace": "@u#n"}
    client.cluster()
    job = client.job("j1", "copy-bck")
    assert (job.job_id, job.job_kind) == ("j1", "copy-bck")
    assert server.requests == []
    with pytest.raises(InvalidBckProvider):
        client.bucket("b", provider="dropbox")


@pytest.mark.parametrize(
    ("url", "provider", "bucket", "name"),
    [
        ("ais://b/o", Provider.AIS, "b", "o"),
        ("s3://b/dir/o.txt", Provider.AMAZON, "b", "dir/o.txt"),
        ("gs://b/o", Provider.GOOGLE, "b", "o"),
        ("gcp://b/a/b/c", Provider.GOOGLE, "b", "a/b/c"),
    ],
)
def test_get_object_from_url(
    client: Client, url: str, provider: Provider, bucket: str, name: str
) -> None:
    obj = client.get_object_from_url(url)
    assert (obj.bucket_provider, obj.bucket_name, obj.name) == (provider, bucket, name)


@pytest.mark.parametrize("url", ["ais://b", "ais:///o", "b/o", "ais://b/"])
def test_get_object_from_url_rejects_incomplete(client: Client, url: str) -> None:
    with pytest.raises(InvalidURLException):
        client.get_object_from_url(url)
