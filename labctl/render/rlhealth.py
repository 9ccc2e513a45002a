"""rl-health in the tables people read.

`rl_health` records that belong to a `job` record of the same stream (same cluster and
job id) are joined to it: the RL table gets an `rl-health` column (KILL / NO-KILL / WATCH
and the families that fired) and the short reason goes into `why / fix`. The rest (a log
file or a W&B run judged by path) get a table of their own. Marks survive NO_COLOR.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from labctl.render.tables import cell, new_table

if TYPE_CHECKING:
    from rich.console import Console

    from labctl.context import Context

MARKS = {"KILL": ("✗", "bold red"), "WATCH": ("?", "yellow"), "NO-KILL": ("✓", "green")}


def join(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Jobs carry their rl_health record (`rl_health` field); joined ones are dropped."""
    health = {
        (r.get("cluster"), r.get("job_id")): r
        for r in records
        if r.get("kind") == "rl_health" and r.get("job_id") is not None
    }
    jobs = {(r.get("cluster"), r.get("job_id")) for r in records if r.get("kind") == "job"}
    out = []
    for rec in records:
        key = (rec.get("cluster"), rec.get("job_id"))
        if rec.get("kind") == "job" and key in health:
            out.append(dict(rec) | {"rl_health": health[key]})
        elif rec.get("kind") == "rl_health" and key in jobs:
            continue
        else:
            out.append(rec)
    return out


def label(rec: dict[str, Any] | None) -> tuple[str, str]:
    """The cell text and style: `✗ KILL entropy+learning`, `? WATCH 12 steps`, `✓ NO-KILL`."""
    if not rec:
        return "—", ""
    verdict = str(rec.get("recommendation"))
    mark, style = MARKS.get(verdict, ("?", ""))
    detail = ""
    if verdict == "KILL":
        detail = "+".join(rec.get("families") or [])
    elif verdict == "WATCH":
        reason = rec.get("reason")
        points = (rec.get("steps") or {}).get("points")
        detail = f"{points} steps" if reason == "insufficient_history" else str(reason)
    return f"{mark} {verdict} {detail}".strip(), style


def reason(rec: dict[str, Any] | None) -> str:
    """A short why for the `why / fix` column (KILL and WATCH only)."""
    if not rec or rec.get("recommendation") == "NO-KILL":
        return ""
    checks = rec.get("checks") or []
    text = f"rl-health: {rec.get('message')}"
    return text + (f" — check: {checks[0]}" if checks else "")


def render(records: list[dict[str, Any]], console: Console, ctx: Context) -> None:
    from rich.text import Text

    kills = sum(1 for r in records if r.get("recommendation") == "KILL")
    title = f"rl-health — {len(records)} run(s)" + (f", {kills} KILL" if kills else "")
    table = new_table(title, console)
    for col in ("run", "recommendation", "conf", "steps", "why", "check next"):
        table.add_column(col, overflow="fold")
    for rec in records:
        text, style = label(rec)
        steps = rec.get("steps") or {}
        span = f"{steps.get('points', 0)}"
        if steps.get("last") is not None:
            span += f" (to {steps['last']})"
        where = rec.get("path") or f"{rec.get('cluster')}/{rec.get('job_id')}"
        checks = rec.get("checks") or []
        row = [
            (cell(where, 60), ""),
            (text, style),
            (cell(rec.get("confidence")), ""),
            (span, ""),
            (cell(rec.get("message"), 160), ""),
            (cell(checks[0] if checks else "", 120), ""),
        ]
        table.add_row(*(Text(t, style=s) for t, s in row))
    console.print(table)
