"""Table views for the machine's own state: prune-disk (`disk`, `candidate`) and health
(`check`, `process`). Sizes in decimal units (GB), like `df -H`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from labctl.render.tables import cell, new_table

if TYPE_CHECKING:
    from rich.console import Console

    from labctl.context import Context

_STYLE = {"deleted": "green", "failed": "red", "kept": "yellow", "would_delete": "cyan"}


def size(n: Any) -> str:
    if not isinstance(n, int | float):
        return "—"
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return str(n)


def _age(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return "—"
    days = seconds / 86400
    return f"{days:.0f} d" if days >= 1 else f"{seconds / 3600:.1f} h"


def _rows(
    console: Console, title: str, columns: list[str], rows: list[tuple[list[str], str]]
) -> None:
    from rich.text import Text

    table = new_table(title, console)
    for name in columns:
        table.add_column(name, overflow="fold")
    for values, style in rows:
        table.add_row(*(Text(v, style=style) for v in values))
    console.print(table)


def render_disk(records: list[dict[str, Any]], console: Console, ctx: Context) -> None:
    rows = []
    for r in records:
        style = "red" if r.get("below_threshold") else ""
        extra = size(r.get("projected_free")) if r.get("projected_free") is not None else "—"
        rows.append(([cell(r.get("phase")), cell(r.get("mount")), size(r.get("free")),
                      size(r.get("min_free")), size(r.get("goal_free")), extra,
                      "yes" if r.get("below_threshold") else "no"], style))  # fmt: skip
    cols = ["phase", "volume", "free", "threshold", "goal", "projected", "below"]
    _rows(console, f"disk ({len(records)})", cols, rows)


def render_candidates(records: list[dict[str, Any]], console: Console, ctx: Context) -> None:
    rows = []
    for r in records:
        status = str(r.get("status"))
        why = r.get("message") if not r.get("safe") else None
        freed = size(r.get("bytes_freed")) if r.get("applied") else size(r.get("bytes_exclusive"))
        rows.append(([cell(r.get("rule_kind")), cell(r.get("name"), 60), size(r.get("bytes")),
                      freed, _age(r.get("age_s")), status, cell(r.get("reason")),
                      cell(why, 100)], _STYLE.get(status, "")))  # fmt: skip
    cols = ["rule", "name", "size", "frees", "age", "status", "reason", "why"]
    _rows(console, f"candidates ({len(records)})", cols, rows)


def _value(r: dict[str, Any], key: str) -> str:
    v = r.get(key)
    if r.get("unit") == "bytes":
        return size(v)
    if r.get("unit") == "percent" and isinstance(v, int | float):
        return f"{v:g}%"
    return cell(v)


def render_checks(records: list[dict[str, Any]], console: Console, ctx: Context) -> None:
    rows = []
    for r in records:
        ok = r.get("ok")
        rows.append(([cell(r.get("check")), "✓" if ok else "✗", _value(r, "value"),
                      _value(r, "threshold"), cell(r.get("message"), 100)],
                     "" if ok else "red"))  # fmt: skip
    _rows(console, f"health ({len(records)})", ["check", "ok", "value", "limit", "message"], rows)


def render_processes(records: list[dict[str, Any]], console: Console, ctx: Context) -> None:
    rows = [([cell(r.get("rank")), cell(r.get("pid")), cell(r.get("user")), size(r.get("rss")),
              cell(r.get("cmdline"), 100)], "") for r in records]  # fmt: skip
    _rows(
        console, f"largest processes ({len(records)})", ["#", "pid", "user", "rss", "command"], rows
    )
