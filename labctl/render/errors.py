"""The table view of `error` records: what went wrong, where, and the whole message (what
to do is in it), so a person reading the sweep's tables can act on it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from labctl.render.tables import cell, new_table

if TYPE_CHECKING:
    from rich.console import Console

    from labctl.context import Context


def _where(rec: dict[str, Any]) -> str:
    if rec.get("cluster"):
        return str(rec["cluster"])
    place = rec.get("path") or rec.get("source") or ""
    return f"{place}:{rec['line']}" if rec.get("line") and place else str(place or "—")


def render(records: list[dict[str, Any]], console: Console, ctx: Context) -> None:
    from rich.text import Text

    table = new_table(f"errors ({len(records)})", console)
    table.add_column("reason", overflow="fold", no_wrap=True)
    table.add_column("where", overflow="fold", max_width=40)
    table.add_column("message", overflow="fold", ratio=1)
    for rec in records:
        row = [cell(rec.get("reason")), cell(_where(rec), 200), cell(rec.get("message"), 600)]
        table.add_row(*(Text(v, style="red") for v in row))
    console.print(table)
