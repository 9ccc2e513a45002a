"""What one migrate-experiment run works with (built by the command from the config)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labctl.backends.crontab import CrontabTarget

Record = dict[str, Any]


def no_hook(point: str) -> None:
    """The crash hook outside tests: nothing."""


@dataclass(frozen=True)
class Setup:
    name: str
    root: Path
    state_dir: Path
    log_dir: Path
    crontabs: Sequence[CrontabTarget] = ()
    refill_files: Sequence[Path] = ()
    job_patterns: Sequence[str] = ()
    reason: str | None = None
    apply: bool = False
    force: bool = False
    who: str = "unknown"
    host: str = "unknown"
    now: Callable[[], float] = lambda: 0.0
    redact: Callable[[str], str] = lambda text: text
    jobs: Sequence[Record] | None = None  # None: no job information at all
    jobs_source: str = "store"
    # why the job information cannot be trusted to be complete: (reason, what) — a stale
    # store, a cluster poll never read, error records in --jobs (None: it can be)
    jobs_problem: tuple[str, str] | None = None
    lock_wait_s: float = 10.0
    hook: Callable[[str], None] = no_hook  # a test stops the process at a named point

    @property
    def active(self) -> Path:
        return self.root / "active" / self.name

    @property
    def complete(self) -> Path:
        return self.root / "complete" / self.name


@dataclass
class Step:
    step: str
    outcome: str  # done, already_done, would_do, nothing, skipped, refused, failed
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def record(self) -> Record:
        return {"step": self.step, "outcome": self.outcome, "message": self.message, **self.details}


class Stop(Exception):
    """A step refused or failed: the migration goes no further (nothing half-done)."""

    def __init__(self, step: Step, reason: str) -> None:
        super().__init__(step.message)
        self.step = step
        self.reason = reason
