"""Package version (kept apart so build tools can read it without importing the SDK)."""

# This distribution's version (aistore-embedded); the official SDK's API it provides is 2.0.0's
# (docs/sdk-compatibility.md).
__version__ = "0.2.0"

__all__ = ["__version__"]
