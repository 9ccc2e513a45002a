"""The table view of `file` records (strip-yaml-comments): one row per file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from labctl.render.tables import cell, new_table

if TYPE_CHECKING:
    from rich.console import Console

    from labctl.context import Context


def render(records: list[dict[str, Any]], console: Console, ctx: Context) -> None:
    from rich.text import Text

    table = new_table(f"files ({len(records)})", console)
    for name in ("path", "comments", "bytes", "verified", "applied", "note"):
        table.add_column(name, overflow="fold")
    for rec in records:
        before, after = rec.get("bytes_before"), rec.get("bytes_after")
        verified = rec.get("verified")
        flag = "✓" if verified else "✗ not verified"
        note = rec.get("message") or (f"notes: {rec['notes']}" if rec.get("notes") else "")
        row = [
            cell(rec.get("path")),
            str(len(rec.get("comments") or [])),
            f"{before} → {after}" if before != after else str(before),
            flag,
            "yes" if rec.get("applied") else "no (dry run)" if rec.get("changed") else "—",
            cell(note, 100),
        ]
        style = "" if verified else "red"
        table.add_row(*(Text(v, style=style) for v in row))
    console.print(table)
