"""The environment cron gives a job, for tests that run labctl as a crontab line would."""

from __future__ import annotations

from pathlib import Path


def cron_env(home: Path) -> dict[str, str]:
    """What cron gives a job: no TTY, a minimal PATH, HOME/LOGNAME/SHELL and nothing else."""
    return {"HOME": str(home), "LOGNAME": "root", "SHELL": "/bin/sh", "PATH": "/usr/bin:/bin"}
