"""The entry point: `Client(endpoint)` and its factories for buckets, the cluster and jobs.

Example:
    >>> from aistore import Client
    >>> client = Client("http://localhost:8080")
"""

from __future__ import annotations

from aistore._internal import config
from aistore._internal.config import ClientCert, TimeoutArg
from aistore.sdk.batch.batch import Batch
from aistore.sdk.bucket import Bucket
from aistore.sdk.cluster import Cluster
from aistore.sdk.const import AIS_AUTHN_TOKEN as AIS_AUTHN_TOKEN
from aistore.sdk.const import AIS_CONNECT_TIMEOUT as AIS_CONNECT_TIMEOUT
from aistore.sdk.const import AIS_MAX_CONN_POOL as AIS_MAX_CONN_POOL
from aistore.sdk.const import AIS_READ_TIMEOUT as AIS_READ_TIMEOUT
from aistore.sdk.const import EXT_TAR
from aistore.sdk.download import Download
from aistore.sdk.dsort.core import Dsort
from aistore.sdk.enums import Colocation
from aistore.sdk.errors import InvalidURLException
from aistore.sdk.etl.etl import Etl
from aistore.sdk.job import Job
from aistore.sdk.namespace import Namespace
from aistore.sdk.obj.object import Object
from aistore.sdk.provider import Provider
from aistore.sdk.request_client import RequestClient
from aistore.sdk.retry_config import RetryConfig
from aistore.sdk.session_manager import SessionManager
from aistore.sdk.utils import parse_url

__all__ = ["Client"]


class Client:
    """A connection to an AIStore cluster (or to the embedded server).

    Each setting comes from the argument, else its environment variable, else a default:

    - `endpoint`: `AIS_ENDPOINT` when omitted (our addition; the official SDK requires it).
    - `skip_verify`: `AIS_SKIP_VERIFY_CRT`, then `AIS_SKIP_VERIFY`.
    - `ca_cert`: `AIS_CLIENT_CA`, else the system CAs.
    - `client_cert`: (`AIS_CRT`, `AIS_CRT_KEY`) when both are set.
    - `timeout`: (`AIS_CONNECT_TIMEOUT` or 3, `AIS_READ_TIMEOUT` or 20) seconds; 0 disables
      all, a 0 in a tuple (or an env var set to 0) disables that part.
    - `retry_config`: `RetryConfig.default()`.
    - `token`: `AIS_AUTHN_TOKEN`, else the token file of the Go CLI: `AIS_AUTHN_TOKEN_FILE`,
      else `~/.config/ais/cli/auth.token` when it exists (JSON `{"token": "<jwt>"}`).
    - `max_pool_size`: `AIS_MAX_CONN_POOL`, else 10 connections per host.

    Example:
        >>> client = Client("http://localhost:8080", timeout=(1, 30))
        >>> bucket = client.bucket("data")

    Raises:
        ValueError: no endpoint given and `AIS_ENDPOINT` unset.
    """

    def __init__(
        self,
        endpoint: str | None = None,
        skip_verify: bool = False,
        ca_cert: str | None = None,
        client_cert: ClientCert | None = None,
        timeout: TimeoutArg = None,
        retry_config: RetryConfig | None = None,
        token: str | None = None,
        max_pool_size: int | None = None,
    ) -> None:
        self.retry_config = retry_config if retry_config is not None else RetryConfig.default()
        session_manager = SessionManager(
            retry=self.retry_config.http_retry,
            ca_cert=ca_cert,
            skip_verify=config.resolve_skip_verify(skip_verify),
            client_cert=config.resolve_client_cert(client_cert),
            max_pool_size=config.resolve_max_pool_size(max_pool_size),
        )
        self._request_client = RequestClient(
            endpoint=config.resolve_endpoint(endpoint),
            session_manager=session_manager,
            timeout=config.resolve_timeout(timeout),
            token=config.resolve_token(token),
            retry_config=self.retry_config,
        )

    def bucket(
        self,
        bck_name: str,
        provider: Provider | str = Provider.AIS,
        namespace: Namespace | None = None,
    ) -> Bucket:
        """The bucket `bck_name`; no request is sent."""
        return Bucket(
            name=bck_name, client=self._request_client, provider=provider, namespace=namespace
        )

    def cluster(self) -> Cluster:
        """Cluster-wide calls; no request is sent."""
        return Cluster(client=self._request_client)

    def job(self, job_id: str = "", job_kind: str = "") -> Job:
        """A job by id and/or kind; no request is sent."""
        return Job(client=self._request_client, job_id=job_id, job_kind=job_kind)

    def etl(self, etl_name: str) -> Etl:
        """An ETL by name; no request is sent. Our server runs its transformers as local
        processes (no Kubernetes; see `aistore.sdk.etl` and docs/etl.md)."""
        return Etl(client=self._request_client, name=etl_name)

    def download(self, job_id: str = "") -> Download:
        """Download jobs: start one (`Download.start_single`, `start_range`, `start_multi`,
        `start_backend`), or watch the job `job_id`. Ours: the official SDK has no download
        API (see `aistore.sdk.download`)."""
        return Download(client=self._request_client, job_id=job_id)

    def dsort(self, dsort_id: str = "") -> Dsort:
        """A dSort job by id; no request is sent. One node runs no dSort: its calls fail as on
        a cluster without it (see `aistore.sdk.dsort`)."""
        return Dsort(client=self._request_client, dsort_id=dsort_id)

    def batch(
        self,
        objects: list[Object] | Object | str | list[str] | None = None,
        bucket: Bucket | None = None,
        output_format: str = EXT_TAR,
        cont_on_err: bool = True,
        only_obj_name: bool = False,
        streaming_get: bool = True,
        colocation: Colocation = Colocation.NONE,
    ) -> Batch:
        """A GetBatch request: many objects and archived files in one ordered archive; no
        request is sent until `get()`. See `aistore.sdk.batch.Batch` for the arguments.

        Example:
            >>> batch = client.batch(["a.jpg", "b.jpg"], bucket=client.bucket("imgs"))
            >>> for info, data in batch.get():  # doctest: +SKIP
            ...     print(info.obj_name, len(data))
        """
        return Batch(
            request_client=self._request_client,
            objects=objects,
            bucket=bucket,
            output_format=output_format,
            cont_on_err=cont_on_err,
            only_obj_name=only_obj_name,
            streaming_get=streaming_get,
            colocation=colocation,
        )

    def get_object_from_url(self, url: str) -> Object:
        """The object named by `provider://bucket/object` (`s3://`, `gs://` work too).

        Raises:
            InvalidURLException: a part is missing.
            aistore.sdk.errors.InvalidBckProvider: unknown provider.
        """
        provider, bck_name, obj_name = parse_url(url)
        if not provider or not bck_name or not obj_name:
            raise InvalidURLException(url)
        return self.bucket(bck_name, provider=provider).object(obj_name)
