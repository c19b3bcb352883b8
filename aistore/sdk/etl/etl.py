"""One ETL of a cluster: initialize, inspect, start, stop, delete, logs.

Every call is a request to the cluster's `/v1/etl` API. A cluster without ETL (ours, or AIS
outside Kubernetes) refuses them; the refusal is raised as `AISError` (or a subclass) with
the server's status and message, as for any failed request.

Example:
    >>> etl = client.etl("md5-etl")  # doctest: +SKIP
    >>> job_id = etl.init(image="aistorage/transformer_md5:latest")  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import TypeAdapter

from aistore.sdk.const import (
    HTTP_METHOD_DELETE,
    HTTP_METHOD_GET,
    HTTP_METHOD_POST,
    HTTP_METHOD_PUT,
    QPARAM_UUID,
    URL_PATH_ETL,
    URL_PATH_ETL_LOGS,
)
from aistore.sdk.errors import AISError
from aistore.sdk.etl.etl_const import (
    DEFAULT_ETL_COMM,
    DEFAULT_ETL_OBJ_TIMEOUT,
    DEFAULT_ETL_TIMEOUT,
    ETL_COMM_OPTIONS,
    ETL_SUPPORTED_PYTHON_VERSIONS,
)
from aistore.sdk.etl.webserver.base_etl_server import ETLServer as ETLServer
from aistore.sdk.etl.webserver.utils import serialize_class as serialize_class
from aistore.sdk.types import EnvVar, ETLDetails, ETLNodeLogs, ETLRuntimeSpec, ETLSpecMsg
from aistore.sdk.utils import convert_to_seconds as convert_to_seconds

if TYPE_CHECKING:
    from aistore.sdk.request_client import RequestClient

__all__ = ["Etl"]

# Paths of the ETL API under /v1.
_NAME_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])")
_NAME_MIN, _NAME_MAX = 6, 32
_DURATION_RE = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}

_S = TypeVar("_S", bound="type[ETLServer]")


class Etl:
    """An ETL of the cluster, by name; `a >> b` is the pipeline a, then b.

    Example:
        >>> pipeline = client.etl("resize-etl") >> client.etl("to-jpeg")  # doctest: +SKIP
        >>> pipeline.name, pipeline.pipeline  # doctest: +SKIP
        ('resize-etl', ['to-jpeg'])

    Args:
        client: the cluster's request client.
        name: 6 to 32 characters of `[a-z0-9-]`, starting and ending alphanumeric.

    Raises:
        ValueError: an invalid name.
    """

    def __init__(self, client: RequestClient, name: str) -> None:
        self.validate_etl_name(name)
        self._client = client
        self._name = name
        self._pipeline: list[str] = []  # the stages after this one

    def __rshift__(self, other: Etl) -> Etl:
        combined = Etl(self._client, self._name)
        combined._pipeline = [*self._pipeline, other._name, *other._pipeline]
        return combined

    def __enter__(self) -> Etl:
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop and delete the ETL; a cluster's refusal is ignored here."""
        try:
            self.stop()
            self.delete()
        except AISError:
            pass

    @property
    def name(self) -> str:
        """The ETL's name (the first stage of a pipeline)."""
        return self._name

    @property
    def pipeline(self) -> list[str]:
        """Names of the stages after this one."""
        return self._pipeline

    def init(
        self,
        image: str,
        command: list[str] | str | None = None,
        comm_type: str = DEFAULT_ETL_COMM,
        init_timeout: str = DEFAULT_ETL_TIMEOUT,
        obj_timeout: str = DEFAULT_ETL_OBJ_TIMEOUT,
        direct_put: bool = False,
        direct_file_access: bool = False,
        **kwargs: Any,
    ) -> str:
        """Start the ETL from a container image; returns the cluster's job id.

        Args:
            image: the container image.
            command: the container's command (a string is split on whitespace).
            comm_type: one of `ETL_COMM_OPTIONS`.
            init_timeout: how long the cluster may take to start it (Go duration).
            obj_timeout: how long one object's transform may take.
            direct_put: the container writes results to their destination itself.
            direct_file_access: the container reads objects from the target's disks.
            kwargs: environment variables of the container.

        Raises:
            ValueError: an unknown `comm_type`.
            AISError: the cluster refused.
        """
        if comm_type not in ETL_COMM_OPTIONS:
            raise ValueError(f"communication_type should be one of: {', '.join(ETL_COMM_OPTIONS)}")
        if isinstance(command, str):
            command = command.split()
        env = [EnvVar(name=k, value=v) for k, v in kwargs.items()]
        if direct_file_access:
            env.append(EnvVar(name="ETL_DIRECT_FQN", value="true"))
        msg = ETLSpecMsg(
            name=self._name,
            comm_type=comm_type,
            init_timeout=init_timeout,
            obj_timeout=obj_timeout,
            direct_put=direct_put,
            runtime=ETLRuntimeSpec(image=image, command=command, env=env or None),
        )
        resp = self._client.request(
            HTTP_METHOD_PUT,
            path=URL_PATH_ETL,
            json=msg.as_dict(),
            timeout=_seconds(init_timeout),
        )
        return resp.text

    def init_class(
        self,
        *,
        dependencies: list[str] | None = None,
        os_packages: list[str] | None = None,
        comm_type: str = DEFAULT_ETL_COMM,
        init_timeout: str = DEFAULT_ETL_TIMEOUT,
        obj_timeout: str = DEFAULT_ETL_OBJ_TIMEOUT,
        direct_put: bool = True,
        direct_file_access: bool = False,
        **kwargs: Any,
    ) -> Callable[[_S], _S]:
        """A class decorator that starts the ETL from an `ETLServer` subclass.

        The class is pickled (`serialize_class`) into the environment of the official Python
        runtime image for this interpreter's version.

        Raises:
            TypeError: the decorated object is not an `ETLServer` subclass.
            ValueError: this Python version has no runtime image.
            AISError: the cluster refused.
        """
        from aistore.sdk.etl.webserver.utils import serialize_class

        def decorator(cls: _S) -> _S:
            env: dict[str, Any] = {"ETL_CLASS_PAYLOAD": serialize_class(cls)}
            if dependencies:
                env["PACKAGES"] = ",".join(dependencies)
            if os_packages:
                env["OS_PACKAGES"] = ",".join(os_packages)
            env.update(kwargs)
            self.init(
                image=f"aistorage/runtime_python:{_python_runtime()}",
                comm_type=comm_type,
                init_timeout=init_timeout,
                obj_timeout=obj_timeout,
                direct_put=direct_put,
                direct_file_access=direct_file_access,
                **env,
            )
            return cls

        return decorator

    def view(self, job_id: str = "") -> ETLDetails:
        """The ETL's initialization and object errors (of offline job `job_id` if given)."""
        return self._client.request_deserialize(
            HTTP_METHOD_GET,
            path=f"{URL_PATH_ETL}/{self._name}",
            res_model=ETLDetails,
            params={QPARAM_UUID: job_id},
        )

    def start(self) -> None:
        """Resume the stopped ETL."""
        self._post(f"{self._name}/start")

    def stop(self) -> None:
        """Stop the ETL's containers and its transforms; it can be started again."""
        self._post(f"{self._name}/stop")

    def delete(self) -> None:
        """Delete the stopped ETL."""
        self._client.request(
            HTTP_METHOD_DELETE,
            path=f"{URL_PATH_ETL}/{self._name}",
            timeout=_seconds(DEFAULT_ETL_TIMEOUT),
        )

    def logs(self, target_id: str = "") -> list[ETLNodeLogs]:
        """The logs of the ETL's containers (on `target_id` only, if given), decoded."""
        path = f"{URL_PATH_ETL}/{self._name}/{URL_PATH_ETL_LOGS}"
        if target_id:
            path = f"{path}/{target_id}"
        resp = self._client.request(
            HTTP_METHOD_GET, path=path, timeout=_seconds(DEFAULT_ETL_TIMEOUT)
        )
        entries = TypeAdapter(list[ETLNodeLogs]).validate_json(resp.content)
        for entry in entries:  # the cluster sends each log base64-encoded
            entry.logs = base64.b64decode(entry.logs).decode("utf-8", errors="replace")
        return entries

    @staticmethod
    def validate_etl_name(name: str) -> None:
        """Check an ETL name's length (6 to 32) and characters.

        Raises:
            ValueError: what is wrong with it.
        """
        prefix = f"ETL name '{name}' "
        if len(name) < _NAME_MIN:
            raise ValueError(f"{prefix}is too short")
        if len(name) > _NAME_MAX:
            raise ValueError(f"{prefix}is too long")
        if not _NAME_RE.fullmatch(name):
            raise ValueError(
                f"{prefix}is invalid: must start/end with a lowercase letter/number, "
                "and can only contain [a-z0-9-]"
            )

    def _post(self, suffix: str) -> None:
        self._client.request(
            HTTP_METHOD_POST,
            path=f"{URL_PATH_ETL}/{suffix}",
            timeout=_seconds(DEFAULT_ETL_TIMEOUT),
        )


def _python_runtime() -> str:
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    if version not in ETL_SUPPORTED_PYTHON_VERSIONS:
        supported = ", ".join(ETL_SUPPORTED_PYTHON_VERSIONS)
        raise ValueError(f"Unsupported Python version {version}; supported: {supported}")
    return version


def _seconds(duration: str) -> float:
    """Seconds of a Go duration such as "5m", "45s" or "1h30m"."""
    parts = _DURATION_RE.findall(duration)
    if not parts or "".join(n + u for n, u in parts) != duration:
        raise ValueError(f"invalid duration {duration!r}")
    return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)
