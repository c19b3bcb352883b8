"""Client of the AIS AuthN service: login and logout, users, roles, clusters, tokens.

AuthN is a separate server (default port 52001) that issues the JWTs a cluster checks.

Example:
    >>> from aistore.sdk.authn import AuthNClient
    >>> authn = AuthNClient("http://localhost:52001")  # doctest: +SKIP
    >>> token = authn.login("admin", "admin")  # doctest: +SKIP
"""

from aistore.sdk.authn.authn_client import AuthNClient
from aistore.sdk.authn.cluster_manager import ClusterManager

__all__ = ["AuthNClient", "ClusterManager"]  # the official package re-exports both here
