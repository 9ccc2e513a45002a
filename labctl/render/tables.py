"""Box-drawing tables for people: one table per record kind (┌─┬─┐, never Markdown).

Kinds with a dedicated view (registered in VIEWS, imported lazily) render themselves;
every other kind gets a generic table whose columns are the fields present. Cell text is
sanitised for the terminal (control, bidi and zero-width characters are shown escaped),
and markup in data is never interpreted.
"""

from __future__ import annotations

import importlib
import io
import json
import re
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from labctl.context import Context

# kind -> "module:function" taking (records, console, ctx)
VIEWS: dict[str, str] = {
    "error": "labctl.render.errors:render",
    "file": "labctl.render.files:render",
    "job": "labctl.render.jobs:render",
    "diagnosis": "labctl.render.diagnoses:render_diagnoses",
    "diagnosis_group": "labctl.render.diagnoses:render_groups",
    "catalog_entry": "labctl.render.diagnoses:render_catalog",
    "pr": "labctl.render.prs:render",
    "attempt_started": "labctl.render.supervise:started",
    "attempt_ended": "labctl.render.supervise:ended",
    "fix_applied": "labctl.render.supervise:fixes",
    "succeeded": "labctl.render.supervise:outcome",
    "escalated": "labctl.render.supervise:outcome",
    "interrupted": "labctl.render.supervise:outcome",
    "disk": "labctl.render.machine:render_disk",
    "candidate": "labctl.render.machine:render_candidates",
    "check": "labctl.render.machine:render_checks",
    "process": "labctl.render.machine:render_processes",
    "rl_health": "labctl.render.rlhealth:render",
}
MAX_GENERIC_COLUMNS = 14
MAX_CELL = 80
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def sanitize(text: str) -> str:
    """Escape characters that could move the cursor, recolour or reorder terminal text."""
    text = text.replace("\n", "\\n").replace("\t", "\\t")
    return _UNSAFE.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def cell(value: Any, limit: int = MAX_CELL) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    else:
        text = str(value)
    text = sanitize(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def make_console(ctx: Context, file: IO[str] | None = None) -> Console:
    from rich.console import Console

    tty = ctx.stdout_isatty
    no_color = "NO_COLOR" in ctx.environ or not tty
    width = None
    if not tty:
        width = _int(ctx.environ.get("COLUMNS")) or 120
        if ctx.config.resolved.get("output.table_width"):
            width = ctx.config.get("output.table_width") or width
    return Console(
        file=file or ctx.stdout,
        force_terminal=tty,
        no_color=no_color,
        color_system=None if no_color else "auto",
        width=width,
        highlight=False,
        emoji=False,
        markup=False,
        soft_wrap=False,
    )


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text else None
    except ValueError:
        return None


def new_table(title: str, console: Console) -> Any:
    from rich import box
    from rich.table import Table

    return Table(
        title=title,
        box=box.SQUARE,
        title_justify="left",
        header_style="bold" if console.is_terminal else "",
        title_style="bold" if console.is_terminal else "",
        expand=False,
    )


def generic_table(kind: str, records: list[dict[str, Any]], console: Console) -> Any:
    from rich.text import Text

    columns: list[str] = []
    for rec in records:
        for key in rec:
            if key != "kind" and key not in columns:
                columns.append(key)
    hidden = max(0, len(columns) - MAX_GENERIC_COLUMNS)
    columns = columns[:MAX_GENERIC_COLUMNS]
    title = f"{kind} ({len(records)})"
    if hidden:
        title += f" — {hidden} more field(s) in --format jsonl"
    table = new_table(title, console)
    for col in columns:
        table.add_column(col, overflow="fold")
    for rec in records:
        table.add_row(
            *(Text(cell(rec.get(col), 240 if col == "message" else MAX_CELL)) for col in columns)
        )
    return table


def render(records: list[dict[str, Any]], ctx: Context) -> None:
    """Render all records; piped tables are plain text without trailing blanks."""
    buffer = None if ctx.stdout_isatty else io.StringIO()
    console = make_console(ctx, buffer)
    if any(r.get("kind") == "rl_health" for r in records):
        from labctl.render.rlhealth import join

        records = join(records)  # an rl_health record shows in its job's row
    groups: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        groups.setdefault(str(rec.get("kind", "(no kind)")), []).append(rec)
    for kind, recs in groups.items():
        view = _view(kind)
        if view is not None:
            view(recs, console, ctx)
        else:
            console.print(generic_table(kind, recs, console))
    if buffer is not None:
        text = "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())
        ctx.stdout.write(text + "\n" if text else "")
        ctx.stdout.flush()


def _view(kind: str) -> Callable[[list[dict[str, Any]], Console, Context], None] | None:
    target = VIEWS.get(kind)
    if target is None:
        return None
    module, _, func = target.partition(":")
    return getattr(importlib.import_module(module), func)
