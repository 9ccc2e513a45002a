"""How much a record needs a person: the per-kind rules behind the exit code.

The exit code of any command is the worst severity of the records it emitted, passed-
through records included, so the last stage of a pipeline (`… | labctl table`) exits the
way the whole sweep should. One table, so every command agrees.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from labctl.errors import ExitCode, exit_code_for_reason

# Job verdicts that need a person (poll, issue 4 and 5).
ATTENTION_VERDICTS = frozenset(
    {"failed", "timeout", "out_of_memory", "node_fail", "unknown", "running-stalled"}
)


def _error(rec: dict[str, Any]) -> ExitCode:
    return exit_code_for_reason(rec.get("reason"))


# Pending jobs that will never start without a person (a held job is someone's intent).
STUCK_PENDING_CAUSES = frozenset({"dependency_never_satisfied", "cannot_run"})


def _job(rec: dict[str, Any]) -> ExitCode:
    verdict = rec.get("verdict")
    if verdict in ATTENTION_VERDICTS:
        return ExitCode.ATTENTION
    if verdict == "pending" and rec.get("cause") in STUCK_PENDING_CAUSES:
        return ExitCode.ATTENTION
    return ExitCode.OK


def _file(rec: dict[str, Any]) -> ExitCode:
    return ExitCode.ATTENTION if rec.get("verified") is False else ExitCode.OK


def _diagnosis(rec: dict[str, Any]) -> ExitCode:
    category = rec.get("category")
    return ExitCode.OK if category in (None, "healthy", "cancelled") else ExitCode.ATTENTION


def _passed(rec: dict[str, Any]) -> ExitCode:
    """gate, verdict, streak: a failed gate needs a person."""
    return ExitCode.OK if rec.get("passed") is True else ExitCode.ATTENTION


RULES: dict[str, Callable[[dict[str, Any]], ExitCode]] = {
    "error": _error,
    "job": _job,
    "file": _file,
    "diagnosis": _diagnosis,
    "verdict": _passed,
    "gate": _passed,
    "streak": _passed,
}


def severity(rec: dict[str, Any]) -> ExitCode:
    rule = RULES.get(rec.get("kind", ""))
    return rule(rec) if rule is not None else ExitCode.OK
