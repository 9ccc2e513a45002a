"""`migrate-experiment --list`: every experiment under the root, what feeds it, when a
job of it was last seen; flags what needs a person.

Flags: `idle` (active, no pending or running job, and no job seen for idle_days),
`still_fed` (complete, yet a cron line or refill entry still names it, or a cron line names
it in a way labctl cannot resolve: `mentions`), `jobs_after_close`
(complete, yet a job of it is pending or running).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from labctl.backends.crontab import CrontabTarget, home_lookup, read
from labctl.cron.lines import Line, parse
from labctl.experiments.match import (
    folder_forms,
    is_active_job,
    job_belongs,
    job_patterns,
    job_ref,
    valid_name,
)
from labctl.records import parse_rfc3339, rfc3339

Record = dict[str, Any]
Seen = tuple[Record, float | None]  # a job record and when poll last saw it


def names_in(folder: Path) -> list[str]:
    try:
        return sorted(p.name for p in folder.iterdir() if p.is_dir() and valid_name(p.name))
    except OSError:
        return []


def complete_names(root: Path) -> list[str]:
    return names_in(root / "complete")


def _seen_at(rec: Record, seen: float | None) -> float | None:
    if seen is not None:
        return seen
    times = [parse_rfc3339(rec.get(k)) for k in ("end_time", "start_time", "submit_time")]
    return max((t for t in times if t is not None), default=None)


def _flags(state: str, fed: bool, live: list[Record], last: Seen | None, now: float,
           idle_s: float) -> list[str]:  # fmt: skip
    flags = []
    if state == "active" and not live and (last is None or now - (last[1] or 0) > idle_s):
        flags.append("idle")
    if state == "complete" and fed:
        flags.append("still_fed")
    if state == "complete" and live:
        flags.append("jobs_after_close")
    return flags


def survey(
    root: Path,
    crontabs: Sequence[CrontabTarget],
    refill_files: Sequence[Path],
    jobs: Sequence[Seen],
    templates: Sequence[str],
    *,
    now: float,
    idle_s: float,
) -> Iterator[Record]:
    from labctl.experiments.rules import feeding, mention_items, mentions, refill_plan

    tabs: list[tuple[CrontabTarget, list[Line], Any]] = [
        (t, parse(read(t).data, system=t.system), home_lookup(t)) for t in crontabs
    ]
    for state in ("active", "complete"):
        for name in names_in(root / state):
            path = root / state / name
            dirs = folder_forms(path)
            cron, open_ = [], []
            for t, lines, home_of in tabs:
                feed = feeding(lines, name, dirs, home_of)
                cron += [
                    {"crontab": t.label, "line_number": ln.number, "line": ln.shown} for ln in feed
                ]
                found = [m for m in mentions(lines, name, feed, home_of) if m[1]]
                open_ += mention_items(t, found)
            refill = [
                {"file": str(f), "entry": e["entry"]}
                for f in refill_files
                for e in refill_plan(f, name)[0].entries
            ]
            patterns = job_patterns(name, templates)
            mine = [(r, _seen_at(r, t)) for r, t in jobs if job_belongs(r, patterns, dirs)]
            live = [r for r, _ in mine if is_active_job(r)]
            last = max(mine, key=lambda rt: rt[1] or 0.0, default=None)
            flags = _flags(state, bool(cron or refill or open_), live, last, now, idle_s)
            yield {
                "kind": "experiment",
                "name": name,
                "status": state,
                "path": str(path),
                "cron": cron,
                "mentions": open_,
                "refill": refill,
                "jobs": [job_ref(r) for r in live],
                "last_job": None
                if last is None
                else job_ref(last[0]) | {"seen_at": rfc3339(last[1])},
                "flags": flags,
                "needs_attention": bool(flags),
                "message": ", ".join(flags) or "ok",
            }
