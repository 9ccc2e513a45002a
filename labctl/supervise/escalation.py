"""Escalation files: everything a person needs to take over a run supervise gave up on.

`<state_dir>/escalations/<UTC time>_<name>.md` and the same as `.json` (and copies in
--escalate-to DIR): the command, every attempt with its argv/env changes, exit status and
diagnosis, every fix, the last log lines, suggested next steps. Created exclusively (a
temporary file linked into place: never half-written, never overwriting another run's),
redacted, mode 0600.
"""

from __future__ import annotations

import errno
import json
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labctl.fsops import create_exclusive
from labctl.redact import Redactor

TAIL_LINES = 40
TAIL_BYTES = 64 * 1024

NEXT_STEPS = {
    "unknown_failure": "No catalog entry knows this failure: read the last log lines and the "
    "last traceback. If it recurs, add an entry to a user catalog ([catalog] files).",
    "budget_spent": "The fixes kept changing something but the run still fails: check that "
    "they help (see the attempts), then raise --max-retries or apply the fix by hand.",
    "fix_exhausted": "The catalog's fix can change nothing more here: apply the fix below "
    "some other way.",
    "arg_not_found": "The command has no argument the fix could change: add one (or its "
    "spelling to [supervise] <family>_args / a user catalog's [arg_families]).",
    "install_disabled": "Install the module into the command's environment yourself, or set "
    "[supervise] allow_install = true.",
    "install_failed": "pip could not install the module: see the install log.",
    "repeated_failure": "It failed the same way after a re-run: this is not transient.",
    "would_repeat": "The only fix would repeat an attempt already run.",
    "no_fix": "The catalog's fix is not one supervise applies itself: apply it by hand.",
}


@dataclass
class AttemptLog:
    """What the escalation file says about one attempt."""

    attempt: int
    argv: list[str]
    env_changes: dict[str, str | None]
    log: str
    exit_code: int | None = None
    signal: int | None = None
    duration_s: float = 0.0
    stalled: bool = False
    leftovers: list[int] = field(default_factory=list)
    diagnosis: dict[str, Any] | None = None
    fix: dict[str, Any] | None = None


def document(
    reg: Mapping[str, Any],
    *,
    reason: str,
    message: str,
    diagnosis: Mapping[str, Any] | None,
    final: tuple[Sequence[str], Mapping[str, str | None]],
    attempts: Sequence[AttemptLog],
    at: str | None,
    last_lines: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The escalation document (the .json file; render_md makes the .md of it).
    `last_lines`: the output's tail when the last attempt's log was not written."""
    argv, env = final
    return {
        "kind": "escalation",
        "run_id": reg.get("run_id"),
        "name": reg.get("name"),
        "reason": reason,
        "message": message,
        "host": reg.get("host"),
        "cwd": reg.get("cwd"),
        "started": reg.get("started"),
        "escalated_at": at,
        "command": list(reg.get("argv") or []),
        "final_command": list(argv),
        "env_changes": dict(env),
        "attempts": [vars(a) for a in attempts],
        "last_log_lines": list(last_lines)
        if last_lines is not None
        else log_tail(attempts[-1].log)
        if attempts
        else [],
        "next_steps": next_steps(reason, diagnosis, command_text(argv, env)),
    }


def command_text(argv: Sequence[str], env: Mapping[str, str | None] | None = None) -> str:
    """A shell line that runs `argv` with `env` changes (`env -u NAME NAME=value ...`)."""
    if not env:
        return shlex.join(argv)
    unsets = [f"-u {k}" for k, v in env.items() if v is None]
    sets = [f"{k}={shlex.quote(v)}" for k, v in env.items() if v is not None]
    return " ".join(["env", *unsets, *sets, shlex.join(argv)])


def log_tail(path: Path | str | None, lines: int = TAIL_LINES) -> list[str]:
    """The last lines of a log (bounded read from the end)."""
    if not path:
        return []
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - TAIL_BYTES))
            data = fh.read()
    except OSError:
        return []
    return tail_lines(data, cut=size > TAIL_BYTES, lines=lines)


def tail_lines(data: bytes, *, cut: bool = True, lines: int = TAIL_LINES) -> list[str]:
    """The last lines of the output's last bytes (`cut`: the first line may be partial)."""
    text = data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    out = text.split("\n")
    if cut and len(out) > 1:
        out = out[1:]  # the first line was cut
    while out and not out[-1].strip():
        out.pop()
    return out[-lines:]


def next_steps(reason: str, diagnosis: Mapping[str, Any] | None, rerun: str) -> list[str]:
    steps = [NEXT_STEPS.get(reason, "A person has to look.")]
    if diagnosis and diagnosis.get("fix") and reason != "unknown_failure":
        steps.append(f"Catalog fix ({diagnosis.get('catalog_id')}): {diagnosis['fix']}")
    steps.append(f"Re-run by hand: {rerun}")
    return steps


def _attempt_md(a: Mapping[str, Any]) -> list[str]:
    status = (
        f"exit {a['exit_code']}" if a.get("exit_code") is not None else f"signal {a.get('signal')}"
    )
    how = " (hung: killed for silence)" if a.get("stalled") else ""
    out = [f"### Attempt {a['attempt']}: {status}{how} after {a.get('duration_s', 0):.1f} s", ""]
    out.append(f"- Command: `{command_text(a['argv'])}`")
    env = ", ".join(f"{k}={v!r}" for k, v in (a.get("env_changes") or {}).items())
    out.append(f"- Environment changes: {env or 'none'}")
    d = a.get("diagnosis")
    if d:
        out.append(
            f"- Diagnosis: {d.get('category')} ({d.get('title')}), catalog entry "
            f"{d.get('catalog_id')}, fingerprint {d.get('fingerprint')}, retryable: "
            f"{'yes' if d.get('retryable') else 'no'}"
        )
        if d.get("evidence"):
            out.append(f"- Evidence: `{d['evidence']}`")
    fix = a.get("fix")
    if fix:
        what = "; ".join(f"{c['name']}: {c['old']} → {c['new']}" for c in fix["changes"])
        out.append(f"- Then: {fix['action']} ({fix['catalog_id']}){': ' + what if what else ''}")
    if a.get("leftovers"):
        out.append(f"- Processes left in its group and ended by labctl: {a['leftovers']}")
    out.append(f"- Log: {a.get('log')}")
    return [*out, ""]


def render_md(doc: Mapping[str, Any]) -> str:
    lines = [
        f"# Escalation: {doc['name']} ({doc['reason']})",
        "",
        doc["message"],
        "",
        f"- Run: {doc['run_id']} on {doc.get('host')} in {doc.get('cwd')}",
        f"- Started {doc['started']}, escalated {doc['escalated_at']}, "
        f"{len(doc['attempts'])} attempt(s)",
        f"- Command: `{command_text(doc['command'])}`",
        f"- Last run: `{command_text(doc['final_command'], doc.get('env_changes'))}`",
        "",
        "## Suggested next steps",
        "",
        *[f"- {s}" for s in doc["next_steps"]],
        "",
        "## Attempts",
        "",
    ]
    for a in doc["attempts"]:
        lines += _attempt_md(a)
    lines += ["## Last log lines", "", "```text", *doc["last_log_lines"], "```", ""]
    return "\n".join(lines)


def _write_pair(folder: Path, stem: str, md: bytes, js: bytes) -> tuple[Path, Path]:
    """The .md and .json in `folder` under a free name: both, or (OSError) neither."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    for n in range(1, 1000):
        base = str(folder / (stem if n == 1 else f"{stem}-{n}"))
        try:
            js_path = create_exclusive(Path(base + ".json"), js, mode=0o600)
        except FileExistsError:
            continue
        try:
            return create_exclusive(Path(base + ".md"), md, mode=0o600), js_path
        except OSError:  # never half a pair: the .json goes too
            js_path.unlink(missing_ok=True)
            raise
    raise FileExistsError(errno.EEXIST, "999 escalations of this name this second", str(folder))


@dataclass
class Written:
    """What write_files did: the (md, json) pair in each folder that took it, and the
    folders that refused theirs, with why."""

    pairs: list[tuple[Path, Path]] = field(default_factory=list)
    failed: list[tuple[Path, OSError]] = field(default_factory=list)


def write_files(
    doc: Mapping[str, Any], folders: Sequence[Path], when: float, redactor: Redactor
) -> Written:
    """Write the .md and .json into each folder, each independently of the others: a
    full state dir does not cost the --escalate-to copy, nor an unwritable copy the
    state dir's files."""
    clean = redactor.value(dict(doc))
    md = redactor.text(render_md(clean)).encode("utf-8")
    js = (json.dumps(clean, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    stem = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(when)) + "_" + str(doc["name"])
    out = Written()
    for folder in folders:
        try:
            out.pairs.append(_write_pair(folder, stem, md, js))
        except OSError as exc:
            out.failed.append((folder, exc))
    return out


def deliver(
    doc: Mapping[str, Any],
    folders: Sequence[Path],
    when: float,
    redactor: Redactor,
    notify_command: str | None,
    on_fault: Callable[[Path, OSError], None],
) -> dict[str, Any]:
    """Write the files and run the notify command: the `escalated` event's path,
    json_path, copies, not_written and notify. `path` is the first folder's file that was
    written (the state dir's, else a copy); each folder the disk refuses is told to
    `on_fault` and named in not_written. The notify command gets whatever file exists;
    with none, it is not run: the event itself still says everything."""
    from labctl.backends.localrun import notify

    written = write_files(doc, folders, when, redactor)
    for folder, exc in written.failed:
        on_fault(folder, exc)
    out: dict[str, Any] = {
        "path": None,
        "json_path": None,
        "copies": [],
        "not_written": [str(folder) for folder, _ in written.failed],
        "notify": None,
    }
    if not written.pairs:
        if notify_command:  # it is given the file, which is not there
            out["notify"] = {
                "ok": False,
                "exit_code": None,
                "timed_out": False,
                "error": "not written",
            }
        return out
    (md, js), *others = written.pairs
    out.update(path=str(md), json_path=str(js), copies=[str(p) for pair in others for p in pair])
    if notify_command:
        out["notify"] = notify(notify_command, md, js)
    return out
