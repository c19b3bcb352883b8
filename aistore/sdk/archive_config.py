"""Reading files out of an archived object (.tar, .tgz, .tar.lz4, .zip).

Example:
    >>> from aistore.sdk.archive_config import ArchiveConfig, ArchiveMode
    >>> cfg = ArchiveConfig(regex="log", mode=ArchiveMode.SUFFIX)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["ArchiveConfig", "ArchiveMode"]


class ArchiveMode(Enum):
    """How `ArchiveConfig.regex` matches file names inside the archive.

    Example:
        >>> ArchiveMode("prefix") is ArchiveMode.PREFIX
        True
    """

    REGEXP = "regexp"
    PREFIX = "prefix"
    SUFFIX = "suffix"
    SUBSTR = "substr"
    WDSKEY = "wdskey"


@dataclass
class ArchiveConfig:
    """Select one file (`archpath`) or several (`regex` + `mode`) inside an archived object.

    Example:
        >>> ArchiveConfig(archpath="dir/file.txt").archpath
        'dir/file.txt'

    Raises:
        ValueError: `mode` without `regex`, `regex` without `mode`, or `regex` with `archpath`.
    """

    archpath: str = ""
    regex: str = ""
    mode: ArchiveMode | None = None

    def __post_init__(self) -> None:
        if self.mode and not self.regex:
            raise ValueError("Archive mode requires archive regex")
        if self.regex and not self.mode:
            raise ValueError("Archive regex requires archive mode")
        if self.regex and self.archpath:
            raise ValueError("Cannot use both Archive regex and Archive path")
