"""A dSort job: start it from a spec, query, wait, abort.

Example:
    >>> dsort = client.dsort()  # doctest: +SKIP
    >>> job_id = dsort.start("spec.json")  # doctest: +SKIP
    >>> dsort.wait(timeout=600)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime
from pathlib import Path

from pydantic import TypeAdapter

from aistore.sdk.bucket import Bucket as Bucket
from aistore.sdk.const import DEFAULT_DSORT_WAIT_TIMEOUT as DEFAULT_DSORT_WAIT_TIMEOUT
from aistore.sdk.const import (
    DSORT_ABORT,
    HTTP_METHOD_DELETE,
    HTTP_METHOD_GET,
    HTTP_METHOD_POST,
    URL_PATH_DSORT,
)
from aistore.sdk.const import DSORT_UUID as DSORT_UUID
from aistore.sdk.dsort.ekm import EKM_FILE_NAME, ExternalKeyMap
from aistore.sdk.dsort.framework import DsortFramework, load_spec_file
from aistore.sdk.dsort.types import JobInfo
from aistore.sdk.errors import Timeout
from aistore.sdk.request_client import RequestClient as RequestClient
from aistore.sdk.utils import probing_frequency, validate_file
from aistore.sdk.wait_result import WaitResult

__all__ = ["Dsort"]

logger = logging.getLogger(__name__)

# The dSort API under /v1, its abort action and job-id parameter; the default wait, seconds.
_DSORT_UUID = "uuid"
_DEFAULT_WAIT_TIMEOUT = 300


class Dsort:
    """A dSort job of the cluster (`dsort_id` is set by `start`).

    Example:
        >>> info = client.dsort("job-id").get_job_info()  # doctest: +SKIP

    Args:
        client: the cluster's request client.
        dsort_id: the job's id, for a job started before.
    """

    def __init__(self, client: RequestClient, dsort_id: str = "") -> None:
        self._client = client
        self._dsort_id = dsort_id

    @property
    def dsort_id(self) -> str:
        """The job's id."""
        return self._dsort_id

    def start(self, spec: str | Path | DsortFramework) -> str:
        """Start the job from a JSON/YAML spec file (sent as it is) or a `DsortFramework`.

        With an `ExternalKeyMap` output, the map is first stored as `EKM_FILE_NAME` in the
        input bucket.

        Raises:
            ValueError: a missing file, another suffix, or a file without a mapping.
            AISError: the cluster refused.
        """
        if isinstance(spec, (str, Path)):
            validate_file(spec)
            body = load_spec_file(spec)
            if not isinstance(body, dict):
                raise ValueError("Specification must contain a mapping")
        elif isinstance(spec, DsortFramework):
            body = spec.to_spec()
            output = spec.output_shards.format
            if isinstance(output, ExternalKeyMap):
                from aistore.sdk.bucket import Bucket

                bucket = Bucket(spec.input_shards.bck.name, client=self._client)
                ekm = bucket.object(EKM_FILE_NAME)
                ekm.get_writer().put_content(json.dumps(output.as_dict()).encode())
                body["ekm_file"] = ekm.get_url()
                body["ekm_file_sep"] = ""
        else:
            raise ValueError("spec must be a Path or a DsortFramework instance")
        self._dsort_id = self._client.request(HTTP_METHOD_POST, path=URL_PATH_DSORT, json=body).text
        return self._dsort_id

    def abort(self) -> None:
        """Abort the job."""
        self._client.request(
            HTTP_METHOD_DELETE,
            path=f"{URL_PATH_DSORT}/{DSORT_ABORT}",
            params={_DSORT_UUID: [self._dsort_id]},
        )

    def get_job_info(self) -> dict[str, JobInfo]:
        """The job on each target, by target id."""
        resp = self._client.request(
            HTTP_METHOD_GET, path=URL_PATH_DSORT, params={_DSORT_UUID: [self._dsort_id]}
        )
        return TypeAdapter(dict[str, JobInfo]).validate_json(resp.content)

    def wait(self, timeout: int = _DEFAULT_WAIT_TIMEOUT, verbose: bool = True) -> WaitResult:
        """Wait until every target finished the job or one aborted it.

        Raises:
            Timeout: not done within `timeout` seconds.
        """
        deadline = time.monotonic() + timeout
        pause = probing_frequency(timeout)
        while True:
            infos = list(self.get_job_info().values())
            aborted = any(i.metrics.aborted for i in infos)
            finished = bool(infos) and all(i.metrics.shard_creation.finished for i in infos)
            if finished or aborted:
                break
            if time.monotonic() > deadline:
                if verbose:
                    logger.error("dsort job '%s' not done after %ds", self._dsort_id, timeout)
                raise Timeout(f"dsort job '{self._dsort_id}'", f"after {timeout}s")
            time.sleep(pause)
        errors = [e for i in infos for e in (i.metrics.errors or []) if e]
        ends = [_parse_time(i.finish_time) for i in infos if i.finish_time] if finished else []
        return WaitResult(
            job_id=self._dsort_id,
            success=finished and not aborted,
            error=errors[0] if errors else None,
            end_time=max(ends) if ends else None,
        )


def _parse_time(value: str) -> datetime:
    from aistore._internal.timefmt import parse_go_time

    return parse_go_time(value)
