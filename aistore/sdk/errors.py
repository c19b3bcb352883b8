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
    ├── ETLDirectPutTransientError  an ETL server's direct PUT lost its connection
    ├── InvalidBckProvider, Timeout, JobInfoNotFound, UnexpectedHTTPStatusCode,
    │   InvalidURLException, NoTargetError, InvalidObjectRangeIndex
    ├── ObjectChangedError         (ours) the object changed during a parallel download
    ├── DownloadError              (ours) a download job ended with failed files, or aborted
    ├── ValueError
    │   └── InvalidPipelineError
    └── MemoryError
        └── InsufficientSharedMemoryError  (ours) no room for a parallel-download buffer

They are defined in `aistore._internal.errors` (the transport below the SDK raises them)
and shown here, under their official module; classification of HTTP errors lives in
`aistore._internal.error_map`. Every exception here
survives pickling (DataLoader workers send them across processes): `__reduce__` returns the
constructor arguments. The prepared request held by `APIRequestError.req` is not carried
across, since its body may be an open file.

Example:
    >>> from aistore.sdk.errors import ErrObjNotFound, AISError
    >>> issubclass(ErrObjNotFound, AISError)
    True
"""

from __future__ import annotations

from aistore._internal.errors import (
    AISError,
    AISRetryableError,
    APIRequestError,
    DownloadError,
    ErrBckAlreadyExists,
    ErrBckNotFound,
    ErrETLAlreadyExists,
    ErrETLNotFound,
    ErrGETConflict,
    ErrObjNotFound,
    ErrRemoteBckNotFound,
    ETLDirectPutTransientError,
    InsufficientSharedMemoryError,
    InvalidBckProvider,
    InvalidObjectRangeIndex,
    InvalidPipelineError,
    InvalidURLException,
    JobInfoNotFound,
    NoTargetError,
    ObjectChangedError,
    Timeout,
    UnexpectedHTTPStatusCode,
)

__all__ = [
    "AISError",
    "AISRetryableError",
    "DownloadError",
    "APIRequestError",
    "ErrBckAlreadyExists",
    "ErrBckNotFound",
    "ETLDirectPutTransientError",
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

# Shown under their official module (repr, pickling by name, docs).
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
