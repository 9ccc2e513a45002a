"""Table views of diagnose's records: diagnoses, fingerprint groups, catalog entries.

With `labctl diagnose --why` (the context's `detail`), each diagnosis is followed by its
candidates: every failure-looking line, in log order, and its fate -- `won` (the root cause)
or `demoted` with the reason (survived, logged at WARNING, wrapper of X, explained by Y, later
success, the scheduler decides, ...).
"""

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
    if ctx.detail:
        render_why([(str(d.get("source") or "-"), d) for d in records], console)


def _where(c: dict[str, Any]) -> str:
    if c.get("line") is not None:
        return str(c["line"])
    if c.get("line_from_end") is not None:
        return f"-{c['line_from_end']} from end"
    return "scheduler"


def render_why(items: list[tuple[str, dict[str, Any]]], console: Console) -> None:
    """One table per diagnosis: its candidates (a diagnosis record's `candidates`) and fates;
    a diagnosis no candidate won (healthy, unknown) ends with a `verdict` row saying why."""
    from rich.text import Text

    for label, d in items:
        verdict = str(d.get("category")) + (f" ({d['catalog_id']})" if d.get("catalog_id") else "")
        rows = []
        for c in d.get("candidates") or []:
            won = c.get("fate") == "won"
            rows.append(
                [
                    (_where(c), ""),
                    (cell(c.get("catalog_id")), "bold" if won else ""),
                    (cell(c.get("role")), ""),
                    ("✓ won" if won else "demoted", "bold" if won else ""),
                    (cell(c.get("why"), 160), ""),
                ]
            )
        if not any(c.get("fate") == "won" for c in d.get("candidates") or []):
            why = cell(d.get("why"), 160)
            rows.append([("—", ""), (cell(d.get("category")), "bold"), ("—", "")])
            rows[-1] += [("verdict", "bold"), (why, "")]
        # the heading on a line of its own: a log's path is often wider than its table
        heading = f"why: {cell(label, 160)} → {cell(verdict)}"
        console.print(Text(heading, style="bold" if console.is_terminal else ""))
        _rows(console, "", ["line", "candidate", "role", "fate", "why"], rows)
