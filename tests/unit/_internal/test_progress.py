"""The progress bar helper: on when asked, off when asked, by default only on a terminal, and
never an error of its own."""

from __future__ import annotations

import io

import pytest

from aistore._internal import progress
from aistore._internal.progress import ProgressBar, progress_wanted


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_default_follows_whether_stderr_is_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress.sys, "stderr", io.StringIO())
    assert progress_wanted(None) is False
    assert progress_wanted(True) is True
    monkeypatch.setattr(progress.sys, "stderr", Tty())
    assert progress_wanted(None) is True
    assert progress_wanted(False) is False


def test_bar_draws_only_when_wanted(capfd: pytest.CaptureFixture[str]) -> None:
    with ProgressBar(False, total=3, desc="quiet") as bar:
        bar.update(3)
        assert not bar.active
    assert capfd.readouterr().err == ""
    with ProgressBar(True, total=3, desc="loud", unit="file") as bar:
        assert bar.active
        bar.update(2)
        bar.set_total(2)
    err = capfd.readouterr().err
    assert "loud" in err and "2/2" in err


def test_a_failing_bar_never_fails_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    bar = ProgressBar(True, total=1)

    class Broken:
        n = 0

        def update(self, n: float) -> None:
            raise OSError("stderr closed")

        def close(self) -> None:
            raise OSError("stderr closed")

    monkeypatch.setattr(bar, "_bar", Broken())
    bar.update(1)
    bar.close()
    assert not bar.active
