"""Steps 3 and 4: move the folder; write CLOSED.md and the dated log entry.

Each checks the world first: a folder already moved is not moved again, a CLOSED.md
with the same text is not rewritten, and a log entry already written for this revision
of the journal (found by its marker line) is not written twice.
"""

from __future__ import annotations

import errno
import re
import shutil
from pathlib import Path
from typing import Any

from labctl.experiments import move as mv
from labctl.experiments.journal import Journal
from labctl.experiments.model import Setup, Step, Stop
from labctl.records import rfc3339

MARKER = "<!-- written by labctl migrate-experiment; re-runs rewrite it from the journal -->"


def _refuse(message: str, reason: str, outcome: str = "refused") -> Stop:
    return Stop(Step("move", outcome, message), reason)


def precheck(s: Setup, journal: Journal) -> None:
    """Both folders and no copy of ours under way: refuse before anything is touched."""
    state = (journal.data.get("move") or {}).get("state")
    if s.active.is_dir() and s.complete.exists() and state not in ("verified", "placed"):
        raise _refuse(
            f"{s.complete} already exists: never replaced, never nested into; nothing done",
            "destination_exists",
        )


def move(s: Setup, journal: Journal) -> Step:
    a, c = s.active.is_dir(), s.complete.is_dir()
    state = (journal.data.get("move") or {}).get("state")
    if a and c:
        if state not in ("verified", "placed"):
            raise _refuse(
                f"{s.complete} already exists: never replaced, never nested into",
                "destination_exists",
            )
        return _finish_copy(s, journal)
    if not a:
        if mv.partial_of(s.complete).exists():
            shutil.rmtree(mv.partial_of(s.complete))
        return Step("move", "already_done", f"already in {s.complete}")
    s.complete.parent.mkdir(parents=True, exist_ok=True)
    try:
        mv.rename_noreplace(s.active, s.complete)
    except FileExistsError:
        raise _refuse(
            f"{s.complete} appeared meanwhile: not replaced", "destination_exists"
        ) from None
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise _refuse(f"cannot move {s.active}: {exc.strerror}", "io_error", "failed") from None
        return _copy(s, journal)
    journal.data["move"] = {"how": "rename", "state": "done"}
    journal.save()
    return Step("move", "done", f"renamed {s.active} to {s.complete}", {"how": "rename"})


def _copy(s: Setup, journal: Journal) -> Step:
    journal.data["move"] = {"how": "copy", "state": "copying"}
    journal.save()
    try:
        files, size = mv.copy_verified(s.active, s.complete, s.hook)
    except OSError as exc:
        raise _refuse(
            f"copy to {s.complete} failed: {exc.strerror or exc}", "io_error", "failed"
        ) from None
    journal.data["move"] = {"how": "copy", "state": "verified", "files": files, "bytes": size}
    journal.save()
    mv.rename_noreplace(mv.partial_of(s.complete), s.complete)
    s.hook("copy_placed")
    return _finish_copy(s, journal)


def _finish_copy(s: Setup, journal: Journal) -> Step:
    info = journal.data["move"]
    info["state"] = "placed"
    journal.save()
    try:
        mv.delete_copied_source(s.active, s.complete, s.hook)
    except OSError as exc:
        raise _refuse(f"{exc.strerror or exc}", "io_error", "failed") from None
    info["state"] = "done"
    journal.save()
    return Step(
        "move",
        "done",
        f"copied {s.active} to {s.complete} across file systems ({info.get('files')} files, "
        f"{info.get('bytes')} bytes, sha256 verified), then deleted the source",
        {"how": "copy", "files": info.get("files"), "bytes": info.get("bytes")},
    )


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 3)


def render_closed(journal: Journal) -> str:
    d = journal.data
    when = rfc3339(d.get("started_at")) or ""
    lines = [MARKER, f"# {d['name']} — closed {when[:10]}", ""]
    lines += [
        f"- Closed: {when}",
        f"- Reason: {d.get('reason') or '(none given)'}",
        f"- By: {d.get('who')} on {d.get('host')}",
        f"- Moved: {d.get('from')} → {d.get('to')}"
        + (f" ({(d.get('move') or {}).get('how')})" if d.get("move") else ""),
    ]
    if d.get("forced"):
        lines.append(f"- Forced past {len(d.get('forced_jobs') or [])} pending/running job(s)")
    if d.get("forced_unknown"):
        lines.append(f"- Forced although the job information was incomplete: {d['forced_unknown']}")
    lines += ["", "## Retired cron lines", ""]
    for item in d["cron"]:
        fence = _fence(item["line"])
        lines += [f"- {item['crontab']} (line {item['line_number']}, by {item['why']}):", "",
                  f"  {fence}", f"  {item['line']}", f"  {fence}", ""]  # fmt: skip
    if not d["cron"]:
        lines += ["None.", ""]
    lines += ["## Retired refill entries", ""]
    for item in d["refill"]:
        text = "".join(item["removed"]).rstrip("\n")
        fence = _fence(text)
        lines += [f"- {item['file']}: `{item['entry']}`", "", f"  {fence}"]
        lines += [f"  {ln}" for ln in text.splitlines()] + [f"  {fence}", ""]
    if not d["refill"]:
        lines += ["None.", ""]
    if d["backups"]:
        lines += ["## Backups", ""] + [f"- {b['of']}: {b['path']}" for b in d["backups"]] + [""]
    return "\n".join(lines)


def write_closed(s: Setup, journal: Journal) -> Step:
    from labctl.fsops import atomic_write_text

    text = s.redact(render_closed(journal))
    path = s.complete / "CLOSED.md"
    try:
        old = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        old = None
    if old == text:
        return Step("closed_md", "already_done", f"{path} is up to date", {"path": str(path)})
    if old is not None and not old.startswith(MARKER):
        path = s.complete / "CLOSED.labctl.md"  # someone else's CLOSED.md stays as it is
    atomic_write_text(path, text, mode=0o644)
    journal.data["closed_md"] = str(path)
    journal.save()
    return Step("closed_md", "done", f"wrote {path}", {"path": str(path)})


def write_log(s: Setup, journal: Journal) -> Step:
    from labctl.logbook import render_entry, write_entry

    d = journal.data
    if d["logged_revision"] >= d["revision"] and d.get("log_entries"):
        return Step("log", "already_done", "logged", {"path": d["log_entries"][-1]})
    topic = f"closed-{s.name.replace('+', '-')}"[:80]
    marker = f"labctl-migration: {d['id']} revision {d['revision']}"
    path = _logged(s.log_dir, topic, marker)
    if path is None:
        message = f"{render_closed(journal).split(chr(10), 1)[1]}\n{marker}\n"
        text = s.redact(render_entry(topic, s.now(), [], message))
        path = write_entry(s.log_dir, topic, s.now(), text)
    d["logged_revision"] = d["revision"]
    d.setdefault("log_entries", []).append(str(path))
    journal.save()
    return Step("log", "done", f"wrote {path}", {"path": str(path)})


def _logged(log_dir: Path, topic: str, marker: str) -> Path | None:
    """An entry an interrupted run already wrote (found by its marker), else None."""
    for path in sorted(log_dir.glob(f"*_{topic}*.md")):
        try:
            if marker in path.read_text("utf-8"):
                return path
        except (OSError, UnicodeDecodeError):
            continue
    return None


def closing_details(journal: Journal) -> dict[str, Any]:
    d = journal.data
    return {"closed_md": d.get("closed_md"), "log_entry": (d.get("log_entries") or [None])[-1]}
