"""`labctl cron install|status|remove|mark-run`: one `cron` record per call.

The sweep's line is found again by its tag (`# labctl:sweep`). install leaves one line
however often it runs; a different line that already carries the tag is reported
(`conflict`, exit 1) and left alone unless `replace`; remove takes out only lines carrying
the tag. Every other byte of the crontab stays identical (labctl.cron.lines).

A line without the tag may run the sweep too (written by hand, as the README once said):
one whose command is the one labctl would install, runs a `scripts/sweep`, or pipes
`labctl poll` into another stage (labctl.cron.sweep.runs_sweep). install treats such a
line exactly like a different tagged one (a `conflict`, never a second sweep; `replace`
puts labctl's line in its place), and status counts it (`untagged`, or `duplicate`
beside a tagged one).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labctl.backends.crontab import CrontabTarget, edit, read
from labctl.cron.lines import (
    Line,
    append_line,
    parse,
    remove_lines,
    replace_line,
    tagged,
)
from labctl.cron.sweep import runs_sweep
from labctl.records import parse_rfc3339, rfc3339

SWEEP_TAG = "sweep"
LAST_RUN_FILE = "sweep-last-run.json"


@dataclass(frozen=True)
class CronPlace:
    target: CrontabTarget
    state_dir: Path
    lock_wait_s: float = 10.0
    stale_after_s: float = 3900.0  # a last run older than this is stale


def sweep_line(schedule: str, command: str, target: CrontabTarget, user: str | None) -> str:
    who = f" {user or 'root'}" if target.system else ""
    return f"{schedule}{who} {command} # labctl:{SWEEP_TAG}"


def sweeps(data: bytes, place: CronPlace, ours: str) -> tuple[list[Line], list[Line]]:
    """(lines tagged as the sweep, untagged job lines that run it anyway)."""
    lines = parse(data, system=place.target.system)
    loose = [
        ln
        for ln in lines
        if ln.kind == "job" and ln.tag != SWEEP_TAG and runs_sweep(ln.command or "", ours)
    ]
    return tagged(lines, SWEEP_TAG), loose


def _command_of(line: str, place: CronPlace) -> str:
    parsed = parse(line.encode("utf-8"), system=place.target.system)
    return (parsed[0].command or "") if parsed else ""


def _shown(lines: list[Line]) -> list[dict[str, Any]]:
    return [{"line_number": ln.number, "line": ln.shown} for ln in lines]


def _base(place: CronPlace, action: str) -> dict[str, Any]:
    return {
        "kind": "cron",
        "action": action,
        "crontab": place.target.label,
        "tag": f"labctl:{SWEEP_TAG}",
    }


class _Conflict(Exception):
    def __init__(self, found: list[Line], loose: list[Line]) -> None:
        self.found = found
        self.loose = loose


def _conflict_message(place: CronPlace, exc: _Conflict) -> str:
    tagged_n = len(exc.found) - len(exc.loose)
    parts = []
    if tagged_n:
        parts.append(f"{tagged_n} other line(s) already carry the tag labctl:{SWEEP_TAG}")
    if exc.loose:
        numbers = ", ".join(str(ln.number) for ln in exc.loose)
        parts.append(f"{len(exc.loose)} untagged line(s) already run the sweep (line {numbers})")
    return (
        f"in {place.target.label}, " + " and ".join(parts) + "; left as they are, so the "
        "sweep is not installed twice (--replace puts this line in their place)"
    )


def install(place: CronPlace, line: str, *, replace: bool, dry_run: bool) -> dict[str, Any]:
    rec = _base(place, "install") | {"line": line, "applied": False}
    outcome: dict[str, Any] = {}
    ours = _command_of(line, place)

    def change(data: bytes) -> bytes:
        mine, loose = sweeps(data, place, ours)
        found = sorted([*mine, *loose], key=lambda ln: ln.number)
        outcome["found"], outcome["loose"] = found, loose
        if not found:
            outcome["status"] = "installed"
            return append_line(data, line)
        if not loose and len(found) == 1 and found[0].text.rstrip() == line:
            outcome["status"] = "unchanged"
            return data
        if not replace:
            raise _Conflict(found, loose)
        outcome["status"] = "replaced"
        data = remove_lines(data, [f.number for f in found[1:]])
        return replace_line(data, found[0].number, line)

    try:
        if dry_run:
            snap = read(place.target)
            new = change(snap.data)
        else:
            _, new = edit(
                place.target, change, lock_dir=place.state_dir, lock_wait_s=place.lock_wait_s
            )
    except _Conflict as exc:
        return rec | {
            "status": "conflict",
            "existing": _shown(exc.found),
            "untagged": _shown(exc.loose),
            "needs_attention": True,
            "message": _conflict_message(place, exc),
        }
    status = outcome["status"]
    mine = tagged(parse(new, system=place.target.system), SWEEP_TAG)
    return rec | {
        "status": status,
        "applied": not dry_run and status != "unchanged",
        "existing": _shown(outcome["found"]),
        "untagged": _shown(outcome["loose"]),
        "line_number": mine[0].number if mine else None,
        "needs_attention": False,
        "message": {
            "installed": f"the sweep is now in {place.target.label}",
            "unchanged": f"the sweep was already in {place.target.label}; nothing changed",
            "replaced": f"the sweep's line in {place.target.label} was replaced",
        }[status]
        + (" (dry run)" if dry_run and status != "unchanged" else ""),
    }


def remove(place: CronPlace, *, dry_run: bool, ours: str = "") -> dict[str, Any]:
    found: list[Line] = []
    loose: list[Line] = []

    def change(data: bytes) -> bytes:
        found[:] = sweeps(data, place, ours)[0]
        after = remove_lines(data, [f.number for f in found])
        loose[:] = sweeps(after, place, ours)[1]  # numbered as the crontab is left
        return after

    if dry_run:
        change(read(place.target).data)
    else:
        edit(place.target, change, lock_dir=place.state_dir, lock_wait_s=place.lock_wait_s)
    status = "removed" if found else "absent"
    message = (
        f"{len(found)} line(s) tagged labctl:{SWEEP_TAG} removed from "
        f"{place.target.label}" + (" (dry run)" if dry_run else "")
        if found
        else f"no line tagged labctl:{SWEEP_TAG} in {place.target.label}; nothing to remove"
    )
    if loose:  # not labctl's line: left alone, but the sweep still runs from it
        message += f"; untagged line(s) {_numbers(loose)} still run the sweep (not labctl's)"
    return _base(place, "remove") | {
        "status": status,
        "applied": bool(found) and not dry_run,
        "existing": _shown(found),
        "untagged": _shown(loose),
        "line": found[0].shown if found else None,
        "needs_attention": bool(loose),
        "message": message,
    }


def _numbers(lines: list[Line]) -> str:
    return ", ".join(str(ln.number) for ln in lines)


def last_run(state_dir: Path, now: float, stale_after_s: float) -> dict[str, Any] | None:
    """What scripts/sweep recorded about its last run (None: never recorded)."""
    try:
        data = json.loads((state_dir / LAST_RUN_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    ended = parse_rfc3339(data.get("ended_at"))
    age = None if ended is None else max(0.0, round(now - ended, 1))
    return {
        "started_at": data.get("started_at"),
        "ended_at": data.get("ended_at"),
        "exit_code": data.get("exit_code"),
        "host": data.get("host"),
        "age_s": age,
        "stale": age is None or age > stale_after_s,
    }


def _state(found: list[Line], loose: list[Line]) -> tuple[str, str | None]:
    """(status, the problem or None) of the sweep's lines in a crontab."""
    every = [*found, *loose]
    if len(every) > 1:
        which = f"lines {_numbers(sorted(every, key=lambda ln: ln.number))}"
        return "duplicate", f"{len(every)} lines run the sweep ({which}): it runs more than once"
    if loose:
        return "untagged", (
            f"the sweep runs from untagged line {loose[0].number}, which labctl does not "
            "manage (labctl cron install --replace adopts it)"
        )
    if not found:
        return "absent", "the sweep is not installed (labctl cron install)"
    return "installed", None


def status(place: CronPlace, *, now: float, daemon: bool | None, ours: str = "") -> dict[str, Any]:
    """What runs the sweep in the crontab (`ours`: the command install would use)."""
    found, loose = sweeps(read(place.target).data, place, ours)
    run = last_run(place.state_dir, now, place.stale_after_s)
    state, problem = _state(found, loose)
    problems = [problem] if problem else []
    if daemon is False:
        problems.append("no cron daemon is running on this machine")
    if (found or loose) and (run is None or run["stale"]):
        problems.append(
            "the sweep has never recorded a run"
            if run is None
            else f"the sweep last ended {run['age_s']:.0f}s ago"
        )
    return _base(place, "status") | {
        "status": state,
        "applied": False,
        "line": found[0].shown if found else None,
        "line_number": found[0].number if found else None,
        "existing": _shown(found),
        "untagged": _shown(loose),
        "last_run": run,
        "cron_daemon": daemon,
        "needs_attention": bool(problems),
        "message": "; ".join(problems) or "the sweep is installed once and ran recently",
    }


def mark_run(
    state_dir: Path, *, started: float | None, ended: float, exit_code: int, host: str
) -> dict[str, Any]:
    """Remember the sweep's run (scripts/sweep calls this at its end)."""
    from labctl.fsops import atomic_write_text

    data: Mapping[str, Any] = {
        "started_at": rfc3339(started),
        "ended_at": rfc3339(ended),
        "exit_code": exit_code,
        "host": host,
    }
    try:
        state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write_text(state_dir / LAST_RUN_FILE, json.dumps(data) + "\n", mode=0o600)
    except OSError as exc:
        from labctl.faults import fault_error, fault_record, is_write_fault

        if not is_write_fault(exc):
            raise
        what = f"the sweep's run was not recorded in {state_dir / LAST_RUN_FILE}"
        raise fault_error(fault_record("state_unwritable", state_dir, exc, what)) from None
    return {
        "kind": "cron",
        "action": "mark-run",
        "status": "recorded",
        "applied": True,
        "last_run": dict(data) | {"age_s": 0.0, "stale": False},
        "needs_attention": False,
        "message": f"sweep run recorded (exit {exit_code})",
    }
