"""A sample part read from a file `<path>/<stem>.<file_type>`.

Example:
    >>> from pathlib import Path
    >>> DataAttribute(Path("/no/such"), "image", "jpg").get_data_for_entry("x")[0]
    'image.jpg'
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from aistore.sdk.dataset.config_attribute import ConfigAttribute
from aistore.sdk.utils import read_file_bytes

__all__ = ["DataAttribute"]

logger = logging.getLogger(__name__)


class DataAttribute(ConfigAttribute):
    """Files of one type in one directory; the sample key is `<name>.<file_type>`.

    Example:
        >>> DataAttribute(Path("imgs"), "image", "jpg").get_data_for_entry("none")[1] is None
        True

    Args:
        path: directory of the files.
        name: the attribute's name.
        file_type: extension, e.g. "jpg".
    """

    def __init__(self, path: Path, name: str, file_type: str) -> None:
        self.path = Path(path)
        self.name = name
        self.file_type = file_type

    def get_data_for_entry(self, filename: str) -> tuple[str, Any]:
        """(`<name>.<file_type>`, the file's bytes or None when it does not exist)."""
        key = f"{self.name}.{self.file_type}"
        try:
            data: bytes | None = read_file_bytes(self.path / f"{filename}.{self.file_type}")
        except FileNotFoundError as err:
            logger.warning("File not found: %s", err)
            data = None
        return key, data
