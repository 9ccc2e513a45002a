"""`labctl migrate-experiment NAME`: the steps, in order, each checking the state first.

    1. lock (the experiments root) and check jobs: refuse while the experiment has a
       pending or running job, or while the job information may be missing some (a
       stale store, a cluster never polled, error records in --jobs); --force --reason
       overrides, and says so
    2. retire its cron lines and refill entries (backed up, journaled, atomic)
    3. move active/NAME to complete/NAME (rename, or copy-verify-delete)
    4. CLOSED.md in the moved folder, and a dated log entry

Dry run by default (nothing is written, the lock is not taken). A step that refuses or
fails stops the run before anything after it: a closed experiment is never half-closed
in a way a re-run cannot finish. A write the disk refuses (full, read-only, permission)
stops it the same way (reason `not_written`, exit 3). One `experiment` record says what
each step did.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from labctl.errors import LabctlError, UsageError
from labctl.experiments import closing
from labctl.experiments.jobcheck import check_jobs
from labctl.experiments.journal import Journal
from labctl.experiments.model import Record, Setup, Step, Stop
from labctl.experiments.rules import (
    cron_scan,
    mention_items,
    refill_plan,
    retire_cron,
    retire_refill,
)


def _rules_dry(s: Setup) -> tuple[list[Step], list[Record]]:
    cron, mentions, refill, errors = [], [], [], []
    for target in s.crontabs:
        feed, ment = cron_scan(target, s)
        cron += [
            {"crontab": target.label, "line_number": ln.number, "line": ln.shown} for ln in feed
        ]
        mentions += mention_items(target, ment)
    for path in s.refill_files:
        plan, _ = refill_plan(path, s.name)
        refill += [{"file": str(path), **e} for e in plan.entries]
        if not plan.verified:
            errors.append(f"{path}: {plan.error}")
    steps = [
        Step(
            "cron",
            "would_do" if cron else "nothing",
            f"{_n(cron, 'cron line', 'cron lines')} to retire",
            {"lines": cron},
        ),
        Step(
            "refill",
            "failed" if errors else ("would_do" if refill else "nothing"),
            "; ".join(errors) or f"{_n(refill, 'refill entry', 'refill entries')} to remove",
            {"entries": refill},
        ),
    ]
    return steps, mentions


def _retire(s: Setup, journal: Journal) -> list[Step]:
    lines: list[Record] = []
    for target in s.crontabs:
        try:
            lines += retire_cron(target, s, journal)
        except LabctlError as exc:
            raise Stop(
                Step("cron", "failed", f"{target.label}: {exc.message}"), exc.reason
            ) from None
    s.hook("cron_done")
    entries: list[Record] = []
    for path in s.refill_files:
        removed, error = retire_refill(path, s, journal)
        if error is not None:
            raise Stop(Step("refill", "failed", error, {"entries": entries}), "refill_unverified")
        entries += removed
    s.hook("refill_done")

    def outcome(now: list[Record], section: str) -> str:
        return "done" if now else ("already_done" if journal.data[section] else "nothing")

    return [
        Step(
            "cron",
            outcome(lines, "cron"),
            f"retired {_n(lines, 'cron line', 'cron lines')}",
            {"lines": lines},
        ),
        Step(
            "refill",
            outcome(entries, "refill"),
            f"removed {_n(entries, 'refill entry', 'refill entries')}",
            {"entries": entries},
        ),
    ]


def _apply(s: Setup, journal: Journal, steps: list[Step]) -> None:
    from labctl.fsops import state_lock

    with state_lock(s.root, ".labctl-migrate", wait_s=s.lock_wait_s):
        s.hook("locked")
        closing.precheck(s, journal)
        journal.start(
            {
                "id": secrets.token_hex(8),
                "name": s.name,
                "root": str(s.root),
                "from": str(s.active),
                "to": str(s.complete),
                "reason": s.reason,
                "who": s.who,
                "host": s.host,
                "started_at": s.now(),
                "forced": False,
            },
            new_folder=s.active.is_dir() and not s.complete.exists(),
        )
        steps.append(check_jobs(s, journal))
        with _writing("journal", s.state_dir):
            journal.save()
        s.hook("jobs_checked")
        with _writing("rules", s.state_dir):
            steps.extend(_retire(s, journal))
        with _writing("move", s.complete):
            steps.append(closing.move(s, journal))
        s.hook("moved")
        with _writing("closed_md", s.complete):
            steps.append(closing.write_closed(s, journal))
        s.hook("closed_written")
        with _writing("log", s.log_dir):
            steps.append(closing.write_log(s, journal))
            if journal.data.get("done_at") is None:
                journal.data["done_at"] = s.now()
                journal.save()


@contextmanager
def _writing(step: str, where: Path) -> Iterator[None]:
    """A full disk, a read-only mount, a permission or a quota stops the run at `step`
    with reason `not_written`: every write is atomic and journaled first, so what was not
    written is untouched and a re-run with --apply finishes the migration."""
    from labctl.faults import is_write_fault, not_written

    try:
        yield
    except OSError as exc:
        if not is_write_fault(exc):
            raise
        place = Path(exc.filename) if isinstance(exc.filename, str) else where
        rec = not_written(
            place,
            exc,
            f"{step}: a write failed, nothing is half-done (what was not written is "
            "untouched; --apply again finishes the migration)",
        )
        details = {k: rec[k] for k in ("path", "errno", "free_bytes")}
        raise Stop(Step(step, "failed", rec["message"], details), "not_written") from None


def _dry(s: Setup, journal: Journal, steps: list[Step]) -> list[Record]:
    closing.precheck(s, journal)
    steps.append(check_jobs(s, None))
    rule_steps, mentions = _rules_dry(s)
    steps.extend(rule_steps)
    if s.active.is_dir():
        dest = s.complete.parent if s.complete.parent.exists() else s.root
        how = "rename" if _same_fs(s.active, dest) else "copy across file systems, verify, delete"
        steps.append(Step("move", "would_do", f"{s.active} → {s.complete} ({how})"))
    else:
        steps.append(Step("move", "already_done", f"already in {s.complete}"))
    steps.append(Step("closed_md", "would_do", f"write {s.complete / 'CLOSED.md'}"))
    steps.append(Step("log", "would_do", f"a dated entry in {s.log_dir}"))
    return mentions


def _same_fs(a: Path, b: Path) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return True


def migrate(s: Setup) -> Record:
    if not s.active.is_dir() and not s.complete.is_dir():
        raise UsageError(
            f"no experiment {s.name!r} in {s.root}/active or {s.root}/complete",
            reason="no_such_experiment",
        )
    journal = Journal.load(s.state_dir, s.name, s.root)
    steps: list[Step] = []
    reason, mentions = None, []
    try:
        if s.apply:
            _apply(s, journal, steps)
            mentions = [m for t in s.crontabs for m in _mentions(t, s)]
        else:
            mentions = _dry(s, journal, steps)
    except Stop as stop:
        steps.append(stop.step)
        reason = stop.reason
    return _record(s, journal, steps, reason, mentions)


def _mentions(target: Any, s: Setup) -> list[Record]:
    _, ment = cron_scan(target, s)
    return mention_items(target, ment)


def _record(s: Setup, journal: Journal, steps: list[Step], reason: str | None,
            mentions: list[Record]) -> Record:  # fmt: skip
    done = any(st.outcome in ("done", "forced") for st in steps)
    if reason is not None:
        status = "refused" if steps[-1].outcome == "refused" else "failed"
    elif not s.apply:
        status = "would_close"
    else:
        status = "closed" if done else "already_closed"
    d = journal.data if s.apply else {}
    open_ = [m for m in mentions if m["why"] == "unresolved"]
    rec: Record = {
        "kind": "experiment",
        "name": s.name,
        "status": status,
        "applied": s.apply and reason is None,
        "root": str(s.root),
        "from": str(s.active),
        "to": str(s.complete),
        "close_reason": s.reason,
        "forced": bool(d.get("forced")),
        "steps": [st.record() for st in steps],
        "retired_cron": d.get("cron", []),
        "retired_refill": d.get("refill", []),
        "mentions": mentions,
        **(closing.closing_details(journal) if s.apply else {"closed_md": None, "log_entry": None}),
        "reason": reason,
        "needs_attention": reason is not None or bool(open_),
        "message": (steps[-1].message if reason is not None else _summary(status, s, steps))
        + (_unresolved_note(open_, s.name) if open_ else ""),
    }
    return rec


def _unresolved_note(open_: list[Record], name: str) -> str:
    where = ", ".join(f"{m['crontab']} line {m['line_number']}" for m in open_[:3])
    return (
        f"; {_n(open_, 'cron line names', 'cron lines name')} {name} in a way labctl cannot "
        f"resolve ({where}): it may still feed the experiment, check by hand (mentions)"
    )


def _summary(status: str, s: Setup, steps: list[Step]) -> str:
    if status == "would_close":
        return f"dry run: would close {s.name} (--apply acts)"
    if status == "already_closed":
        return f"{s.name} was already closed; nothing changed"
    return f"closed {s.name}: " + "; ".join(st.message for st in steps if st.outcome == "done")


def _n(items: list[Any], one: str, many: str) -> str:
    return f"{len(items)} {one if len(items) == 1 else many}"
