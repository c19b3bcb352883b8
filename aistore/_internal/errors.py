"""Exceptions raised by the SDK, with the names and bases of the official `aistore` package.

    Exception
    ├── APIRequestError            HTTP status >= 400 from a server
    │   └── AISError               ... from an AIS cluster, not matched below
    │       ├── AISRetryableError
    │       │   ├── ErrObjNotFound          404 naming `prov://bck/obj`
    │       │   └── ErrGETConflict          409 on a GET
    │       ├── ErrBckNotFound              404 naming `ais://bck`
    │       ├── ErrRemoteBckNotFound        404 naming a remote or namespaced bucket
    │       ├── ErrBckAlreadyExists         409 naming a bucket (not on GET)
    │       ├── ErrETLNotFound              404 mentioning "etl job"
    │       └── ErrETLAlreadyExists         409 mentioning "etl job"
    ├── InvalidBckProvider, Timeout, JobInfoNotFound, UnexpectedHTTPStatusCode,
    │   InvalidURLException, NoTargetError, InvalidObjectRangeIndex
    ├── ObjectChangedError         (ours) the object changed during a parallel download
    ├── ValueError
    │   └── InvalidPipelineError
    └── MemoryError
        └── InsufficientSharedMemoryError  (ours) no room for a parallel-download buffer

Classification of HTTP errors lives in `aistore._internal.error_map`. Every exception here
survives pickling (DataLoader workers send them across processes): `__reduce__` returns the
constructor arguments. The prepared request held by `APIRequestError.req` is not carried
across, since its body may be an open file.

Example:
    >>> from aistore._internal.errors import ErrObjNotFound, AISError
    >>> issubclass(ErrObjNotFound, AISError)
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import requests

__all__ = [
    "AISError",
    "AISRetryableError",
    "APIRequestError",
    "DownloadError",
    "ErrBckAlreadyExists",
    "ErrBckNotFound",
    "ErrETLAlreadyExists",
    "ErrETLNotFound",
    "ErrGETConflict",
    "ErrObjNotFound",
    "ErrRemoteBckNotFound",
    "InsufficientSharedMemoryError",
    "InvalidBckProvider",
    "InvalidObjectRangeIndex",
    "InvalidPipelineError",
    "InvalidURLException",
    "JobInfoNotFound",
    "NoTargetError",
    "ObjectChangedError",
    "Timeout",
    "UnexpectedHTTPStatusCode",
]


class APIRequestError(Exception):
    """An HTTP error status (>= 400) answered by a server.

    Example:
        >>> err = APIRequestError(404, "not found", "http://h/v1/objects/b/o")
        >>> err.status_code
        404
    """

    def __init__(
        self,
        status_code: int,
        message: str,
        req_url: str,
        req: requests.PreparedRequest | None = None,
    ) -> None:
        self.status_code = status_code
        self.message = message
        self.req_url = req_url
        self.req = req
        super().__init__(f"STATUS:{status_code}, MESSAGE:{message}, REQ_URL:{req_url}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.status_code, self.message, self.req_url, None))


class AISError(APIRequestError):
    """An error status from an AIS cluster that no more specific class matches."""


class AISRetryableError(AISError):
    """An AIS error that may go away when the request is repeated."""


class ErrObjNotFound(AISRetryableError):
    """The object does not exist (404 whose message names `prov://bck/obj`)."""


class ErrGETConflict(AISRetryableError):
    """A GET met a conflict (409), e.g. another writer holds the object's lock."""


class ErrBckNotFound(AISError):
    """The bucket does not exist."""


class ErrRemoteBckNotFound(AISError):
    """The remote (cloud or namespaced) bucket does not exist."""


class ErrBckAlreadyExists(AISError):
    """The bucket to create exists already."""


class ErrETLNotFound(AISError):
    """The named ETL does not exist."""


class ErrETLAlreadyExists(AISError):
    """An ETL of that name exists already."""


class InvalidBckProvider(Exception):
    """The provider is unknown, or not valid for the requested operation.

    Example:
        >>> str(InvalidBckProvider("xyz"))
        "Invalid bucket provider: 'xyz'"
    """

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        super().__init__(f"Invalid bucket provider: '{provider}'")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.provider,))


class Timeout(Exception):
    """An operation did not finish in the time allowed.

    Example:
        >>> str(Timeout("job 'x'", "after 5s"))
        "Timed out while waiting for job 'x'. after 5s"
    """

    def __init__(self, action: str, message: str = "") -> None:
        self.action = action
        self.message = message
        super().__init__(f"Timed out while waiting for {action}. {message}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.action, self.message))


class InvalidObjectRangeIndex(Exception):
    """An object range template got inconsistent indices."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(f"Invalid argument provided for object range index: {message}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message,))


class JobInfoNotFound(Exception):
    """The cluster has no information about the job."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(f"Job information not found on the cluster: {message}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message,))


class UnexpectedHTTPStatusCode(Exception):
    """A success status other than the expected one."""

    def __init__(self, expected_status_codes: Iterable[int], received_status_code: int) -> None:
        self.expected_status_codes = list(expected_status_codes)
        self.received_status_code = received_status_code
        expected = ", ".join(str(code) for code in self.expected_status_codes)
        super().__init__(
            "Unexpected status code received. "
            f"Expected one of the following: {expected}, "
            f"but received: {received_status_code}"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.expected_status_codes, self.received_status_code))


class InvalidURLException(Exception):
    """A `provider://bucket/object` URL lacks a part."""

    def __init__(self, url: str) -> None:
        self.url = url
        super().__init__(
            f"Invalid URL: '{url}'. Ensure it follows the format 'provider://bucket/object'."
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.url,))


class NoTargetError(Exception):
    """The cluster map has no target able to hold the object."""

    def __init__(self, total_nodes: int) -> None:
        self.total_nodes = total_nodes
        super().__init__(f"No available targets in the cluster map. Total nodes: {total_nodes}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.total_nodes,))


class InvalidPipelineError(ValueError):
    """An ETL pipeline header is malformed."""


class ObjectChangedError(Exception):
    """The object changed (size or version) while its byte ranges were being read, so the
    pieces would not belong together. Not part of the official SDK.

    Example:
        >>> str(ObjectChangedError("ais://b/o", "size 10 became 12"))
        'ais://b/o changed during a parallel download: size 10 became 12'
    """

    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        self.detail = detail
        super().__init__(f"{path} changed during a parallel download: {detail}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.detail))


class InsufficientSharedMemoryError(MemoryError):
    """Not enough shared memory (free RAM, cgroup limit or `/dev/shm` space) for a buffer;
    raised before any byte is downloaded. Not part of the official SDK.

    Example:
        >>> err = InsufficientSharedMemoryError(2 << 30, 1 << 30, "allocating a shared buffer")
        >>> err.requested, err.available
        (2147483648, 1073741824)
    """

    def __init__(self, requested: int, available: int | None, action: str) -> None:
        self.requested = requested
        self.available = available
        self.action = action
        have = "unknown" if available is None else f"{available:,}"
        super().__init__(
            f"not enough shared memory for {action}: need {requested:,} bytes, "
            f"{have} available (free RAM, cgroup memory limit or /dev/shm space)"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.requested, self.available, self.action))


class DownloadError(Exception):
    """A download job ended with files that failed (each `(name, error)`), or was aborted.
    Not part of the official SDK.

    Example:
        >>> str(DownloadError("dnl-1", [("a.bin", "status 404")], False))
        'download job dnl-1: 1 file failed: a.bin: status 404'
    """

    def __init__(self, job_id: str, errors: list[tuple[str, str]], aborted: bool) -> None:
        self.job_id = job_id
        self.errors = list(errors)
        self.aborted = aborted
        what = "aborted" if aborted else ""
        if errors:
            n = len(errors)
            first = f"{errors[0][0]}: {errors[0][1]}"
            more = f" (and {n - 1} more)" if n > 1 else ""
            failed = f"{n} file{'s' if n > 1 else ''} failed: {first}{more}"
            what = f"{what}, {failed}" if what else failed
        super().__init__(f"download job {job_id}: {what}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.job_id, self.errors, self.aborted))


class ETLDirectPutTransientError(Exception):
    """An ETL server's direct PUT to the next stage lost its connection before any reply (safe
    to retry). `bail_without_local_retry`: the source body could not be replayed, so the ETL
    server answers 503 with `Ais-Etl-Retry-Reason: direct-put-transient` and AIS retries the
    whole PUT; otherwise the ETL server's own retries were spent (502)."""

    def __init__(self, url: str, cause: Exception, bail_without_local_retry: bool = False) -> None:
        self.url = url
        self.cause = cause
        self.bail_without_local_retry = bail_without_local_retry
        super().__init__(
            f"direct_put to {url!r} failed with transient error: {type(cause).__name__}({cause})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.url, self.cause, self.bail_without_local_retry))
