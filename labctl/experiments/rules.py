"""Step 2: retire the autonomous rules that feed the experiment.

Crontab lines (the user's crontab and the configured crontab files) tagged
`# labctl:experiment=NAME` or naming the experiment's folder; keep-N/refill entries in
the configured YAML/TOML/JSON files. Before anything is rewritten its bytes are backed up
under the state dir and the journal lists what is about to go; files are replaced
atomically, crontabs through the crontab adapter (locked, re-read before writing).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from labctl.backends.crontab import CrontabTarget, edit, home_lookup, read
from labctl.cron.expand import HomeOf, expanded
from labctl.cron.lines import Line, parse, remove_lines, shell_code
from labctl.experiments.journal import Journal, backup
from labctl.experiments.match import (
    TAG,
    folder_forms,
    line_mentions,
    line_refers,
    unresolved,
    words_refer,
)
from labctl.experiments.model import Setup
from labctl.records import rfc3339

Record = dict[str, Any]


def feeding(
    lines: Sequence[Line], setup_name: str, folders: Sequence[str], home_of: HomeOf
) -> list[Line]:
    """The job lines tagged for the experiment or naming its folder (paths expanded)."""
    tag = TAG.replace("{name}", setup_name)
    commands = expanded(lines, home_of)

    def refers(ln: Line) -> bool:
        cmd = commands.get(ln.number, ln.command or "")
        return line_refers(cmd, folders) or words_refer(shell_code(cmd), folders)

    return [ln for ln in lines if ln.kind == "job" and (ln.tag == tag or refers(ln))]


def mentions(
    lines: Sequence[Line], name: str, feed: Sequence[Line], home_of: HomeOf
) -> list[tuple[Line, bool]]:
    """The other job lines naming `name`, each with whether it is unresolved (a person
    must look: it may feed the experiment in a way labctl cannot resolve)."""
    commands = expanded(lines, home_of)
    return [
        (ln, unresolved(shell_code(commands.get(ln.number, ln.command or "")), name))
        for ln in lines
        if ln.kind == "job" and ln not in feed and line_mentions(ln.command or "", name)
    ]


def mention_items(target: CrontabTarget, found: Sequence[tuple[Line, bool]]) -> list[Record]:
    return [
        {"crontab": target.label, "line_number": ln.number, "line": ln.shown,
         "why": "unresolved" if open_ else "elsewhere"}
        for ln, open_ in found
    ]  # fmt: skip


def folders(s: Setup) -> list[str]:
    return [*folder_forms(s.active), *folder_forms(s.complete)]


def cron_scan(target: CrontabTarget, s: Setup) -> tuple[list[Line], list[tuple[Line, bool]]]:
    """(lines that feed the experiment, lines that merely mention its name)."""
    lines = parse(read(target).data, system=target.system)
    home_of = home_lookup(target)
    feed = feeding(lines, s.name, folders(s), home_of)
    return feed, mentions(lines, s.name, feed, home_of)


def _cron_item(target: CrontabTarget, ln: Line, s: Setup) -> Record:
    why = "tag" if ln.tag == TAG.replace("{name}", s.name) else "path"
    line = s.redact(ln.shown)  # the journal and CLOSED.md never hold a secret
    return {"crontab": target.label, "line_number": ln.number, "line": line, "why": why}


def retire_cron(target: CrontabTarget, s: Setup, journal: Journal) -> list[Record]:
    """Remove the feeding lines from one crontab; returns them (empty: none were there)."""
    removed: list[Record] = []
    home_of = home_lookup(target)

    def change(data: bytes) -> bytes:
        found = feeding(parse(data, system=target.system), s.name, folders(s), home_of)
        removed[:] = [_cron_item(target, ln, s) for ln in found]
        if not found:
            return data
        when = rfc3339(s.now()) or ""
        kept = backup(s.state_dir, s.name, f"crontab-{target.label}", data, when)
        for item in removed:
            journal.add("cron", item, ("crontab", "line"))
        journal.add("backups", {"of": target.label, "path": str(kept)}, ("path",))
        journal.save()
        s.hook("cron_journaled")
        return remove_lines(data, [ln.number for ln in found])

    edit(target, change, lock_dir=s.state_dir, lock_wait_s=s.lock_wait_s)
    return removed


def refill_plan(path: Path, name: str) -> Any:
    from labctl.experiments.refill import RefillPlan, plan

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return RefillPlan(path), None
    return plan(path, raw, name), raw


def retire_refill(path: Path, s: Setup, journal: Journal) -> tuple[list[Record], str | None]:
    """Remove the entries from one file: (entries removed, error or None)."""
    from labctl.fsops import atomic_write_bytes

    plan, raw = refill_plan(path, s.name)
    if not plan.verified:
        return [], f"{path}: {plan.error}"
    if plan.new is None or raw is None:
        return [], None
    kept = backup(s.state_dir, s.name, path.name, raw, rfc3339(s.now()) or "")
    items = [
        {"file": str(path), "entry": e["entry"], "removed": [s.redact(t) for t in e["removed"]]}
        for e in plan.entries
    ]
    for item in items:
        journal.add("refill", item, ("file", "entry"))
    journal.add("backups", {"of": str(path), "path": str(kept)}, ("path",))
    journal.save()
    s.hook("refill_journaled")
    if path.read_bytes() != raw:
        return [], f"{path} changed while labctl was editing it; nothing written (run again)"
    atomic_write_bytes(path, plan.new)
    return items, None
