"""How much a record needs a person: the per-kind rules behind the exit code.

The exit code of any command is the worst severity of the records it emitted, passed-
through records included, so the last stage of a pipeline (`… | labctl table`) exits the
way the whole sweep should. One table, so every command agrees.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from labctl.errors import BACKEND_REASONS, ExitCode, exit_code_for_reason
from labctl.verdicts import needs_person


def _error(rec: dict[str, Any]) -> ExitCode:
    return exit_code_for_reason(rec.get("reason"))


def _job(rec: dict[str, Any]) -> ExitCode:
    """A job needs a person by its verdict (labctl.verdicts.NEEDS_PERSON), or when it waits
    for something that will never happen (STUCK_PENDING_CAUSES)."""
    return ExitCode.ATTENTION if needs_person(rec.get("verdict"), rec.get("cause")) else ExitCode.OK


def _file(rec: dict[str, Any]) -> ExitCode:
    return ExitCode.ATTENTION if rec.get("verified") is False else ExitCode.OK


def _diagnosis(rec: dict[str, Any]) -> ExitCode:
    category = rec.get("category")
    return ExitCode.OK if category in (None, "healthy", "cancelled") else ExitCode.ATTENTION


def _passed(rec: dict[str, Any]) -> ExitCode:
    """gate, verdict, streak: a failed gate needs a person."""
    return ExitCode.OK if rec.get("passed") is True else ExitCode.ATTENTION


# merge-green: a PR a person must unblock, or one labctl could not finish; a refused repo
# whose PRs someone expects merged (a repo named by mistake, an allowlist entry GitHub
# knows by another name). Not an archived repo: GitHub takes no write there, so nothing is
# missed, and a cron run over an allowlist that still names it should not exit 1 forever.
ATTENTION_DECISIONS = frozenset({"blocked", "failed"})
QUIET_REPO_REASONS = frozenset({"archived"})


def _pr(rec: dict[str, Any]) -> ExitCode:
    return ExitCode.ATTENTION if rec.get("decision") in ATTENTION_DECISIONS else ExitCode.OK


def _repo(rec: dict[str, Any]) -> ExitCode:
    refused = rec.get("decision") == "skipped" and rec.get("reason") not in QUIET_REPO_REASONS
    return ExitCode.ATTENTION if refused else ExitCode.OK


def _needs_attention(rec: dict[str, Any]) -> ExitCode:
    """cron, experiment: the core says in `needs_attention` whether a person must look;
    a `reason` that is a backend's (a full disk, a failed crontab) makes it exit 3."""
    if not rec.get("needs_attention"):
        return ExitCode.OK
    return ExitCode.BACKEND if rec.get("reason") in BACKEND_REASONS else ExitCode.ATTENTION


def _disk(rec: dict[str, Any]) -> ExitCode:
    """prune-disk: free space still under the threshold once it is done."""
    if rec.get("phase", "after") == "after" and rec.get("below_threshold"):
        return ExitCode.ATTENTION
    return ExitCode.OK


def _candidate(rec: dict[str, Any]) -> ExitCode:
    return ExitCode.ATTENTION if rec.get("status") == "failed" else ExitCode.OK


def _check(rec: dict[str, Any]) -> ExitCode:
    """health: a failed check needs a person."""
    return ExitCode.ATTENTION if rec.get("ok") is False else ExitCode.OK


def _rl_health(rec: dict[str, Any]) -> ExitCode:
    """rl-health: a KILL recommendation needs a person (labctl never kills anything)."""
    return ExitCode.ATTENTION if rec.get("recommendation") == "KILL" else ExitCode.OK


RULES: dict[str, Callable[[dict[str, Any]], ExitCode]] = {
    "error": _error,
    "job": _job,
    "file": _file,
    "diagnosis": _diagnosis,
    "verdict": _passed,
    "gate": _passed,
    "streak": _passed,
    "pr": _pr,
    "repo": _repo,
    "cron": _needs_attention,
    "experiment": _needs_attention,
    "violation": lambda rec: ExitCode.ATTENTION,
    "admission": lambda rec: ExitCode.OK if rec.get("admitted") else ExitCode.ATTENTION,
    # supervise's final events: gave up and asks a person (1), was interrupted (130)
    "escalated": lambda rec: ExitCode.ATTENTION,
    "interrupted": lambda rec: ExitCode.INTERRUPTED,
    "disk": _disk,
    "candidate": _candidate,
    "check": _check,
    "rl_health": _rl_health,
}


def severity(rec: dict[str, Any]) -> ExitCode:
    rule = RULES.get(rec.get("kind", ""))
    return rule(rec) if rule is not None else ExitCode.OK
