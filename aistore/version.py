"""Package version (kept apart so build tools can read it without importing the SDK)."""

__version__ = "0.1.0"

__all__ = ["__version__"]
