"""ETL on one machine: the official ETL API against our server, whose transformers run as local
processes (`python -m aistore.etl_runtime`) instead of Kubernetes pods.

One server for the module, with three ETLs initialized once (one per webserver class and comm
type); tests that break an ETL (raise, hang, exit) make their own. Every transform is checked by
its bytes; every lifecycle step by what `list_etls`, `view` and the object reads say after it.
Wire facts: spec etl.md.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from _http_files import FileServer, file_bytes
from _util import content_for, wait_job

from aistore.sdk.bucket import Bucket
from aistore.sdk.client import Client
from aistore.sdk.errors import AISError, ErrETLAlreadyExists, ErrETLNotFound
from aistore.sdk.etl import ETLConfig
from aistore.sdk.etl.etl import Etl
from aistore.sdk.etl.webserver.base_etl_server import ETLServer
from aistore.sdk.etl.webserver.fastapi_server import FastAPIServer
from aistore.sdk.etl.webserver.flask_server import FlaskServer
from aistore.sdk.etl.webserver.http_multi_threaded_server import HTTPMultiThreadedServer
from aistore.sdk.namespace import Namespace
from aistore.server import LocalServer

pytest.importorskip(
    "fastapi", reason="the ETL webservers need the etl extra: pip install aistore-embedded[etl]"
)

# name -> (webserver class, comm type): each kind the official runtime runs.
KINDS = {
    "md5-fastapi": (FastAPIServer, "hpush"),
    "md5-flask": (FlaskServer, "hpull"),
    "md5-stdlib": (HTTPMultiThreadedServer, "hpush"),
}
# list_etls() shows Running ETLs only (the SDK filters); these show every entry.
ALL_STAGES = ["Initializing", "Running", "Aborted"]


def stages_of(client: Client) -> dict[str, str]:
    """Every ETL's stage, by name."""
    return {e.id: e.stage for e in client.cluster().list_etls(stages=ALL_STAGES)}


def _md5_class(base: type[ETLServer]) -> type[ETLServer]:
    """`base` answering md5(object) + "|" + etl_args (local: cloudpickle pickles it by value)."""

    class Md5(base):  # type: ignore[valid-type,misc]
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            assert isinstance(data, bytes)
            return hashlib.md5(data).hexdigest().encode() + b"|" + etl_args.encode()

    return Md5


def md5_of(data: bytes, args: str = "") -> bytes:
    return hashlib.md5(data).hexdigest().encode() + b"|" + args.encode()


def init(etl: Etl, cls: type[ETLServer], comm: str = "hpush", **kw: str) -> type[ETLServer]:
    return etl.init_class(comm_type=comm, **kw)(cls)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def srv() -> Iterator[LocalServer]:
    with LocalServer(num_mountpaths=2, download_allow_loopback=True) as s:
        client = s.client()
        for name, (base, comm) in KINDS.items():
            init(client.etl(name), _md5_class(base), comm)
        yield s


@pytest.fixture
def client(srv: LocalServer) -> Client:
    return srv.client()


@pytest.fixture
def src(client: Client, request: pytest.FixtureRequest) -> Bucket:
    b = client.bucket(
        f"src-{request.node.name[:40].lower().replace('_', '-').replace('[', '-').strip(']')}"
    )
    b.create(exist_ok=True)
    return b


def _transformer_pids(server_pid: int) -> list[int]:
    """The processes whose parent is the server (each ETL's runtime)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == server_pid:
            pids.append(int(d.name))
    return pids


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture(scope="module")
def files() -> Iterator[FileServer]:
    fs = FileServer()
    yield fs
    fs.stop()


# ---- init, list, view -------------------------------------------------------------------------


def test_every_kind_is_running(client: Client) -> None:
    running = {e.id: e for e in client.cluster().list_etls()}
    assert set(KINDS) <= set(running)
    for name in KINDS:
        assert running[name].stage == "Running"
        assert running[name].xaction_id.startswith("etl-")


def test_view_shows_the_init_message(client: Client) -> None:
    for name, (_, comm) in KINDS.items():
        msg = client.etl(name).view().init_msg
        assert msg.name == name
        assert msg.communication == f"{comm}://"
        assert (msg.init_timeout, msg.obj_timeout) == ("5m", "45s")  # what the SDK sent
        assert msg.runtime is not None and msg.runtime.image.startswith("aistorage/runtime_python:")


@pytest.mark.parametrize("name", list(KINDS))
def test_inline_get_transforms(client: Client, src: Bucket, name: str) -> None:
    data = content_for(name, 70_000)
    src.object("dir/obj.bin").get_writer().put_content(data)
    reader = src.object("dir/obj.bin").get_reader(etl=ETLConfig(name, args={"k": "v w"}))
    assert reader.read_all() == md5_of(data, '{"k":"v w"}')
    # No args, and a range: the whole object is transformed (AIS ignores Range with an ETL).
    assert src.object("dir/obj.bin").get_reader(etl=ETLConfig(name)).read_all() == md5_of(data)
    ranged = src.object("dir/obj.bin").get_reader(etl=ETLConfig(name), byte_range="bytes=0-9")
    assert ranged.read_all() == md5_of(data)
    # The plain GET is untouched.
    assert src.object("dir/obj.bin").get_reader().read_all() == data


def test_transform_sees_the_path_each_comm_type_sends(client: Client, src: Bucket) -> None:
    """spec §10: hpush `bucket/object`, hpull the decoded uname (FastAPI/Flask)."""
    etl = client.etl("path-echo")

    class Echo(FastAPIServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            return path.encode()

    pull = client.etl("path-echo-pull")

    class PullEcho(FlaskServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            return path.encode()

    init(etl, Echo)
    init(pull, PullEcho, "hpull")
    try:
        src.object("a b/c#d.txt").get_writer().put_content(b"x")
        got = src.object("a b/c#d.txt").get_reader(etl=ETLConfig("path-echo")).read_all()
        assert got == f"{src.name}/a b/c#d.txt".encode()
        got = src.object("a b/c#d.txt").get_reader(etl=ETLConfig("path-echo-pull")).read_all()
        assert got == f"ais/@#/{src.name}/a b/c#d.txt".encode()
    finally:
        etl.delete()
        pull.delete()


def test_hpull_reads_from_the_namespace_of_the_bucket(client: Client) -> None:
    """An hpull transformer fetches the object by its uname: a namespaced bucket's
    (`ais/@#ns/b/o`), never the global bucket of the same name."""
    name = f"etl-ns-{uuid.uuid4().hex[:8]}"
    client.bucket(name).create().object("o").get_writer().put_content(b"global")
    local = client.bucket(name, namespace=Namespace(name="etlns")).create()
    local.object("o").get_writer().put_content(b"namespaced")
    for etl in KINDS:  # hpush and hpull alike
        got = local.object("o").get_reader(etl=ETLConfig(etl)).read_all()
        assert got == md5_of(b"namespaced"), etl


def test_counters_count_inline_transforms(client: Client, src: Bucket) -> None:
    before = {e.id: e.obj_count for e in client.cluster().list_etls()}["md5-stdlib"]
    src.object("o").get_writer().put_content(b"abc")
    for _ in range(3):
        src.object("o").get_reader(etl=ETLConfig("md5-stdlib")).read_all()
    after = {e.id: e.obj_count for e in client.cluster().list_etls()}["md5-stdlib"]
    assert after == before + 3


def test_pipeline_applies_each_stage(client: Client, src: Bucket) -> None:
    """etl_a >> etl_b: the first transformer PUTs its output to the next (Ais-Node-Url)."""
    data = b"pipeline input"
    src.object("p").get_writer().put_content(data)
    pipeline = client.etl("md5-fastapi") >> client.etl("md5-stdlib")
    got = src.object("p").get_reader(etl=ETLConfig(pipeline)).read_all()
    assert got == md5_of(md5_of(data))


def test_duplicate_init_is_refused(client: Client) -> None:
    with pytest.raises(ErrETLAlreadyExists):
        init(client.etl("md5-stdlib"), _md5_class(HTTPMultiThreadedServer))
    assert {e.id: e.stage for e in client.cluster().list_etls()}["md5-stdlib"] == "Running"


def test_other_images_are_refused(client: Client) -> None:
    with pytest.raises(AISError) as err:
        client.etl("md5-image").init(image="aistorage/transformer_md5:latest")
    assert err.value.status_code == 501
    assert (
        "local processes" in err.value.message and "aistorage/runtime_python" in err.value.message
    )
    assert "md5-image" not in stages_of(client)


def test_bad_init_messages_are_refused(client: Client, srv: LocalServer) -> None:
    cases = [
        ({"name": "ab", "runtime": {"image": "aistorage/runtime_python:3.11"}}, 400, "too short"),
        (
            {"name": "good-name", "communication": "hpush", "runtime": {"image": "x"}},
            400,
            "comm-type",
        ),
        ({"name": "good-name", "runtime": {}}, 400, "runtime.image"),
        (
            {
                "name": "good-name",
                "init_timeout": "soon",
                "runtime": {"image": "aistorage/runtime_python:3.11"},
            },
            400,
            "duration",
        ),
        (
            {
                "name": "good-name",
                "bogus": 1,
                "runtime": {"image": "aistorage/runtime_python:3.11"},
            },
            400,
            "bogus",
        ),
        (
            {
                "name": "good-name",
                "runtime": {"image": "aistorage/runtime_python:3.11", "command": ["sh"]},
            },
            501,
            "command",
        ),
        (
            {
                "name": "good-name",
                "communication": "ws://",
                "runtime": {"image": "aistorage/runtime_python:3.11"},
            },
            400,
            "direct put",
        ),
    ]
    for body, status, words in cases:
        r = requests.put(f"{srv.endpoint}/v1/etl", json=body, timeout=10)
        assert r.status_code == status, (body, r.text)
        assert words in r.json()["message"], (body, r.text)


# ---- offline ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("count", "workers"), [(1000, 0), (60, 3)])
def test_bucket_transform(
    client: Client, srv: LocalServer, src: Bucket, count: int, workers: int
) -> None:
    names = [f"img/{i:04d}.jpg" for i in range(count)] + ["other/skip.jpg"]
    contents = {n: content_for(n, 100 + i) for i, n in enumerate(names)}
    for n, d in contents.items():
        src.object(n).get_writer().put_content(d)
    dst = client.bucket(f"{src.name}-out")
    job = src.transform(
        "md5-fastapi",
        to_bck=dst,
        prefix_filter="img/",
        prepend="md5/",
        ext={"jpg": "txt"},
        num_workers=workers,
    )
    status = wait_job(srv.endpoint, job, timeout=120)
    assert status["err"] == "" and not status["aborted"]
    out = {e.name for e in dst.list_all_objects()}
    assert out == {f"md5/img/{i:04d}.txt" for i in range(count)}
    for i in (0, count // 2, count - 1):
        n = f"img/{i:04d}.jpg"
        assert dst.object(f"md5/img/{i:04d}.txt").get_reader().read_all() == md5_of(contents[n])


def test_bucket_transform_dry_run_writes_nothing(client: Client, src: Bucket) -> None:
    src.object("a").get_writer().put_content(b"a")
    dst = client.bucket(f"{src.name}-dry")
    job = src.transform("md5-stdlib", to_bck=dst, dry_run=True)
    client.job(job).wait(timeout=60)
    with pytest.raises(AISError):
        dst.head()


def test_object_group_transform_records_missing_objects(client: Client, src: Bucket) -> None:
    for n in ("x1", "x2"):
        src.object(n).get_writer().put_content(n.encode())
    dst = client.bucket(f"{src.name}-grp")
    dst.create(exist_ok=True)
    group = src.objects(obj_names=["x1", "missing", "x2"])
    job = group.transform(to_bck=dst, etl_name="md5-flask", continue_on_error=True)
    client.job(job).wait(timeout=60)
    assert {e.name for e in dst.list_all_objects()} == {"x1", "x2"}
    assert dst.object("x2").get_reader().read_all() == md5_of(b"x2")
    errors = client.etl("md5-flask").view(job_id=job).obj_errors or []
    assert [(e.obj_name, e.ecode) for e in errors] == [(f"ais://{src.name}/missing", 404)]
    assert errors[0].msg == "object not found"


def test_transform_needs_a_running_etl(client: Client, src: Bucket) -> None:
    with pytest.raises(ErrETLNotFound):
        src.transform("no-such-etl", to_bck=client.bucket("anywhere"))


def test_single_object_copy_transforms(client: Client, src: Bucket) -> None:
    data = content_for("copy-src", 300_000)
    src.object("copy/src.bin").get_writer().put_content(data)
    dst = client.bucket(f"{src.name}-cp")
    dst.create(exist_ok=True)
    src.object("copy/src.bin").copy(
        dst.object("copied.md5"), etl=ETLConfig("md5-stdlib", args="cp")
    )
    assert dst.object("copied.md5").get_reader().read_all() == md5_of(data, "cp")
    assert src.object("copy/src.bin").get_reader().read_all() == data


# ---- faults -----------------------------------------------------------------------------------


def test_a_transform_that_raises_is_an_error_and_recorded(
    client: Client, srv: LocalServer, src: Bucket
) -> None:
    etl = client.etl("raises-etl")

    class Raises(FastAPIServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            raise ValueError(f"cannot decode {path}")

    init(etl, Raises)
    try:
        src.object("bad.jpg").get_writer().put_content(b"not a jpeg")
        # The transformer's 500, as AIS passes it on (which the SDK retries, as it retries any 500).
        r = requests.get(
            f"{srv.endpoint}/v1/objects/{src.name}/bad.jpg",
            params={"etl_name": "raises-etl"},
            timeout=30,
        )
        assert r.status_code == 500
        assert "ETL error" in r.json()["message"] and "cannot decode" in r.json()["message"]
        errors = etl.view().obj_errors or []
        assert [e.obj_name for e in errors] == [f"ais://{src.name}/bad.jpg"]
        assert {e.stage for e in client.cluster().list_etls() if e.id == "raises-etl"} == {
            "Running"
        }
    finally:
        etl.delete()


def test_a_transform_that_hangs_times_out(client: Client, srv: LocalServer, src: Bucket) -> None:
    etl = client.etl("hangs-etl")

    class Hangs(HTTPMultiThreadedServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            time.sleep(60)
            return b""

    init(etl, Hangs, obj_timeout="2s")
    try:
        src.object("slow").get_writer().put_content(b"x")
        t0 = time.monotonic()
        r = requests.get(
            f"{srv.endpoint}/v1/objects/{src.name}/slow",
            params={"etl_name": "hangs-etl"},
            timeout=30,
        )
        assert 1.5 < time.monotonic() - t0 < 10
        assert r.status_code == 500 and "obj_timeout" in r.json()["message"]
    finally:
        etl.delete()


def test_a_transformer_that_exits_is_aborted_with_its_logs(client: Client, src: Bucket) -> None:
    etl = client.etl("exits-etl")

    class Exits(HTTPMultiThreadedServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            print("about to exit", flush=True)
            os._exit(3)

    init(etl, Exits)
    src.object("boom").get_writer().put_content(b"x")
    with pytest.raises(AISError):
        src.object("boom").get_reader(etl=ETLConfig("exits-etl")).read_all()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        stages = stages_of(client)
        if stages["exits-etl"] == "Aborted":
            break
        time.sleep(0.1)
    assert stages["exits-etl"] == "Aborted"
    assert "about to exit" in etl.logs()[0].logs
    with pytest.raises(ErrETLNotFound):
        src.object("boom").get_reader(etl=ETLConfig("exits-etl")).read_all()
    etl.delete()
    assert "exits-etl" not in stages_of(client)


def test_an_init_that_fails_says_why(client: Client) -> None:
    etl = client.etl("ctor-fails")

    class Fails(HTTPMultiThreadedServer):
        def __init__(self) -> None:
            raise RuntimeError("no model weights found")

        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            return b""

    with pytest.raises(AISError) as err:
        init(etl, Fails)
    assert "failed to start" in err.value.message and "no model weights found" in err.value.message
    assert stages_of(client)["ctor-fails"] == "Aborted"
    etl.delete()


# ---- lifecycle ----------------------------------------------------------------------------------


def test_stop_start_delete(client: Client, src: Bucket) -> None:
    etl = client.etl("cycle-etl")
    init(etl, _md5_class(HTTPMultiThreadedServer))
    src.object("c").get_writer().put_content(b"c")
    first = {e.id: e.xaction_id for e in client.cluster().list_etls()}["cycle-etl"]
    etl.stop()
    stages = stages_of(client)
    assert stages["cycle-etl"] == "Aborted"
    assert "cycle-etl" not in {
        e.id for e in client.cluster().list_etls()
    }  # Running only, by default
    with pytest.raises(ErrETLNotFound):
        src.object("c").get_reader(etl=ETLConfig("cycle-etl")).read_all()
    etl.stop()  # a second stop changes nothing
    etl.start()
    again = {e.id: e.xaction_id for e in client.cluster().list_etls()}["cycle-etl"]
    assert again != first
    assert src.object("c").get_reader(etl=ETLConfig("cycle-etl")).read_all() == md5_of(b"c")
    with pytest.raises(AISError) as err:
        etl.start()  # only from Aborted
    assert err.value.status_code == 400
    etl.delete()
    with pytest.raises(ErrETLNotFound):
        etl.view()


def test_health_metrics_logs(client: Client, srv: LocalServer) -> None:
    base = f"{srv.endpoint}/v1/etl/md5-stdlib"
    health = requests.get(f"{base}/health", timeout=10).json()
    assert [h["health_status"] for h in health] == ["Running"]
    metrics = requests.get(f"{base}/metrics", timeout=10).json()
    assert metrics[0]["mem"] > 1 << 20 and metrics[0]["cpu"] >= 0
    tid = health[0]["target_id"]
    assert client.etl("md5-stdlib").logs(target_id=tid)[0].target_id == tid
    assert requests.get(f"{base}/logs/nobody", timeout=10).status_code == 400
    assert requests.get(f"{base}/whatever", timeout=10).status_code == 400


def test_transformer_reads_need_the_secret(srv: LocalServer, src: Bucket) -> None:
    src.object("s").get_writer().put_content(b"secret data")
    url = f"{srv.endpoint}/v1/etl/_object/md5-flask/wrongsecret/ais%2F@%23%2F{src.name}%2Fs"
    r = requests.get(url, timeout=10)
    assert r.status_code == 400 and "unrecognized request source" in r.text


# ---- the server's side: stopping, and who may init --------------------------------------------


def test_stopping_the_server_stops_every_transformer() -> None:
    srv = LocalServer(num_mountpaths=1).start()
    try:
        init(srv.client().etl("stop-me-1"), _md5_class(HTTPMultiThreadedServer))
        init(srv.client().etl("stop-me-2"), _md5_class(FastAPIServer))
        assert srv._proc is not None  # noqa: SLF001
        pids = _transformer_pids(srv._proc.pid)  # noqa: SLF001
        assert len(pids) == 2 and all(_alive(p) for p in pids)
    finally:
        srv.stop()
    assert not [p for p in pids if _alive(p)]


def test_killed_server_leaves_no_transformer() -> None:
    srv = LocalServer(num_mountpaths=1).start()
    try:
        init(srv.client().etl("orphan-etl"), _md5_class(HTTPMultiThreadedServer))
        assert srv._proc is not None  # noqa: SLF001
        pids = _transformer_pids(srv._proc.pid)  # noqa: SLF001
        os.kill(srv._proc.pid, signal.SIGKILL)  # noqa: SLF001
        deadline = time.monotonic() + 10
        while [p for p in pids if _alive(p)] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in pids if _alive(p)]
    finally:
        srv.stop()


def _refused_init(srv: LocalServer) -> AISError:
    with pytest.raises(AISError) as err:
        init(srv.client().etl("not-here"), _md5_class(HTTPMultiThreadedServer))
    return err.value


def test_init_is_refused_on_an_open_server() -> None:
    """Listening beyond loopback with no tokens, an init would be remote code execution."""
    with LocalServer(num_mountpaths=1, host="0.0.0.0") as srv:
        err = _refused_init(srv)
        assert err.status_code == 403
        assert "--auth-required" in err.message and "--etl on" in err.message


@pytest.mark.parametrize(("args", "status"), [(["--etl", "off"], 501), (["--etl", "on"], 200)])
def test_etl_flag(args: list[str], status: int) -> None:
    with LocalServer(num_mountpaths=1, host="0.0.0.0", args=args) as srv:
        if status == 200:
            init(srv.client().etl("flag-on"), _md5_class(HTTPMultiThreadedServer))
            assert [e.id for e in srv.client().cluster().list_etls()] == ["flag-on"]
        else:
            assert _refused_init(srv).status_code == status


def test_a_python_without_the_runtime_says_so(tmp_path: Path) -> None:
    fake = tmp_path / "python-without-aistore"
    fake.write_text("#!/bin/sh\necho 'No module named aistore.etl_runtime' >&2\nexit 1\n")
    fake.chmod(0o755)
    with LocalServer(num_mountpaths=1, etl_python=str(fake)) as srv:
        err = _refused_init(srv)
        assert "failed to start" in err.message and "No module named" in err.message


def test_etls_come_back_after_a_restart(tmp_path: Path) -> None:
    """As a cluster keeps its ETL metadata: a running ETL runs again after the server restarts,
    a stopped one comes back stopped."""
    mountpaths = [tmp_path / "mp"]
    with LocalServer(mountpaths=mountpaths) as srv:
        client = srv.client()
        init(client.etl("keeps-running"), _md5_class(HTTPMultiThreadedServer))
        init(client.etl("stays-stopped"), _md5_class(HTTPMultiThreadedServer))
        client.etl("stays-stopped").stop()
        client.bucket("kept").create().object("o").get_writer().put_content(b"kept")
    with LocalServer(mountpaths=mountpaths) as srv:
        client = srv.client()
        deadline = time.monotonic() + 30
        while stages_of(client).get("keeps-running") != "Running" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert stages_of(client) == {"keeps-running": "Running", "stays-stopped": "Aborted"}
        obj = client.bucket("kept").object("o")
        assert obj.get_reader(etl=ETLConfig("keeps-running")).read_all() == md5_of(b"kept")
        client.etl("stays-stopped").start()
        assert obj.get_reader(etl=ETLConfig("stays-stopped")).read_all() == md5_of(b"kept")
        assert oct((tmp_path / "mp" / ".ais.etl").stat().st_mode & 0o777) == "0o700"
    # What refuses an init keeps them from starting again.
    with LocalServer(mountpaths=mountpaths, args=["--etl", "off"]) as srv:
        client = srv.client()
        assert stages_of(client) == {"keeps-running": "Aborted", "stays-stopped": "Aborted"}
        with pytest.raises(ErrETLNotFound) as err:
            client.bucket("kept").object("o").get_reader(etl=ETLConfig("keeps-running")).read_all()
        assert "--etl off" in err.value.message


def test_dataloader_epoch_through_an_etl(client: Client, src: Bucket) -> None:
    """A DataLoader epoch over AISMapDataset and AISIterDataset with `etl_name`: every sample is
    the transformer's output, each object once."""
    torch_data = pytest.importorskip("torch.utils.data", reason="the PyTorch datasets need torch")
    from aistore.pytorch import AISIterDataset, AISMapDataset

    data = {f"train/{i:03d}.bin": content_for(f"dl{i}", 2000 + i) for i in range(64)}
    for name, d in data.items():
        src.object(name).get_writer().put_content(d)
    expected = {name: md5_of(d) for name, d in data.items()}
    for dataset in (
        AISMapDataset(src, etl_name="md5-fastapi"),
        AISIterDataset(src, etl_name="md5-stdlib"),
    ):
        loader = torch_data.DataLoader(dataset, batch_size=8, num_workers=2, collate_fn=list)
        seen = {name: sample for batch in loader for name, sample in batch}
        assert seen == expected, type(dataset).__name__


def test_websocket_etl(client: Client, srv: LocalServer, src: Bucket, files: FileServer) -> None:
    """comm type ws://: each object as a control message and its bytes over a kept WebSocket."""
    etl = client.etl("md5-ws")
    init(etl, _md5_class(FastAPIServer), "ws")
    failing = client.etl("fails-ws")

    class Fails(FastAPIServer):
        def transform(self, data: bytes | str, path: str, etl_args: str) -> bytes:
            raise ValueError(f"bad {path}")

    init(failing, Fails, "ws")
    try:
        assert etl.view().init_msg.communication == "ws://"
        data = {f"w/{i}": content_for(f"ws{i}", 5000 * i + 1) for i in range(20)}
        for name, d in data.items():
            src.object(name).get_writer().put_content(d)
        for name, d in data.items():  # one connection, reused
            got = src.object(name).get_reader(etl=ETLConfig("md5-ws", args="a")).read_all()
            assert got == md5_of(d, "a")
        dst = client.bucket(f"{src.name}-ws")
        job = src.transform("md5-ws", to_bck=dst, prefix_filter="w/", num_workers=4)
        assert wait_job(srv.endpoint, job, timeout=60)["err"] == ""
        assert {
            e.name: dst.object(e.name).get_reader().read_all() for e in dst.list_all_objects()
        } == {n: md5_of(d) for n, d in data.items()}
        url = f"{srv.endpoint}/v1/objects/{src.name}/w/1"
        r = requests.get(url, params={"etl_name": "fails-ws"}, timeout=30)
        assert r.status_code == 500 and "Transform error" in r.text and "bad w/1" in r.text
        # The stream goes on after a failure.
        assert src.object("w/2").get_reader(etl=ETLConfig("md5-ws")).read_all() == md5_of(
            data["w/2"]
        )
        # A download through it.
        dl = client.download()
        dl.start_single(
            src, f"{files.url}/files/70000/ws-dl", object_name="ws-dl", etl_name="md5-ws"
        )
        dl.wait(timeout=60, progress=False)
        assert src.object("ws-dl").get_reader().read_all() == md5_of(file_bytes("ws-dl", 70000))
    finally:
        etl.delete()
        failing.delete()


def test_download_through_an_etl(
    client: Client, srv: LocalServer, src: Bucket, files: FileServer
) -> None:
    """Download and transform in one job: each file's bytes go to the transformer (hpush), the
    object is its output; the object's metadata still says where the file came from."""
    sizes = {"d/a.bin": 1, "d/b.bin": 300_000, "d/c.bin": 3 << 20}
    links = {name: f"{files.url}/files/{size}/{name}" for name, size in sizes.items()}
    dl = client.download()
    dl.start_multi(src, links, etl_name="md5-fastapi", etl_args="dl")
    st = dl.wait(timeout=120, progress=False)
    assert st.finished_cnt == 3 and st.error_cnt == 0
    for name, size in sizes.items():
        assert src.object(name).get_reader().read_all() == md5_of(file_bytes(name, size), "dl")
    head = requests.head(f"{srv.endpoint}/v1/objects/{src.name}/d/b.bin", timeout=30)
    assert "source=web" in head.headers.get("Ais-Custom-Md", "")

    # Started again: nothing is skipped (the objects are outputs, not the files).
    again = client.download()
    again.start_multi(src, links, etl_name="md5-fastapi")
    assert again.wait(timeout=120, progress=False).skipped_cnt == 0
    assert src.object("d/a.bin").get_reader().read_all() == md5_of(file_bytes("d/a.bin", 1))

    # A file that fails (404) fails alone and leaves nothing.
    bad = client.download()
    bad.start_multi(
        src, {"d/x": f"{files.url}/missing/x", "d/y": links["d/a.bin"]}, etl_name="md5-stdlib"
    )
    st = bad.wait(timeout=60, progress=False, raise_on_error=False)
    assert st.error_cnt == 1 and st.finished_cnt == 1
    assert "d/x" not in {e.name for e in src.list_all_objects(prefix="d/")}

    body = {"type": "single", "bucket": {"name": src.name}, "link": links["d/a.bin"]}
    ep = srv.endpoint
    r = requests.post(f"{ep}/v1/download", json={**body, "etl_name": "md5-flask"}, timeout=30)
    assert r.status_code == 501 and "hpull" in r.text
    r = requests.post(f"{ep}/v1/download", json={**body, "etl_name": "no-such-etl"}, timeout=30)
    assert r.status_code == 404 and "no-such-etl" in r.text
    r = requests.post(f"{ep}/v1/download", json={**body, "etl_args": "x"}, timeout=30)
    assert r.status_code == 400 and "etl_args" in r.text
