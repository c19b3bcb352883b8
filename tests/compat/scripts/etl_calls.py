"""The official SDK's ETL calls (spec etl.md §2, §4-§6, §8) against our server, whose
transformers run as local processes; run by test_official_etl.py in the official SDK's venv.
The classes below subclass the official package's webservers: our runtime unpickles them onto
ours, as the official runtime image would onto its own.

argv: endpoint, a tag for unique names.

Prints one JSON object mapping each check's name to "ok" or the error.
"""

import hashlib
import json
import sys
import traceback
from collections.abc import Callable

from aistore import Client
from aistore.sdk.errors import AISError, ErrETLAlreadyExists, ErrETLNotFound
from aistore.sdk.etl import ETLConfig
from aistore.sdk.etl.webserver.fastapi_server import FastAPIServer
from aistore.sdk.etl.webserver.flask_server import FlaskServer
from aistore.sdk.etl.webserver.http_multi_threaded_server import HTTPMultiThreadedServer

ENDPOINT, TAG = sys.argv[1:3]
results: dict[str, str] = {}
client = Client(ENDPOINT)
src = client.bucket(f"etl-src-{TAG}").create(exist_ok=True)
DATA = {f"d/{i}.bin": bytes([i]) * (1000 + i) for i in range(20)}
for name, data in DATA.items():
    src.object(name).get_writer().put_content(data)


def check(fn: Callable[[], None]) -> Callable[[], None]:
    try:
        fn()
        results[fn.__name__] = "ok"
    except Exception:  # every failure is reported, none stops the run
        results[fn.__name__] = traceback.format_exc(limit=6)
    return fn


def md5(data: bytes) -> bytes:
    return hashlib.md5(data).hexdigest().encode()


fastapi_etl = client.etl(f"fast-{TAG}")
flask_etl = client.etl(f"flask-{TAG}")
stdlib_etl = client.etl(f"std-{TAG}")


@check
def init_class_each_kind() -> None:
    @fastapi_etl.init_class()
    class Md5Fast(FastAPIServer):
        def transform(self, data, path, etl_args):
            return md5(data)

    @flask_etl.init_class(comm_type="hpull")
    class Md5Flask(FlaskServer):
        def transform(self, data, path, etl_args):
            return md5(data)

    @stdlib_etl.init_class()
    class Upper(HTTPMultiThreadedServer):
        def transform(self, data, path, etl_args):
            return data.upper() + etl_args.encode()

    running = {e.id: e.stage for e in client.cluster().list_etls()}
    for etl in (fastapi_etl, flask_etl, stdlib_etl):
        assert running.get(etl.name) == "Running", running


@check
def inline_get() -> None:
    obj = src.object("d/3.bin")
    for etl in (fastapi_etl, flask_etl):
        assert obj.get_reader(etl=ETLConfig(etl.name)).read_all() == md5(DATA["d/3.bin"])
    src.object("text").get_writer().put_content(b"abc")
    got = src.object("text").get_reader(etl=ETLConfig(stdlib_etl.name, args="-x")).read_all()
    assert got == b"ABC-x", got


@check
def websocket_comm() -> None:
    ws_etl = client.etl(f"ws-{TAG}")

    @ws_etl.init_class(comm_type="ws")
    class Md5Ws(FastAPIServer):
        def transform(self, data, path, etl_args):
            return md5(data)

    try:
        assert ws_etl.view().init_msg.communication == "ws://"
        for name in ("d/1.bin", "d/2.bin"):
            got = src.object(name).get_reader(etl=ETLConfig(ws_etl.name)).read_all()
            assert got == md5(DATA[name]), got
    finally:
        ws_etl.delete()


@check
def view_and_logs() -> None:
    details = fastapi_etl.view()
    assert details.init_msg.name == fastapi_etl.name
    assert details.init_msg.communication == "hpush://"
    logs = fastapi_etl.logs()
    assert len(logs) == 1 and "aistore.etl_runtime" in logs[0].logs


@check
def duplicate_init() -> None:
    try:
        stdlib_etl.init(image="aistorage/runtime_python:3.11")
    except ErrETLAlreadyExists:
        return
    raise AssertionError("a second init of the same name was accepted")


@check
def bucket_transform() -> None:
    dst = client.bucket(f"etl-dst-{TAG}")
    job = src.transform(fastapi_etl.name, to_bck=dst, prefix_filter="d/", ext={"bin": "md5"})
    client.job(job).wait(timeout=120)
    names = {e.name for e in dst.list_all_objects()}
    assert names == {n.replace(".bin", ".md5") for n in DATA}, names
    assert dst.object("d/7.md5").get_reader().read_all() == md5(DATA["d/7.bin"])


@check
def group_transform() -> None:
    dst = client.bucket(f"etl-grp-{TAG}").create(exist_ok=True)
    job = src.objects(obj_names=["d/1.bin", "d/2.bin"]).transform(dst, flask_etl.name)
    client.job(job).wait(timeout=120)
    assert dst.object("d/2.bin").get_reader().read_all() == md5(DATA["d/2.bin"])


@check
def single_object_copy() -> None:
    dst = client.bucket(f"etl-cp-{TAG}").create(exist_ok=True)
    src.object("d/5.bin").copy(dst.object("five.md5"), etl=ETLConfig(fastapi_etl.name))
    assert dst.object("five.md5").get_reader().read_all() == md5(DATA["d/5.bin"])


@check
def pipeline() -> None:
    piped = stdlib_etl >> fastapi_etl
    got = src.object("text").get_reader(etl=ETLConfig(piped)).read_all()
    assert got == md5(b"ABC"), got


@check
def stop_start_delete() -> None:
    stdlib_etl.stop()
    stages = {e.id: e.stage for e in client.cluster().list_etls(stages=["Aborted"])}
    assert stages.get(stdlib_etl.name) == "Aborted", stages
    try:
        src.object("text").get_reader(etl=ETLConfig(stdlib_etl.name)).read_all()
        raise AssertionError("a stopped ETL transformed")
    except ErrETLNotFound:
        pass
    stdlib_etl.start()
    assert src.object("text").get_reader(etl=ETLConfig(stdlib_etl.name)).read_all() == b"ABC"
    for etl in (fastapi_etl, flask_etl, stdlib_etl):
        etl.delete()
    left = {e.id for e in client.cluster().list_etls(stages=["Running", "Aborted", "Initializing"])}
    assert not left & {fastapi_etl.name, flask_etl.name, stdlib_etl.name}, left


@check
def unknown_etl() -> None:
    try:
        client.etl(f"none-{TAG}").view()
        raise AssertionError("view of an unknown ETL answered")
    except ErrETLNotFound:
        pass
    try:
        src.object("text").get_reader(etl=ETLConfig(f"none-{TAG}")).read_all()
        raise AssertionError("GET through an unknown ETL answered")
    except ErrETLNotFound:
        pass
    try:
        client.etl(f"img-{TAG}").init(image="aistorage/transformer_md5:latest")
        raise AssertionError("a container image was accepted")
    except AISError as err:
        assert err.status_code == 501, err


print(json.dumps({"checks": results}))
