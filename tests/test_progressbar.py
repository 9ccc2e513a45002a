"""The progress line: on a terminal only, never with --quiet, only after a second."""

from __future__ import annotations

import io
import time

from labctl.progressbar import SHOW_AFTER_S, progress_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_shows_on_a_terminal_after_a_second_and_clears_itself() -> None:
    err = Terminal()
    with progress_bar(err, quiet=False, title="sizing") as update:
        assert update is not None
        update("hf org/model", 10, 1000)
        assert err.getvalue() == ""  # too early: most walks end before anyone waits
        time.sleep(SHOW_AFTER_S + 0.05)
        update("hf org/model", 123_456, 5_000_000_000)
        shown = err.getvalue()
    assert "sizing hf org/model" in shown and "123,456 entries" in shown and "5.0 GB" in shown


def test_nothing_when_piped_or_quiet() -> None:
    with progress_bar(io.StringIO(), quiet=False, title="x") as update:
        assert update is None
    with progress_bar(Terminal(), quiet=True, title="x") as update:
        assert update is None
