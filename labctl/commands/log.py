"""`labctl log --topic TOPIC`: one dated Markdown file per event, never one long document.

Reads records on stdin (or takes `--message`), writes `YYYY-MM-DD_<topic>.md` in the
configured log directory — a second entry on the same day gets `-2`, `-3`… and no file is
ever appended to or overwritten — with a short human summary on top and the records
below. Everything written is redacted. The records read pass through unchanged and a
`log` record with the path closes the stream, so the entry can sit mid-pipeline:
`labctl poll | labctl diagnose | labctl log --topic sweep | labctl table`. When the log
directory takes no write (full disk, read-only, permission, a file standing in its
place), the records still pass through and an `error` record (reason `not_written`, exit
3) takes the `log` record's place.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from labctl.context import Context
from labctl.errors import UsageError
from labctl.logbook import render_entry, write_entry
from labctl.schemas import COMMON, record

SCHEMAS = {
    **COMMON,
    "log": record(
        "log",
        "The dated log entry that was written.",
        {
            "path": {"type": "string"},
            "topic": {"type": "string"},
            "date": {"type": "string", "format": "date"},
            "records": {"type": "integer", "minimum": 0},
            "bytes": {"type": "integer", "minimum": 0},
        },
        ["path", "topic", "date", "records", "bytes"],
    ),
    "*": {"description": "Records read on stdin pass through unchanged.", "type": "object"},
}
EXAMPLES = [
    "labctl poll | labctl diagnose | labctl log --topic sweep | labctl table",
    'labctl log --topic launch --message "Started rl-grpo-qwen7b v3 (lr 3e-7) on c1"',
]
_TOPIC = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")


def run(
    lc: Context, topic: str, message: str | None, input: Path | None
) -> Iterator[dict[str, Any]]:
    from labctl.stream import read_records

    if not _TOPIC.match(topic):
        raise UsageError(
            f"--topic {topic!r}: use letters, digits, '.', '_' or '-' (it becomes a file name)"
        )
    records: list[dict[str, Any]] = []
    if input is not None or message is None:
        for rec in read_records(lc, input):
            records.append(rec)
            yield rec
    from labctl.confine import check

    when = lc.clock()
    text = lc.redactor.text(render_entry(topic, when, records, message))
    try:
        path = write_entry(check(lc, lc.log_dir), topic, when, text)
    except OSError as exc:
        from labctl.faults import is_write_fault, not_written

        if not is_write_fault(exc):
            raise
        passed = f"the {len(records)} record(s) read passed through; " if records else ""
        yield not_written(
            lc.log_dir,
            exc,
            f"the {topic} log entry was not written in {lc.log_dir} ({passed}no file was left "
            "behind)",
            topic=topic,
            records=len(records),
        )
        return
    yield {
        "kind": "log",
        "path": str(path),
        "topic": topic,
        "date": path.name[:10],
        "records": len(records),
        "bytes": len(text.encode("utf-8")),
    }


def cli(
    lc: Context,
    topic: Annotated[str, typer.Option("--topic", "-t", help="What the entry is about.")],
    message: Annotated[
        str | None,
        typer.Option("--message", "-m", help="Text of the entry (then stdin is not read)."),
    ] = None,
    input: Annotated[
        Path | None, typer.Option("--input", "-i", help="Read records from FILE.")
    ] = None,
) -> int:
    """Write one dated Markdown log entry (YYYY-MM-DD_<topic>.md) from records or a message."""
    return lc.emit(run(lc, topic, message, input))
