"""A script written against the official SDK's internal seams, as users of aistore 2.0.0 write
them: `SessionManager` for TLS and pool settings, `RequestClient` with a `RetryConfig` of their
own, `get_logger`. test_official_internals.py runs it unchanged with the official SDK (in its
venv) and with ours, both against our server.

argv: endpoint, run tag (unique per run). The JSON printed last maps each check's name to "ok"
or the error, so one failure does not hide the others.
"""

import json
import logging
import os
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable

import requests
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_fixed
from urllib3.util import Retry

import aistore
from aistore.sdk import Client
from aistore.sdk.const import HTTP_METHOD_GET, QPARAM_WHAT, URL_PATH_DAEMON, WHAT_SMAP
from aistore.sdk.errors import AISError, ErrBckNotFound
from aistore.sdk.request_client import RequestClient
from aistore.sdk.response_handler import AISResponseHandler
from aistore.sdk.retry_config import ColdGetConf, RetryConfig
from aistore.sdk.session_manager import SessionManager
from aistore.sdk.types import Smap
from aistore.sdk.utils import get_logger

ENDPOINT, TAG = sys.argv[1], sys.argv[2]
results: dict[str, str] = {}
logger = get_logger("internals-script")


def check(fn: Callable[[], None]) -> Callable[[], None]:
    try:
        fn()
        results[fn.__name__] = "ok"
    except Exception:  # every failure is reported, none stops the run
        results[fn.__name__] = traceback.format_exc(limit=6)
    return fn


def quick_retry() -> RetryConfig:
    return RetryConfig(
        http_retry=Retry(total=2, backoff_factor=0.1, status_forcelist=[429, 503], connect=0),
        network_retry=Retrying(
            stop=stop_after_attempt(2),
            wait=wait_fixed(0.1),
            retry=retry_if_exception_type(requests.ConnectionError),
            reraise=True,
        ),
        cold_get_conf=ColdGetConf(est_bandwidth_bps=1 << 30, max_cold_wait=10),
    )


@check
def logger_is_configured_once() -> None:
    again = get_logger("internals-script")
    assert again is logger and isinstance(logger, logging.Logger)
    assert len(logger.handlers) == 1 and logger.propagate is False
    custom = get_logger(f"internals-{TAG}", log_format="%(levelname)s %(message)s")
    assert custom.handlers[0].formatter._fmt == "%(levelname)s %(message)s"


@check
def session_manager_pool_and_retry() -> None:
    retry = Retry(total=3, backoff_factor=0.5, status_forcelist=[503])
    sm = SessionManager(retry=retry, max_pool_size=7)
    assert sm.retry is retry and sm.ca_cert is None and sm.skip_verify is False
    session = sm.session
    assert isinstance(session, requests.Session) and sm.session is session
    for scheme in ("http://", "https://"):
        adapter = session.get_adapter(scheme + "example")
        assert adapter._pool_maxsize == 7 and adapter._pool_connections == 7
    # certificates are verified (True, or the environment's CA bundle), no client certificate
    assert session.verify is not False and session.cert is None, (session.verify, session.cert)


@check
def session_manager_tls_settings() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ca = os.path.join(tmp, "ca.pem")
        crt, key = os.path.join(tmp, "client.crt"), os.path.join(tmp, "client.key")
        for path in (ca, crt, key):
            with open(path, "w") as f:
                f.write("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
        sm = SessionManager(ca_cert=ca, client_cert=(crt, key))
        assert sm.ca_cert == ca and sm.client_cert == (crt, key)
        assert sm.session.verify == ca and sm.session.cert == (crt, key)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            insecure = SessionManager(skip_verify=True, client_cert=crt)
        assert any("insecure" in str(w.message).lower() for w in caught), caught
        assert insecure.skip_verify is True
        assert insecure.session.verify is False and insecure.session.cert == crt


@check
def request_client_with_own_retry_config() -> None:
    sm = SessionManager(retry=quick_retry().http_retry, max_pool_size=4)
    rc = RequestClient(
        endpoint=ENDPOINT,
        session_manager=sm,
        timeout=(3, 20),
        response_handler=AISResponseHandler(),
        retry_config=quick_retry(),
    )
    assert rc.base_url == ENDPOINT + "/v1" and rc.timeout == (3, 20)
    assert rc.session_manager is sm
    smap = rc.request_deserialize(
        HTTP_METHOD_GET, path=URL_PATH_DAEMON, res_model=Smap, params={QPARAM_WHAT: WHAT_SMAP}
    )
    assert smap.tmap and smap.proxy_si.daemon_id
    assert rc.get_smap() is rc.get_smap() and rc.get_smap(force_update=True).uuid == smap.uuid
    resp = rc.request(HTTP_METHOD_GET, path="buckets", json={"action": "list"})
    assert resp.status_code == 200 and isinstance(resp.json(), list)
    rc.timeout = 30
    rc.token = "not-checked-here"
    assert rc.timeout == 30 and rc.token == "not-checked-here"
    clone = rc.clone()
    assert clone.base_url == rc.base_url and clone.session_manager is sm
    assert clone.get_smap().uuid == smap.uuid


@check
def request_client_errors_are_typed() -> None:
    rc = RequestClient(ENDPOINT, SessionManager(), retry_config=quick_retry())
    try:
        rc.request(HTTP_METHOD_GET, path=f"buckets/missing-{TAG}", params={"provider": "ais"})
    except ErrBckNotFound as e:
        # `message` is the reply's body as sent: AIS's JSON error document
        doc = json.loads(e.message)
        assert e.status_code == 404 and doc["status"] == 404, e.message
        assert f"missing-{TAG}" in doc["message"], e.message
    else:
        raise AssertionError("no ErrBckNotFound")
    try:
        rc.request(HTTP_METHOD_GET, path="daemon", params={QPARAM_WHAT: "no-such-what"})
    except AISError as e:
        assert 400 <= e.status_code < 500 and e.req_url.startswith(ENDPOINT), e
    else:
        raise AssertionError("no AISError")


@check
def client_with_retry_config_and_swapped_session_manager() -> None:
    client = Client(ENDPOINT, retry_config=quick_retry(), max_pool_size=5, timeout=(3, 20))
    assert client.retry_config.http_retry.total == 2
    # replacing the session manager after construction, as TLS set-ups do
    client._request_client.session_manager = SessionManager(
        retry=quick_retry().http_retry, max_pool_size=5
    )
    bucket = client.bucket(f"internals-{TAG}").create(exist_ok=True)
    try:
        bucket.object("o").get_writer().put_content(b"through a custom session manager")
        data = bucket.object("o").get_reader().read_all()
        assert data == b"through a custom session manager", data
        logger.info("read %d bytes", len(data))
    finally:
        bucket.delete(missing_ok=True)


@check
def retry_config_defaults() -> None:
    default = RetryConfig.default()
    assert default.http_retry.total == 5 and 503 in default.http_retry.status_forcelist
    assert isinstance(default.network_retry, Retrying)
    assert isinstance(default.cold_get_conf, ColdGetConf)


print(json.dumps({"version": aistore.__version__, "checks": results}))
