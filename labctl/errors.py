"""Exit codes and the error types the CLI maps to them.

Helpers never exit the process: they raise a `LabctlError` (or yield an `error` record) and
`labctl.cli.main` alone turns that into an exit code. Each code means one thing:

  0  the command ran and found nothing that needs a person
  1  the command ran and found something that needs a person (a stalled job, a failed
     gate, a file that could not be verified, a malformed input line)
  2  usage or configuration error: nothing was done
  3  a backend (cluster, database, file system, lock) was partly or wholly unavailable;
     what could be done was done and the rest is in `error` records
  130 interrupted (Ctrl-C)
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    ATTENTION = 1
    USAGE = 2
    BACKEND = 3
    INTERRUPTED = 130


# Worst-of ordering used when combining record severities: 130 > 2 > 3 > 1 > 0.
_RANK = {
    ExitCode.OK: 0,
    ExitCode.ATTENTION: 1,
    ExitCode.BACKEND: 2,
    ExitCode.USAGE: 3,
    ExitCode.INTERRUPTED: 4,
}


def worst(a: ExitCode, b: ExitCode) -> ExitCode:
    """The more serious of two exit codes (interrupted > usage > backend > attention > ok)."""
    return a if _RANK.get(a, 0) >= _RANK.get(b, 0) else b


# The exit code an `error` record contributes, by its reason. Reasons not listed count as
# ATTENTION: something a person should look at, but not a backend outage.
BACKEND_REASONS = frozenset(
    {
        "unreachable",
        "timeout",
        "bad_output",
        "no_accounting",
        "command_failed",
        "auth",
        "rate_limited",
        "unreadable",
        "locked",
        "backend",
        "io_error",
        "crontab_failed",
        "cannot_run",  # supervise: the command could not be started (again)
        # issue 22: labctl's own state or a file it writes is broken; the command went on
        "state_reset",
        "state_unwritable",
        "state_unreadable",
        "not_written",
    }
)
USAGE_REASONS = frozenset(
    {
        "usage",
        "config",
        "bad_config",
        "no_such_experiment",
        "not_found",
        "outside_roots",
        "writes_not_allowed",
        "unknown_tool",
    }
)

# What each exit code means, in words (tool results carry it beside the code).
MEANINGS = {
    ExitCode.OK: "nothing needs a person",
    ExitCode.ATTENTION: "something needs a person (see the records)",
    ExitCode.USAGE: "usage or configuration error: nothing was done",
    ExitCode.BACKEND: "a backend was partly or wholly unreachable: what could be done was done",
    ExitCode.INTERRUPTED: "interrupted (cancelled or stopped)",
}


def exit_code_for_reason(reason: str | None) -> ExitCode:
    if reason in USAGE_REASONS:
        return ExitCode.USAGE
    if reason in BACKEND_REASONS:
        return ExitCode.BACKEND
    return ExitCode.ATTENTION


class LabctlError(Exception):
    """An error a user can act on. `main()` emits it as one `error` record."""

    exit_code: ExitCode = ExitCode.ATTENTION
    reason: str = "error"

    def __init__(self, message: str, *, reason: str | None = None, **fields: object) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason
        self.fields = fields

    def record(self) -> dict[str, object]:
        rec: dict[str, object] = {"kind": "error", "reason": self.reason, "message": self.message}
        rec.update(self.fields)
        return rec


class UsageError(LabctlError):
    exit_code = ExitCode.USAGE
    reason = "usage"


class ConfigError(LabctlError):
    exit_code = ExitCode.USAGE
    reason = "config"


class BackendError(LabctlError):
    exit_code = ExitCode.BACKEND
    reason = "backend"


class LockedError(LabctlError):
    exit_code = ExitCode.BACKEND
    reason = "locked"
