"""Progress bars (tqdm) for the calls a person waits on: on when asked, off when asked, and by
default on only when stderr is a terminal, so that logs, CI runs and DataLoader workers never
get a bar.

A bar must never fail the call it decorates: construction or updates that raise are ignored.
"""

from __future__ import annotations

import contextlib
import sys
from types import TracebackType
from typing import Any

__all__ = ["ProgressBar", "progress_wanted"]


def progress_wanted(show: bool | None) -> bool:
    """`show` if given; None ("auto") is on when stderr is an interactive terminal."""
    if show is not None:
        return show
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


class ProgressBar:
    """A tqdm bar when `show` (see `progress_wanted`), else nothing; a context manager.

    Example:
        >>> with ProgressBar(False, total=2, desc="put", unit="file") as bar:
        ...     bar.update(1)
    """

    def __init__(
        self,
        show: bool | None,
        *,
        total: float | None = None,
        desc: str = "",
        unit: str = "it",
        unit_scale: bool = False,
    ) -> None:
        self._bar: Any = None
        if not progress_wanted(show):
            return
        with contextlib.suppress(Exception):
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=unit_scale, leave=True)

    @property
    def active(self) -> bool:
        """Whether a bar is shown."""
        return self._bar is not None

    def update(self, n: float = 1) -> None:
        """Advance by `n`."""
        if self._bar is not None:
            with contextlib.suppress(Exception):
                self._bar.update(n)

    def set_total(self, total: float | None) -> None:
        """Set (or correct) the total."""
        if self._bar is not None:
            with contextlib.suppress(Exception):
                self._bar.total = total
                self._bar.refresh()

    def close(self) -> None:
        """Remove the bar from the screen's live area (it stays printed)."""
        if self._bar is not None:
            with contextlib.suppress(Exception):
                self._bar.close()
            self._bar = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
