"""The dated log: one Markdown file per event (`YYYY-MM-DD_<topic>[-N].md`), never one long
document. `labctl log` writes entries with it, and so does any command that logs an event
of its own (migrate-experiment's closing entry): one writer, one format.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

from labctl.errors import UsageError

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
    if kind == "rl_health":
        return f"{_rl_line(rec)} — labctl never kills: a person decides"
    return f"{kind}: {rec.get('message') or rec.get('reason') or rec.get('category') or ''}"


def _rl_line(rec: dict[str, Any]) -> str:
    """`c1/4812 rl-grpo-smoke: KILL (0.85; entropy+learning) — message. Check: ...`"""
    where = (
        f"{rec.get('cluster')}/{rec.get('job_id')} {rec.get('name') or ''}"
        if rec.get("job_id") is not None
        else str(rec.get("path"))
    )
    detail = "+".join(rec.get("families") or []) or rec.get("reason") or ""
    checks = rec.get("checks") or []
    text = f"{where.strip()}: {rec.get('recommendation')} ({rec.get('confidence')}; {detail})"
    text += f" — {rec.get('message')}"
    return text + (f". Check: {checks[0]}" if checks else "")


def _rl_section(records: list[dict[str, Any]]) -> list[str]:
    """Every rl-health recommendation of the entry (KILL, WATCH and NO-KILL alike)."""
    health = [r for r in records if r.get("kind") == "rl_health"]
    if not health:
        return []
    lines = ["", f"## RL health ({len(health)})", ""]
    return lines + [f"- {_rl_line(r)}" for r in health[:MAX_ATTENTION_LINES]]


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
        lines += _rl_section(records)
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
