"""GET /metrics: the Prometheus exposition, parsed by prometheus_client, adds up to the requests
made, agrees with the AIS stats tracker (node_status), and costs nothing when turned off."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from aistore.sdk.errors import ErrObjNotFound
from aistore.server import LocalServer


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    with LocalServer(num_mountpaths=2) as srv:
        yield srv


def scrape(endpoint: str) -> dict[str, float]:
    """Every sample as {"name{label=value,...}": value}, node_id left out; families by name too."""
    r = requests.get(endpoint + "/metrics", timeout=10)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    out: dict[str, float] = {}
    for fam in text_string_to_metric_families(r.text):
        for s in fam.samples:
            # The parser names a counter's sample "<name>_total"; keep the name as exported.
            name = s.name
            if fam.type == "counter" and f"\n{name}{{" not in r.text:
                name = name.removesuffix("_total")
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()) if k != "node_id")
            out[f"{name}{{{labels}}}"] = s.value
    return out


def delta(after: dict[str, float], before: dict[str, float], key: str) -> float:
    return after.get(key, 0.0) - before.get(key, 0.0)


def test_counters_add_up_to_the_requests_made(server: LocalServer) -> None:
    client = server.client()
    b = client.bucket("metrics-a").create()
    before = scrape(server.endpoint)
    for i in range(20):
        b.object(f"o{i}").get_writer().put_content(b"x" * 1000)
    for i in range(20):
        assert len(b.object(f"o{i}").get_reader().read_all()) == 1000
    b.object("o0").get_reader(byte_range="bytes=0-99").read_all()
    for _ in range(3):
        with pytest.raises(ErrObjNotFound):
            b.object("missing").get_reader().read_all()
    for i in range(5):
        b.object(f"o{i}").head()
    b.object("o19").delete()
    b.list_all_objects()
    # Counted as its reply begins: the scrape, on another connection, sees the listing counted.
    after = scrape(server.endpoint)
    assert delta(after, before, "ais_target_put_count{bucket=,xkind=}") == 20
    assert delta(after, before, "ais_target_put_bytes{bucket=,xkind=}") == 20_000
    assert delta(after, before, "ais_target_get_count{bucket=}") == 24
    assert delta(after, before, "ais_target_err_get_count{bucket=}") == 3
    assert delta(after, before, "ais_target_get_bytes{bucket=}") == 20_000 + 100
    assert delta(after, before, "ais_target_get_range_count{}") == 1
    assert delta(after, before, "ais_target_head_count{bucket=}") == 5
    assert delta(after, before, "ais_target_del_count{bucket=}") == 1
    assert delta(after, before, "ais_target_lst_count{bucket=}") == 1
    assert delta(after, before, "ais_target_get_ns_total{bucket=}") > 0
    # The latency histogram of GETs: as many samples as GETs, cumulative buckets.
    assert delta(after, before, "ais_target_request_latency_seconds_count{op=get}") == 24
    prefix = "ais_target_request_latency_seconds_bucket{le="
    buckets = sorted(
        (float(k[len(prefix) :].split(",")[0]), v)
        for k, v in after.items()
        if k.startswith(prefix) and k.endswith(",op=get}")
    )
    assert len(buckets) == 15
    assert [v for _, v in buckets] == sorted(v for _, v in buckets)
    assert buckets[-1] == (float("inf"), after["ais_target_request_latency_seconds_count{op=get}"])


def test_counts_are_exact_under_concurrent_load_and_scrapes(server: LocalServer) -> None:
    b = server.client().bucket("metrics-b").create()
    b.object("obj").get_writer().put_content(b"y" * 4096)
    before = scrape(server.endpoint)
    stop = threading.Event()
    scrapes: list[dict[str, float]] = []

    def scraper() -> None:
        while not stop.is_set():
            scrapes.append(scrape(server.endpoint))

    def reader() -> None:
        obj = server.client().bucket("metrics-b").object("obj")
        for _ in range(100):
            obj.get_reader().read_all()

    t = threading.Thread(target=scraper)
    t.start()
    readers = [threading.Thread(target=reader) for _ in range(4)]
    for r in readers:
        r.start()
    for r in readers:
        r.join()
    stop.set()
    t.join()
    after = scrape(server.endpoint)
    assert delta(after, before, "ais_target_get_count{bucket=}") == 400
    assert delta(after, before, "ais_target_get_bytes{bucket=}") == 400 * 4096
    counts = [s.get("ais_target_get_count{bucket=}", 0.0) for s in scrapes]
    assert counts == sorted(counts), "a counter never goes back"
    # The gauge drops a moment after a reply's last byte leaves (docs/metrics.md): it settles at 0.
    deadline = time.monotonic() + 10
    while after["ais_target_requests_in_flight{}"] != 0 and time.monotonic() < deadline:
        time.sleep(0.01)
        after = scrape(server.endpoint)
    assert after["ais_target_requests_in_flight{}"] == 0
    assert after["ais_target_connections_open{}"] >= 1


def test_tracker_and_gauges_agree_with_the_exposition(server: LocalServer) -> None:
    client = server.client()
    b = client.bucket("metrics-c").create()
    b.object("x").get_writer().put_content(b"z")
    job = b.copy(client.bucket("metrics-c2"))
    client.job(job).wait(timeout=30)
    r = requests.get(server.endpoint + "/v1/daemon", params={"what": "node_status"}, timeout=10)
    tracker = r.json()["tracker"]
    m = scrape(server.endpoint)
    # The tracker was read before the scrape and the scrape itself is not counted: equal.
    assert tracker["get.n"] == m["ais_target_get_count{bucket=}"]
    assert tracker["put.n"] == m["ais_target_put_count{bucket=,xkind=}"]
    assert tracker["put.size"] == m["ais_target_put_bytes{bucket=,xkind=}"]
    names = requests.get(
        server.endpoint + "/v1/daemon", params={"what": "metrics"}, timeout=10
    ).json()
    assert (
        names["get.n"] == "counter"
        and names["get.size"] == "size"
        and names["get.ns.total"] == "total"
    )
    mps = {k for k in m if k.startswith("ais_target_mountpath_capacity_bytes{")}
    assert len(mps) == 2 and all(m[k] > 0 for k in mps)
    assert m["ais_target_jobs{state=finished,xkind=copy-bck}"] >= 1
    assert m["ais_target_uptime{}"] > 0 and m["ais_target_state_flags{}"] == 6


def test_no_metrics_counts_nothing() -> None:
    with LocalServer(num_mountpaths=1, args=["--no-metrics"]) as srv:
        b = srv.client().bucket("quiet").create()
        b.object("x").get_writer().put_content(b"1")
        b.object("x").get_reader().read_all()
        m = scrape(srv.endpoint)
        assert m["ais_target_get_count{bucket=}"] == 0
        assert m["ais_target_put_count{bucket=,xkind=}"] == 0
