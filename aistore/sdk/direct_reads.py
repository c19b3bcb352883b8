"""Reads sent straight to the target that owns the object, where the cluster map allows it.

A read through an AIS proxy costs two round trips: the proxy redirects each GET to the target
that owns the object by highest random weight (HRW) over the cluster map. Every client can
compute the same owner from the map, so a client that reaches the targets sends its GETs there
directly: one round trip, and the proxy out of the data path. That is what `DirectReads` decides
for one `RequestClient`.

Nothing changes until the endpoint first redirects a request (a proxy does; an embedded server,
proxy and target in one, never does): reads go to it as the user said. From then on direct
reads are on when the cluster map has targets of their own (not one node that is proxy and
target at one address) and the target a read goes to accepts a TCP connection within
`PROBE_TIMEOUT` (probed once per target). Where targets are not reachable from the client (pod
addresses in Kubernetes, say) or the map cannot be had, every read goes through the proxy from
then on. The map is fetched at the first read after that redirect, and again after a read at a
target missed an object the proxy then found (the map changed). `AIS_DIRECT_READS=0` turns
direct reads off.

Example:
    >>> reads = DirectReads(request_client)  # doctest: +SKIP
    >>> reads.client_for("ais/@#/bucket/name")  # doctest: +SKIP
    <RequestClient for http://10.0.0.7:51081/v1>
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from aistore.sdk.types import Smap, Snode

if TYPE_CHECKING:
    from aistore.sdk.request_client import RequestClient

__all__ = ["DirectReads", "PROBE_TIMEOUT", "ENV_DIRECT_READS"]

logger = logging.getLogger(__name__)

PROBE_TIMEOUT = 1.0  # seconds a target gets to accept the first connection
ENV_DIRECT_READS = "AIS_DIRECT_READS"


def _origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    return parts.scheme, parts.hostname or "", parts.port or default


class DirectReads:
    """Which client a read of an object goes through: its owning target's, or None (the
    proxy's). Thread-safe; the map and the per-target clients are kept for the client's life.

    Args:
        origin: the client of the endpoint the user gave (a proxy, or an embedded server).
    """

    def __init__(self, origin: RequestClient) -> None:
        self._origin = origin
        self._lock = threading.Lock()
        self._on = os.environ.get(ENV_DIRECT_READS, "1") != "0"
        self._smap: Smap | None = None
        self._targets: list[Snode] = []  # in service
        self._clients: dict[str, RequestClient] = {}  # daemon id -> its client, once probed
        self._missed_version: int | None = None  # the map a target missed an object under

    def __reduce__(self) -> tuple[object, ...]:
        # A pickled client (a spawned DataLoader worker's) decides again: no lock travels.
        return (DirectReads, (self._origin,), {"_on": self._on})

    @property
    def enabled(self) -> bool:
        """False once the map or a probe said reads go through the proxy."""
        return self._on

    def client_for(self, uname: str) -> RequestClient | None:
        """The client of the target owning `uname` (`<provider>/<namespace>/<bucket>/<name>`),
        or None to read through the origin client."""
        if not self._on or not self._origin.redirected:
            return None
        if self._smap is None:
            self._load()
            if not self._on:
                return None
        targets = self._targets
        smap = self._smap
        if smap is None or not targets:
            return None
        owner = smap.get_target_for_object(uname)
        client = self._clients.get(owner.daemon_id)
        if client is None:
            return self._probe(owner)
        origin = self._origin
        if client.token != origin.token:  # set on the origin since: a refreshed token
            client.token = origin.token
        return client

    def map_changed(self) -> None:
        """A target missed an object the proxy had: fetch the map again at the next read (if
        that map is the same version, the owner was not ours to compute: reads go through the
        proxy from then on)."""
        with self._lock:
            if self._smap is not None:
                self._missed_version = self._smap.version
            self._smap = None
            self._clients.clear()

    def _load(self) -> None:
        with self._lock:
            if self._smap is not None or not self._on:
                return
            try:
                smap = self._origin.get_smap(force_update=True)
            except Exception as e:  # noqa: BLE001 - no map (refused, not AIS): the proxy reads
                self._on = False
                logger.debug("reads go through %s: no cluster map (%s)", self._origin.base_url, e)
                return
            targets = [t for t in smap.tmap.values() if not t.in_maint_or_decomm()]
            reason = self._refusal(smap, targets)
            if smap.version == self._missed_version:
                reason = f"a target missed an object under this very map (v{smap.version})"
            if reason:
                self._on = False
                logger.info("reads go through %s: %s", self._origin.base_url, reason)
                return
            self._targets = targets
            self._smap = smap

    def _refusal(self, smap: Smap, targets: list[Snode]) -> str:
        """Why this map gives no direct reads ("" if it does)."""
        if not targets:
            return "the cluster map has no target in service"
        endpoint = _origin(self._origin.base_url)
        proxies = {_origin(p.public_net.direct_url) for p in smap.pmap.values() if p.public_net}
        for t in targets:
            if t.public_net is None or not t.public_net.direct_url:
                return f"target {t.daemon_id} has no public URL"
            at = _origin(t.public_net.direct_url)
            if t.daemon_id in smap.pmap or at in proxies or at == endpoint:
                return f"target {t.daemon_id} is also the proxy ({t.public_net.direct_url})"
        return ""

    def _probe(self, target: Snode) -> RequestClient | None:
        """The target's client if it accepts a connection; else direct reads end here."""
        assert target.public_net is not None  # checked by _refusal
        url = target.public_net.direct_url
        _, host, port = _origin(url)
        try:
            socket.create_connection((host, port), timeout=PROBE_TIMEOUT).close()
        except OSError as e:
            with self._lock:
                self._on = False
            logger.info(
                "target %s (%s) is not reachable from here (%s): reading through %s",
                target.daemon_id,
                url,
                e,
                self._origin.base_url,
            )
            return None
        with self._lock:
            client = self._clients.get(target.daemon_id)
            if client is None:
                client = self._clients[target.daemon_id] = self._origin.clone(base_url=url)
        return client
