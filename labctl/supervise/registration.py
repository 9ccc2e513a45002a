"""A running supervision registers itself in the state dir, so `poll` can report it as a job.

One small JSON file per run, `<state_dir>/supervise/runs/<run_id>.json`, replaced atomically
(and redacted) at every change; its fields, and how poll reads them, are documented in
labctl/cluster/supervise.py (the `supervise` scheduler). Old runs are pruned here.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from labctl.cluster.supervise import (
    LIVE_STATES,
    SCHEMA,
    read_registrations,
    runs_dir,
    supervisor_alive,
)
from labctl.fsops import atomic_write_text
from labctl.records import parse_rfc3339
from labctl.redact import Redactor


class Registration:
    """The registration file of the run in progress. A state dir that takes no write does
    not stop the run: `on_fault(exc)` hears of it and the file stays as it last was."""

    def __init__(
        self,
        state_dir: Path,
        data: dict[str, Any],
        redactor: Redactor,
        on_fault: Callable[[OSError], None] | None = None,
    ) -> None:
        self.path = runs_dir(state_dir) / f"{data['run_id']}.json"
        self.data = {"schema": SCHEMA, **data}
        self.redactor = redactor
        self.on_fault = on_fault
        self._guarded(lambda: self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700))

    def update(self, **fields: Any) -> None:
        self.data.update(fields)
        text = json.dumps(self.redactor.value(self.data), ensure_ascii=False, indent=1)
        self._guarded(lambda: atomic_write_text(self.path, text + "\n", mode=0o600))

    def _guarded(self, write: Callable[[], object]) -> None:
        try:
            write()
        except OSError as exc:
            if self.on_fault is None:
                raise
            self.on_fault(exc)


def prune(state_dir: Path, *, now: float, keep_s: float) -> list[str]:
    """Forget runs that ended (or whose supervisor stopped updating) more than `keep_s` ago:
    their registration and attempt logs go (escalation files stay). Returns their run ids."""
    gone = []
    for reg in read_registrations(runs_dir(state_dir)):
        last = parse_rfc3339(reg.get("ended") or reg.get("updated"))
        if last is None or now - last < keep_s:
            continue
        if reg.get("state") in LIVE_STATES and supervisor_alive(reg):
            continue
        run_id = str(reg.get("run_id"))
        if "/" in run_id or run_id.startswith("."):
            continue
        shutil.rmtree(state_dir / "supervise" / "logs" / run_id, ignore_errors=True)
        try:
            (runs_dir(state_dir) / f"{run_id}.json").unlink(missing_ok=True)
        except OSError:  # a read-only state dir: pruned another time
            continue
        gone.append(run_id)
    return gone
