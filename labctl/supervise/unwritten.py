"""What supervise could not write (issue 22): a full disk, a read-only or foreign state dir
never stops the supervised command, and the run says so once per thing it lost.

The attempt log stops (the child's output is still read, so the child never blocks on its
pipe, and still goes to the terminal); the registration stops moving (poll then sees the
run as it last was); an escalation file is not written (the `escalated` event on stdout
still says everything). Each gives one `state_unwritable` record (exit 3) naming what was
not written, the errno, the free space and what to do, before the event it concerns. A
copy outside the state dir the user asked for (--escalate-to) that the disk refuses is a
`not_written` record instead (exit 3 too).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any


class Unwritten:
    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self._pending: dict[str, OSError] = {}
        self._told: set[str] = set()
        self._files: list[dict[str, Any]] = []

    def note(self, what: str, exc: OSError) -> None:
        """`what` (e.g. "attempt 2's log") was not (fully) written because of `exc`."""
        if what not in self._told:
            self._pending.setdefault(what, exc)

    def lost(self, path: Path, exc: OSError, what: str) -> None:
        """A file outside the state dir the user asked for (an --escalate-to copy) was not
        written: one `not_written` record, with the other events."""
        from labctl.faults import not_written

        self._files.append(not_written(path, exc, what))

    def records(self) -> Iterator[dict[str, Any]]:
        from labctl.faults import fault_record

        while self._files:
            yield self._files.pop(0)
        while self._pending:
            what, exc = next(iter(self._pending.items()))
            del self._pending[what]
            self._told.add(what)
            yield fault_record(
                "state_unwritable",
                self.state_dir,
                exc,
                f"supervise could not write {what} under {self.state_dir} (the command ran "
                "on regardless)",
                saved=False,
            )
