"""Bucket providers: where a bucket's objects live.

Example:
    >>> from aistore._internal.provider import Provider
    >>> Provider.parse("s3") is Provider.AMAZON
    True
"""

from __future__ import annotations

from enum import Enum

from aistore._internal.errors import InvalidBckProvider

__all__ = ["ALIAS_GS", "ALIAS_S3", "Provider", "provider_aliases"]

ALIAS_S3 = "s3"
ALIAS_GS = "gs"


class Provider(Enum):
    """A bucket provider; `ais` is the cluster itself, the others are remote backends.

    Example:
        >>> Provider("gcp").is_remote()
        True
    """

    AIS = "ais"
    AMAZON = "aws"
    AZURE = "azure"
    GOOGLE = "gcp"
    OCI = "oci"

    def is_remote(self) -> bool:
        """Whether objects live outside the cluster."""
        return self is not Provider.AIS

    @staticmethod
    def parse(provider: Provider | str) -> Provider:
        """Return `provider` as a `Provider`, accepting the aliases `s3` and `gs`.

        Raises:
            InvalidBckProvider: the string names no provider.
        """
        if isinstance(provider, Provider):
            return provider
        name = provider_aliases.get(provider, provider)
        try:
            return Provider(name)
        except ValueError as err:
            raise InvalidBckProvider(name) from err


provider_aliases: dict[str, str] = {
    ALIAS_GS: Provider.GOOGLE.value,
    ALIAS_S3: Provider.AMAZON.value,
}
