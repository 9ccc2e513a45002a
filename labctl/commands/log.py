"""`labctl log --topic TOPIC`: one dated Markdown file per event, never one long document.

Reads records on stdin (or takes `--message`), writes `YYYY-MM-DD_<topic>.md` in the
configured log directory — a second entry on the same day gets `-2`, `-3`… and no file is
ever appended to or overwritten — with a short human summary on top and the records
below. Everything written is redacted. The records read pass through unchanged and a
`log` record with the path closes the stream, so the entry can sit mid-pipeline:
`labctl poll | labctl diagnose | labctl log --topic sweep | labctl table`.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from labctl.context import Context
from labctl.errors import UsageError
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
MAX_ATTENTION_LINES = 40


def entry_path(log_dir: Path, date: str, topic: str, attempt: int) -> Path:
    suffix = "" if attempt == 1 else f"-{attempt}"
    return log_dir / f"{date}_{topic}{suffix}.md"


def _headline(rec: dict[str, Any]) -> str | None:
    """One human line for a record that needs a person, else None."""
    from labctl.errors import ExitCode
    from labctl.severity import severity

    if severity(rec) == ExitCode.OK:
        return None
    kind = rec.get("kind")
    if kind == "error":
        return f"error ({rec.get('reason')}): {rec.get('message')}"
    if kind == "job":
        where = f"{rec.get('cluster')}/{rec.get('job_id')}"
        diag = rec.get("diagnosis") or {}
        why = f" — {diag.get('category')}: {diag.get('fix')}" if diag.get("category") else ""
        return f"{where} {rec.get('name')}: {rec.get('verdict')}{why}"
    if kind == "file":
        return f"{rec.get('path')}: not verified ({rec.get('reason')})"
    if kind == "pr":
        where = f"{rec.get('repo')}#{rec.get('number')} {rec.get('title') or ''}".rstrip()
        return f"{where}: {rec.get('decision')} — {rec.get('message')}"
    return f"{kind}: {rec.get('message') or rec.get('reason') or rec.get('category') or ''}"


def render_entry(
    topic: str, when: float, records: list[dict[str, Any]], message: str | None
) -> str:
    from labctl.emit import dumps
    from labctl.records import rfc3339

    counts = Counter(str(r.get("kind")) for r in records)
    verdicts = Counter(str(r.get("verdict")) for r in records if r.get("kind") == "job")
    decisions = Counter(str(r.get("decision")) for r in records if r.get("kind") == "pr")
    lines = [f"# {topic} — {rfc3339(when)}", ""]
    if message:
        lines += [message.strip(), ""]
    if records:
        summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        lines.append(f"Records: {summary}.")
        if verdicts:
            lines.append(
                "Jobs: " + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())) + "."
            )
        if decisions:
            lines.append(
                "PRs: " + ", ".join(f"{n} {d}" for d, n in sorted(decisions.items())) + "."
            )
        attention = [h for h in map(_headline, records) if h]
        lines += ["", f"## Needs a person ({len(attention)})", ""]
        lines += [f"- {h}" for h in attention[:MAX_ATTENTION_LINES]] or ["- nothing"]
        if len(attention) > MAX_ATTENTION_LINES:
            lines.append(f"- … and {len(attention) - MAX_ATTENTION_LINES} more")
        lines += ["", "## Records", "", "```jsonl"]
        lines += [dumps(r) for r in records]
        lines.append("```")
    return "\n".join(lines) + "\n"


def write_entry(log_dir: Path, topic: str, when: float, text: str) -> Path:
    """Create the next free `YYYY-MM-DD_<topic>[-N].md`; never touches an existing file."""
    from labctl.fsops import create_exclusive

    log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    date = time.strftime("%Y-%m-%d", time.localtime(when))
    data = text.encode("utf-8")
    for attempt in range(1, 10_000):
        path = entry_path(log_dir, date, topic, attempt)
        try:
            return create_exclusive(path, data, mode=0o600)
        except FileExistsError:
            continue
    raise UsageError(f"too many {topic} entries for {date} in {log_dir}")


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
    when = lc.clock()
    text = lc.redactor.text(render_entry(topic, when, records, message))
    path = write_entry(lc.log_dir, topic, when, text)
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
