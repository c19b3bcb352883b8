"""DirectReads: which cluster maps give direct reads, and the probe that turns them off."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from aistore.sdk.direct_reads import DirectReads
from aistore.sdk.request_client import RequestClient
from aistore.sdk.session_manager import SessionManager
from aistore.sdk.types import NetInfo, Smap, Snode

ENDPOINT = "http://127.0.0.1:51080"


class _MapClient(RequestClient):
    """A client whose cluster map is given, not fetched (nothing is sent here)."""

    def __init__(self, smap: Smap) -> None:
        super().__init__(ENDPOINT, SessionManager())
        self.map = smap
        self.fetched = 0
        self._executor.redirected = True  # as after a proxy's first redirect

    def get_smap(self, force_update: bool = False) -> Smap:
        self.fetched += 1
        return self.map


def _node(daemon_id: str, kind: str, url: str, digest: int, flags: int = 0) -> Snode:
    host, port = url.rsplit("/", 1)[-1].split(":")
    net = NetInfo(node_ip_addr=host, daemon_port=port, direct_url=url)
    return Snode(
        daemon_id=daemon_id, daemon_type=kind, public_net=net, id_digest=digest, flags=flags
    )


def _smap(targets: list[Snode], proxy_url: str = ENDPOINT) -> Smap:
    proxy = _node("p1", "proxy", proxy_url, 7)
    return Smap(tmap={t.daemon_id: t for t in targets}, pmap={"p1": proxy}, proxy_si=proxy)


@pytest.fixture
def listening() -> Iterator[list[str]]:
    """Two loopback URLs that accept connections (the probe only connects)."""
    socks = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        socks.append(s)
    yield [f"http://127.0.0.1:{s.getsockname()[1]}" for s in socks]
    for s in socks:
        s.close()


def test_targets_of_their_own_get_direct_reads(listening: list[str]) -> None:
    origin = _MapClient(
        _smap([_node("t1", "target", listening[0], 11), _node("t2", "target", listening[1], 22)])
    )
    reads = DirectReads(origin)
    owners = {}
    for i in range(40):
        uname = f"ais/@#/b/o{i}"
        client = reads.client_for(uname)
        assert client is not None
        want = origin.map.get_target_for_object(uname).public_net
        assert want is not None
        assert client.base_url == want.direct_url + "/v1"
        owners[client.base_url] = client
    assert len(owners) == 2  # both targets own some, one client each
    assert origin.fetched == 1  # the map is fetched once
    origin.map = origin.map.model_copy(update={"version": origin.map.version + 1})
    reads.map_changed()
    assert reads.client_for("ais/@#/b/o1") is not None  # a newer map: still direct
    assert origin.fetched == 2
    reads.map_changed()  # and a miss under that one too: not ours to compute, the proxy reads
    assert reads.client_for("ais/@#/b/o1") is None
    assert not reads.enabled
    assert origin.fetched == 3


@pytest.mark.parametrize(
    "why",
    ["proxy and target at one address", "the endpoint is the target", "no target in service"],
)
def test_maps_that_give_no_direct_reads(why: str, listening: list[str]) -> None:
    if why == "proxy and target at one address":
        smap = _smap([_node("t1", "target", listening[0], 11)], proxy_url=listening[0])
    elif why == "the endpoint is the target":
        smap = _smap([_node("t1", "target", ENDPOINT, 11)], proxy_url=listening[1])
    else:
        smap = _smap([_node("t1", "target", listening[0], 11, flags=1 << 2)])
    reads = DirectReads(_MapClient(smap))
    assert reads.client_for("ais/@#/b/o") is None
    assert not reads.enabled


def test_an_unreachable_target_turns_direct_reads_off(listening: list[str]) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    origin = _MapClient(_smap([_node("t1", "target", closed, 11)]))
    reads = DirectReads(origin)
    assert reads.client_for("ais/@#/b/o") is None
    assert not reads.enabled
    assert reads.client_for("ais/@#/b/o") is None
    assert origin.fetched == 1  # no map fetched again, no probe again


def test_nothing_changes_before_the_endpoint_redirects(listening: list[str]) -> None:
    origin = _MapClient(_smap([_node("t1", "target", listening[0], 11)]))
    origin._executor.redirected = False  # noqa: SLF001 - an endpoint that never redirected
    reads = DirectReads(origin)
    assert reads.client_for("ais/@#/b/o") is None
    assert origin.fetched == 0
    assert reads.enabled  # undecided: no map asked for yet


def test_the_environment_turns_them_off(
    monkeypatch: pytest.MonkeyPatch, listening: list[str]
) -> None:
    monkeypatch.setenv("AIS_DIRECT_READS", "0")
    origin = _MapClient(_smap([_node("t1", "target", listening[0], 11)]))
    reads = DirectReads(origin)
    assert reads.client_for("ais/@#/b/o") is None
    assert origin.fetched == 0


def test_a_refreshed_token_reaches_the_target_clients(listening: list[str]) -> None:
    origin = _MapClient(_smap([_node("t1", "target", listening[0], 11)]))
    reads = DirectReads(origin)
    assert reads.client_for("ais/@#/b/o") is not None
    origin.token = "new-token"
    client = reads.client_for("ais/@#/b/o")
    assert client is not None and client.token == "new-token"


def test_no_map_no_direct_reads() -> None:
    """A map that cannot be fetched (refused, or no AIS there): reads go through the proxy."""

    class _NoMap(RequestClient):
        def get_smap(self, force_update: bool = False) -> Smap:
            raise ConnectionError("refused")

    origin = _NoMap(ENDPOINT, SessionManager())
    origin._executor.redirected = True  # noqa: SLF001
    reads = DirectReads(origin)
    assert reads.client_for("ais/@#/b/o") is None
    assert not reads.enabled


def test_a_pickled_client_decides_again(listening: list[str]) -> None:
    """Datasets travel to spawned DataLoader workers pickled, their clients with them."""
    import pickle

    origin = _MapClient(_smap([_node("t1", "target", listening[0], 11)]))
    assert origin.direct_reads.client_for("ais/@#/b/o") is not None
    copy = pickle.loads(pickle.dumps(origin))
    assert copy.direct_reads._smap is None  # noqa: SLF001 - fetched again where it is used
    assert copy.direct_reads.client_for("ais/@#/b/o") is not None
