"""Bucket tools: list buckets, bucket summary, list objects, object metadata.

Example:
    >>> register_bucket_tools(server, lambda: Client("http://localhost:8080"))  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Callable

from aistore.mcp.tools import ToolRegistry
from aistore.sdk.client import Client

__all__ = ["register_bucket_tools"]


def register_bucket_tools(mcp: ToolRegistry, get_client: Callable[[], Client]) -> None:
    """Add the bucket tools to `mcp` (anything with a FastMCP-style `tool()` decorator)."""

    @mcp.tool()
    def ais_list_buckets(provider: str = "ais") -> str:
        """Buckets of one provider ("ais", "aws", "gcp", "azure", "oci")."""
        buckets = get_client().cluster().list_buckets(provider=provider)
        listed = [{"name": b.name, "provider": b.provider} for b in buckets]
        return json.dumps({"provider": provider, "count": len(listed), "buckets": listed}, indent=2)

    @mcp.tool()
    def ais_bucket_summary(bucket_name: str, provider: str = "ais") -> str:
        """Object count and sizes of a bucket."""
        _, summary = get_client().bucket(bucket_name, provider=provider).info()
        return json.dumps(
            {"bucket": bucket_name, "provider": provider, "summary": summary},
            indent=2,
            default=str,
        )

    @mcp.tool()
    def ais_list_objects(
        bucket_name: str, provider: str = "ais", prefix: str = "", limit: int = 100
    ) -> str:
        """Up to `limit` objects of a bucket (name and size), optionally under `prefix`."""
        bucket = get_client().bucket(bucket_name, provider=provider)
        page = bucket.list_objects(prefix=prefix, page_size=limit)
        objects = [{"name": e.name, "size": e.size} for e in page.entries[:limit]]
        return json.dumps(
            {"bucket": bucket_name, "prefix": prefix, "count": len(objects), "objects": objects},
            indent=2,
        )

    @mcp.tool()
    def ais_object_info(bucket_name: str, object_name: str, provider: str = "ais") -> str:
        """Size, checksum, version, presence and custom metadata of one object."""
        obj = get_client().bucket(bucket_name, provider=provider).object(object_name)
        attrs = obj.head()
        return json.dumps(
            {
                "bucket": bucket_name,
                "object": object_name,
                "properties": {
                    "size": attrs.size,
                    "checksum_type": attrs.checksum_type,
                    "checksum_value": attrs.checksum_value,
                    "version": attrs.obj_version,
                    "present": attrs.present,
                    "custom_metadata": attrs.custom_metadata,
                },
            },
            indent=2,
            default=str,
        )
