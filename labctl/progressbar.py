"""A progress line on stderr for long walks: only on a terminal, never with --quiet, and
only once the work has taken more than a second. rich is imported only when it shows.

No refresh thread: the walker forks helpers, so the bar is redrawn from the caller's
own updates (at most ten times a second).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

ProgressFn = Callable[[str, int, int], None]  # (what, entries seen, bytes so far)
SHOW_AFTER_S = 1.0
REDRAW_S = 0.1


def _isatty(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


@contextlib.contextmanager
def progress_bar(stderr: IO[str], *, quiet: bool, title: str) -> Iterator[ProgressFn | None]:
    """Yields an update function, or None when no bar may be shown."""
    if quiet or not _isatty(stderr):
        yield None
        return
    state: dict[str, Any] = {"t0": time.monotonic(), "last": 0.0, "bar": None, "task": None}

    def update(what: str, entries: int, nbytes: int) -> None:
        now = time.monotonic()
        if now - state["t0"] < SHOW_AFTER_S or now - state["last"] < REDRAW_S:
            return
        state["last"] = now
        if state["bar"] is None:
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            bar = Progress(
                SpinnerColumn(),
                TextColumn(title + " {task.description}"),
                TextColumn("{task.fields[entries]:,} entries, {task.fields[size]}"),
                TimeElapsedColumn(),
                console=Console(file=stderr),
                transient=True,
                auto_refresh=False,
            )
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task(what, entries=0, size="0 B")
        from rich.filesize import decimal

        bar = state["bar"]
        bar.update(state["task"], description=what[-60:], entries=entries, size=decimal(nbytes))
        bar.refresh()

    try:
        yield update
    finally:
        if state["bar"] is not None:
            state["bar"].stop()
