"""Table views of `labctl supervise`'s events: attempts, fixes and how the run ended."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from labctl.render.tables import cell, new_table

if TYPE_CHECKING:
    from rich.console import Console

    from labctl.context import Context

Row = Callable[[dict[str, Any]], list[str]]


def _table(title: str, columns: tuple[str, ...], row: Row) -> Any:
    def view(records: list[dict[str, Any]], console: Console, ctx: Context) -> None:
        from rich.text import Text

        table = new_table(f"{title} ({len(records)})", console)
        for name in columns:
            table.add_column(name, overflow="fold")
        for rec in records:
            table.add_row(*(Text(v) for v in row(rec)))
        console.print(table)

    return view


def _env(rec: dict[str, Any]) -> str:
    changes = rec.get("env_changes") or {}
    return " ".join(f"{k}={'(unset)' if v is None else repr(v)}" for k, v in changes.items())


def _started(rec: dict[str, Any]) -> list[str]:
    argv = shlex.join(rec.get("argv") or [])
    return [str(rec.get("attempt")), cell(argv, 100), cell(_env(rec) or "—"), str(rec.get("pid"))]


def _ended(rec: dict[str, Any]) -> list[str]:
    if rec.get("stalled"):
        status = f"hung: silent {rec.get('silence_s', 0):.0f}s, killed"
    elif rec.get("interrupted_by"):
        status = f"interrupted (signal {rec['interrupted_by']})"
    elif rec.get("exit_code") is not None:
        status = f"exit {rec['exit_code']}"
    else:
        status = f"signal {rec.get('signal')}"
    left = len(rec.get("leftovers") or [])
    return [
        str(rec.get("attempt")),
        status,
        f"{rec.get('duration_s') or 0:.1f}s",
        f"{left} ended by labctl" if left else "—",
        cell(rec.get("log")),
    ]


def _fix(rec: dict[str, Any]) -> list[str]:
    changes = rec.get("changes") or []
    what = "; ".join(f"{c['name']}: {c['old'] or '—'} → {c['new']}" for c in changes)
    return [
        str(rec.get("attempt")),
        str(rec.get("catalog_id")),
        str((rec.get("action") or {}).get("type")),
        cell(what or "re-run as it was", 100),
    ]


def _outcome(rec: dict[str, Any]) -> list[str]:
    kind = str(rec.get("kind"))
    mark = {"succeeded": "✓", "escalated": "✗", "interrupted": "■"}.get(kind, "")
    why = rec.get("message") or (f"signal {rec['signal']}" if rec.get("signal") else "")
    return [
        f"{mark} {kind}",
        str(rec.get("attempts")),
        cell(rec.get("reason") or "—"),
        cell(why or "—", 160),
        cell(rec.get("path") or "—", 100),
    ]


started = _table("attempts", ("attempt", "command", "env changes", "pid"), _started)
ended = _table("attempts ended", ("attempt", "status", "ran", "left behind", "log"), _ended)
fixes = _table("fixes", ("for attempt", "catalog entry", "action", "what changed"), _fix)
outcome = _table("run", ("result", "attempts", "reason", "why", "escalation file"), _outcome)
