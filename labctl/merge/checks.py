"""Is a commit green? Every check run (all pages) and every commit status on it, finished
and passed; none pending; something reported at all.

GitHub's own summaries are not trusted for this: the combined status reads `pending` when a
repo uses only Actions (no statuses), `mergeable_state` only weighs required checks, and
Kodiak-style GraphQL reads stop at 100 runs. The rollup looks at each check itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from labctl.backends.github_model import Check

PASS = frozenset({"success"})
SOFT = frozenset({"skipped", "neutral"})  # pass unless strict_skipped
FAIL = frozenset(
    {"failure", "cancelled", "timed_out", "action_required", "stale", "startup_failure", "error"}
)
MAX_NAMES = 10


@dataclass(frozen=True)
class Rollup:
    state: str  # green | pending | red
    reason: str  # snake_case, for the pr record
    message: str
    summary: dict[str, Any] = field(default_factory=dict)
    # green only: each check's name and when it finished (GitHub's timestamp, or None)
    finished: tuple[tuple[str, str | None], ...] = ()


def _names(checks: Sequence[Check]) -> list[str]:
    return sorted({c.name for c in checks})[:MAX_NAMES]


def listing(names: list[str], total: int) -> str:
    more = f" and {total - len(names)} more" if total > len(names) else ""
    return ", ".join(names) + more


def summarize(runs: Sequence[Check], statuses: Sequence[Check]) -> dict[str, Any]:
    every = [*runs, *statuses]
    done = [c for c in every if c.done]
    return {
        "check_runs": len(runs),
        "statuses": len(statuses),
        "passed": sum(c.state in PASS for c in done),
        "skipped": sum(c.state == "skipped" for c in done),
        "neutral": sum(c.state == "neutral" for c in done),
        "failed": sum(c.state not in PASS | SOFT for c in done),
        "pending": sum(not c.done for c in every),
        "failing": _names([c for c in done if c.state not in PASS | SOFT]),
        "waiting_on": _names([c for c in every if not c.done]),
    }


def rollup(
    runs: Sequence[Check],
    runs_total: int,
    statuses: Sequence[Check],
    statuses_total: int,
    *,
    strict_skipped: bool = False,
) -> Rollup:
    """The verdict on one head commit. A failed check beats a pending one: it needs a person."""
    summary = summarize(runs, statuses)
    if len(runs) < runs_total or len(statuses) < statuses_total:
        return Rollup(
            "pending",
            "incomplete_read",
            f"incomplete read: {len(runs)} of {runs_total} check runs, "
            f"{len(statuses)} of {statuses_total} statuses",
            summary,
        )
    every = [*runs, *statuses]
    failed = [c for c in every if c.done and c.state not in PASS | SOFT]
    soft = [c for c in every if c.done and c.state in SOFT]
    if failed:
        names = [f"{c.name} ({c.state})" if c.state != "failure" else c.name for c in failed]
        shown = sorted(set(names))[:MAX_NAMES]
        return Rollup(
            "red", "check_failed", f"check failed: {listing(shown, len(set(names)))}", summary
        )
    if strict_skipped and soft:
        shown = sorted({f"{c.name} ({c.state})" for c in soft})
        return Rollup(
            "red",
            "check_not_passed",
            f"not a pass with strict_skipped: {listing(shown[:MAX_NAMES], len(shown))}",
            summary,
        )
    pending = [c for c in every if not c.done]
    if pending:
        names = _names(pending)
        return Rollup(
            "pending",
            "checks_pending",
            f"waiting for checks: {listing(names, len({c.name for c in pending}))}",
            summary,
        )
    if not every:
        return Rollup("pending", "no_ci", "no CI reported yet on this commit", summary)
    finished = tuple((c.name, c.finished_at) for c in every)
    return Rollup("green", "green", _passed(len(every), soft), summary, finished)


def _passed(total: int, soft: Sequence[Check]) -> str:
    """All passed, naming the skipped and neutral ones (a pass a person may question)."""
    message = f"all {total} checks passed"
    for state in ("skipped", "neutral"):
        names = sorted({c.name for c in soft if c.state == state})
        if names:
            message += f"; {state}: {listing(names[:MAX_NAMES], len(names))}"
    return message
