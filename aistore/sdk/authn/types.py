"""Documents of the AuthN API: login, tokens, clusters, roles, users.

Example:
    >>> LoginMsg(password="pw", expires_in=1.5).as_dict()
    {'password': 'pw', 'expires_in': 1500000000}
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator
from typing import Any

from pydantic import BaseModel, Field, RootModel

from aistore.sdk.authn.access_attr import AccessAttr
from aistore.sdk.const import NANOSECONDS_IN_SECOND
from aistore.sdk.types import BucketModel

__all__ = [
    "BucketPermission",
    "ClusterInfo",
    "ClusterList",
    "ClusterPermission",
    "LoginMsg",
    "RoleInfo",
    "RolesList",
    "TokenMsg",
    "UserInfo",
    "UserMap",
]


class LoginMsg(BaseModel):
    """A login: the password, and the token's lifetime in seconds (server default if None).

    Example:
        >>> LoginMsg(password="pw").as_dict()
        {'password': 'pw', 'expires_in': None}
    """

    password: str
    expires_in: int | float | None = Field(None, description="Token lifetime in seconds.")

    def as_dict(self) -> dict[str, Any]:
        """Wire form: the lifetime in nanoseconds."""
        data = self.model_dump()
        if self.expires_in is not None:
            data["expires_in"] = int(self.expires_in * NANOSECONDS_IN_SECOND)
        return data


class TokenMsg(BaseModel):
    """A token, as login returns it and revocation takes it.

    Example:
        >>> TokenMsg(token="jwt").model_dump()
        {'token': 'jwt'}
    """

    token: str


class ClusterInfo(BaseModel):
    """A cluster registered with AuthN: its UUID, alias and URLs.

    Example:
        >>> ClusterInfo(id="Xk2e9aPq1", alias="main").urls
        []
    """

    id: str
    alias: str | None = None
    urls: list[str] = []


class ClusterList(BaseModel):
    """The registered clusters by id.

    Example:
        >>> ClusterList().clusters
        {}
    """

    clusters: dict[str, ClusterInfo] = {}


class ClusterPermission(BaseModel):
    """Permissions on one cluster (`perm`: the bits as a decimal string).

    Example:
        >>> str(ClusterPermission(id="c1", perm="12288"))
        'ClusterPermission(id=c1, perm=LIST_BUCKETS,SHOW_CLUSTER)'
    """

    id: str
    perm: str

    def describe(self) -> str:
        """The permission names."""
        return AccessAttr.describe(int(self.perm))

    def __str__(self) -> str:
        return f"ClusterPermission(id={self.id}, perm={self.describe()})"


class BucketPermission(BaseModel):
    """Permissions on one bucket.

    Example:
        >>> BucketPermission(bck=BucketModel(name="b", provider="ais"), perm="1").describe()
        'GET'
    """

    bck: BucketModel
    perm: str

    def describe(self) -> str:
        """The permission names."""
        return AccessAttr.describe(int(self.perm))

    def __str__(self) -> str:
        return f"BucketPermission(bck={self.bck}, perm={self.describe()})"


class RoleInfo(BaseModel):
    """A role: name, description, cluster and bucket permissions, admin flag.

    Example:
        >>> RoleInfo(name="Guest", desc="read only").admin
        False
    """

    name: str
    desc: str
    clusters: list[ClusterPermission] | None = None
    buckets: list[BucketPermission] | None = None
    admin: bool = False

    def __str__(self) -> str:
        clusters = "None" if self.clusters is None else ", ".join(map(str, self.clusters))
        buckets = "None" if self.buckets is None else ", ".join(map(str, self.buckets))
        return (
            f"RoleInfo(name={self.name}, desc={self.desc}, clusters=[{clusters}], "
            f"buckets=[{buckets}], admin={self.admin})"
        )


class RolesList(RootModel[list[RoleInfo]]):
    """A list of roles.

    Example:
        >>> len(RolesList.model_validate([{"name": "r", "desc": ""}]))
        1
    """

    def __iter__(self) -> Iterator[RoleInfo]:  # type: ignore[override]
        return iter(self.root)

    def __getitem__(self, item: int) -> RoleInfo:
        return self.root[item]

    def __len__(self) -> int:
        return len(self.root)

    def __str__(self) -> str:
        return "\n".join(str(role) for role in self.root)


class UserInfo(BaseModel):
    """A user: id, password (only when sending) and roles.

    Example:
        >>> UserInfo(id="u", password="pw", roles=RolesList([])).dict()
        {'id': 'u', 'roles': [], 'pass': 'pw'}
    """

    id: str
    password: str | None = None
    roles: RolesList

    def dict(self, **kwargs: Any) -> dict[str, Any]:
        """Wire form: the password under `pass`."""
        out = self.model_dump(**kwargs)
        if out.get("password") is not None:
            out["pass"] = out.pop("password")
        return out


class UserMap(RootModel[dict[str, UserInfo]]):
    """Users by id.

    Example:
        >>> len(UserMap.model_validate({"u": {"id": "u", "roles": []}}))
        1
    """

    def items(self) -> ItemsView[str, UserInfo]:
        """(id, user) pairs."""
        return self.root.items()

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]
        return iter(self.root)

    def __getitem__(self, item: str) -> UserInfo:
        return self.root[item]

    def __len__(self) -> int:
        return len(self.root)

    def __str__(self) -> str:
        return "\n".join(str(user) for user in self.root.values())
