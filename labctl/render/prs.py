"""The table view of `pr` records (merge-green): one row per pull request."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from labctl.render.tables import cell, new_table

if TYPE_CHECKING:
    from rich.console import Console

    from labctl.context import Context

MARKS = {
    "merged": ("✓ merged", "green"),
    "would_merge": ("✓ would merge", "green"),
    "waiting": ("… waiting", ""),
    "blocked": ("✗ blocked", "red"),
    "failed": ("✗ failed", "red"),
    "skipped": ("– skipped", "dim"),
}


def _checks(summary: dict[str, Any] | None) -> str:
    if not summary:
        return "—"
    total = summary.get("check_runs", 0) + summary.get("statuses", 0)
    passed = summary.get("passed", 0) + summary.get("skipped", 0) + summary.get("neutral", 0)
    return f"{passed}/{total}"


def render(records: list[dict[str, Any]], console: Console, ctx: Context) -> None:
    from rich.text import Text

    dry = any(r.get("dry_run") for r in records)
    table = new_table(f"pull requests ({len(records)}){' — dry run' if dry else ''}", console)
    for name in ("pr", "title", "decision", "why", "checks", "head"):
        table.add_column(name, overflow="fold")
    for rec in records:
        mark, style = MARKS.get(str(rec.get("decision")), (str(rec.get("decision")), ""))
        row = [
            f"{rec.get('repo')}#{rec.get('number')}",
            cell(rec.get("title"), 50),
            mark,
            cell(rec.get("message"), 120),
            _checks(rec.get("checks")),
            cell((rec.get("head_sha") or "")[:10] or None),
        ]
        table.add_row(*(Text(v, style=style if i == 2 else "") for i, v in enumerate(row)))
    console.print(table)
