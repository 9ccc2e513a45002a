"""Table views of diagnose's records: diagnoses, fingerprint groups, catalog entries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from labctl.render.tables import cell, new_table

if TYPE_CHECKING:
    from rich.console import Console

    from labctl.context import Context


def _rows(
    console: Console, title: str, columns: list[str], rows: list[list[tuple[str, str]]]
) -> None:
    from rich.text import Text

    table = new_table(title, console)
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*(Text(text, style=style) for text, style in row))
    console.print(table)


def _root(d: dict[str, Any]) -> str:
    ev = d.get("evidence") or []
    return ev[0].get("text", "") if ev else ""


def render_diagnoses(records: list[dict[str, Any]], console: Console, ctx: Context) -> None:
    rows = []
    for d in records:
        bad = bool(d.get("failed"))
        mark = ("✗ " if bad else "✓ ") + str(d.get("category"))
        retryable = d.get("retryable")
        retry = "—" if retryable is None else "retry may help" if retryable else "fix first"
        rows.append(
            [
                (cell(d.get("source"), 50), ""),
                (mark, "bold red" if bad else "green"),
                (retry if bad else "—", ""),
                (f"{float(d.get('confidence') or 0):.2f}", ""),
                (cell(_root(d), 90), ""),
                (cell(d.get("fix") if bad else "", 120), ""),
            ]
        )
    _rows(
        console,
        f"diagnoses ({len(records)})",
        ["log", "root cause", "retry", "conf.", "evidence", "fix"],
        rows,
    )


def render_groups(records: list[dict[str, Any]], console: Console, ctx: Context) -> None:
    rows = [
        [
            (str(g.get("count")), "bold"),
            (cell(g.get("category")), ""),
            (cell(g.get("title")), ""),
            (cell(g.get("fingerprint")), ""),
            (cell(g.get("example"), 80), ""),
            (cell(", ".join(map(str, (g.get("jobs") or g.get("sources") or [])[:5])), 80), ""),
        ]
        for g in records
    ]
    _rows(
        console,
        f"failure fingerprints ({len(records)})",
        ["count", "category", "title", "fingerprint", "example", "seen in"],
        rows,
    )


def render_catalog(records: list[dict[str, Any]], console: Console, ctx: Context) -> None:
    rows = [
        [
            (cell(e.get("id")), "bold"),
            (cell(e.get("category")), ""),
            (cell(e.get("severity")), ""),
            ("yes" if e.get("retryable") else "no", ""),
            (cell(e.get("title"), 60), ""),
            (cell(e.get("fix"), 100), ""),
        ]
        for e in records
    ]
    _rows(
        console,
        f"failure catalog ({len(records)})",
        ["id", "category", "severity", "retryable", "title", "fix"],
        rows,
    )
