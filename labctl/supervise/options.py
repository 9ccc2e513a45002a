"""What one supervised run is given: its options (from the command line and the config)
and the services it uses (environment, clock, redactor, signals, terminal, notes)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from labctl.backends.child import Signals
from labctl.diagnose import Catalog
from labctl.redact import Redactor


@dataclass(frozen=True)
class Options:
    argv: tuple[str, ...]
    name: str
    cwd: str | None
    max_retries: int
    stall_after: float
    kill_grace: float
    allow_install: bool
    families: Mapping[str, frozenset[str]]
    state_dir: Path
    catalog: Catalog
    escalate_to: Path | None = None
    notify: str | None = None
    keep_s: float = 14 * 86400.0


@dataclass
class Services:
    environ: Mapping[str, str]
    clock: Callable[[], float]
    redactor: Redactor
    signals: Signals
    tee: IO[bytes] | None = None
    note: Callable[[str], None] = lambda message: None
    pid: int = field(default_factory=os.getpid)
