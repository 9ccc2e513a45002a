"""The fate of every candidate of a diagnosis (issue 15): `also_matched` (each candidate that lost
or was demoted, with its line and why) and `candidates` (all of them in log order, the root
cause `won`, the others `demoted`, each with a snake_case `reason`, the sentence and what
decided it: a hit, or the last forward-progress line).

Reasons: root_cause; survived, logged, notice, later_success, later_failure, after_failure,
too_few, earlier_run (demote.py, rank.py); earlier_job, handled (endings.py); explained,
wrapper, weak, later, earlier_event, outranked (fatal.py); scheduler, completed, hung,
earlier_report (rank.py).
"""

from __future__ import annotations

from typing import Any

from labctl.diagnose.demote import Cand, Ranked, Why
from labctl.diagnose.hits import CatalogHit
from labctl.redact import Redactor


def loc(h: CatalogHit, complete: bool) -> dict[str, Any]:
    if h.synthetic == "scheduler":
        return {"line": None, "line_from_end": None}
    return {"line": h.line if complete else None, "line_from_end": h.from_end}


def also_matched(r: Ranked, complete: bool, red: Redactor) -> list[dict[str, Any]]:
    return [
        {
            "catalog_id": c.entry.id,
            "category": c.entry.category,
            "role": c.entry.role,
            **loc(c.hit, complete),
            "count": c.count,
            "text": red.text(c.hit.text),
            "why": why.text,
        }
        for c, why in r.also
    ]


def candidates(r: Ranked, lines: int, complete: bool) -> list[dict[str, Any]]:
    """Every candidate in log order (the scheduler's last): the root cause `won`, each other one
    `demoted`, with the reason, the sentence and what decided it."""
    fates: list[tuple[Cand, str, Why]] = [(c, "demoted", why) for c, why in r.also]
    if r.root is not None:
        fates.append((r.root, "won", Why("root_cause", r.why)))
    fates.sort(key=lambda f: -f[0].hit.from_end)
    return [
        {
            "catalog_id": c.entry.id,
            "category": c.entry.category,
            "role": c.entry.role,
            **loc(c.hit, complete),
            "count": c.count,
            "fate": fate,
            "reason": why.reason,
            "why": why.text,
            "by": _by(why, lines, complete),
        }
        for c, fate, why in fates
    ]


def _by(why: Why, lines: int, complete: bool) -> dict[str, Any] | None:
    """What decided a fate: a hit (its entry and place), or a line that is none: the last
    forward-progress line (role `progress`), where the log's last run starts (`run_start`),
    the log's last output (`output`)."""
    if why.by is not None:
        b = why.by
        return {"catalog_id": b.entry.id, "role": b.entry.role, **loc(b.hit, complete)}
    if why.at is not None:
        line = lines - why.at + 1 if complete else None
        return {"catalog_id": None, "role": why.at_role, "line": line, "line_from_end": why.at}
    return None
