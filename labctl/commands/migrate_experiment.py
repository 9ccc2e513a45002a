"""`labctl migrate-experiment NAME --reason TEXT [--apply]`: close an experiment in one pass.

Moves `<root>/active/NAME` to `<root>/complete/NAME` and, in the same pass, retires every
autonomous rule that fed it — crontab lines tagged `# labctl:experiment=NAME` or naming
its folder as a path (the user's crontab and `[experiments] crontabs`), and keep-N/refill
entries naming it in `[experiments] refill_files` (YAML/TOML/JSON; only the entry's bytes
go, the file is re-parsed to prove it) — then writes CLOSED.md in the moved folder (date,
reason, the exact lines retired, who, which host) and a dated log entry.

Refuses while a job of the experiment is pending or running (from `--jobs FILE|-` poll
records, else poll's state store; matched by the job name patterns or the work dir), and
while that information may be missing one: poll's store older than [experiments]
max_state_age_s or a cluster it never polled successfully (`stale_job_state`), error
records in --jobs (`jobs_incomplete`); `--force --reason` overrides and says so. Lines
that spell the folder `~/...`, `$HOME/...` or with the crontab's own variables are
retired too; a line that names the experiment in a way labctl cannot resolve (a relative
path, an unset variable, a bare argument) is left, listed in `mentions` as unresolved,
and needs a person (exit 1). Every step checks the state first, so a re-run after a crash
at any point finishes the job and a re-run after success changes nothing. Dry run by
default. `--list` surveys every experiment and flags the idle, the still fed and the ones
with jobs after closing (exit 1).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from labctl.context import Context
from labctl.schemas import COMMON, STR_OR_NULL, TIME, record

_LINES = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "crontab": {"type": "string"},
            "line_number": {"type": "integer"},
            "line": {"type": "string"},
            "why": {
                "enum": ["tag", "path", "unresolved", "elsewhere"],
                "description": "retired by its tag or a path to the folder; a mention: "
                "unresolved (may feed it, a person must look) or elsewhere",
            },
        },
        "required": ["crontab", "line_number", "line"],
    },
}
_ENTRIES = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "file": {"type": "string"},
            "entry": {"type": "string"},
            "removed": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["file", "entry"],
    },
}
_JOBS = {"type": "array", "items": {"type": "object"}}
SCHEMAS = {
    **COMMON,
    "experiment": record(
        "experiment",
        "One experiment. A migration: status would_close (dry run), closed, already_closed, "
        "refused or failed, with each step's outcome (lock/jobs, cron, refill, move, "
        "closed_md, log: done, already_done, would_do, nothing, skipped, forced, refused, "
        "failed). --list: status active or complete, what feeds it, its last job, flags.",
        {
            "name": {"type": "string"},
            "status": {
                "enum": [
                    "would_close",
                    "closed",
                    "already_closed",
                    "refused",
                    "failed",
                    "active",
                    "complete",
                ]
            },
            "applied": {"type": "boolean"},
            "root": {"type": "string"},
            "from": {"type": "string"},
            "to": {"type": "string"},
            "path": {"type": "string"},
            "close_reason": STR_OR_NULL,
            "forced": {"type": "boolean"},
            "steps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "step": {"enum": ["jobs", "cron", "refill", "move", "closed_md", "log"]},
                        "outcome": {
                            "enum": [
                                "done",
                                "already_done",
                                "would_do",
                                "nothing",
                                "skipped",
                                "forced",
                                "refused",
                                "failed",
                            ]
                        },
                        "message": {"type": "string"},
                    },
                    "required": ["step", "outcome", "message"],
                },
            },
            "retired_cron": _LINES,
            "retired_refill": _ENTRIES,
            "mentions": _LINES,
            "cron": _LINES,
            "refill": _ENTRIES,
            "jobs": _JOBS,
            "last_job": {"type": ["object", "null"], "properties": {"seen_at": TIME}},
            "flags": {
                "type": "array",
                "items": {"enum": ["idle", "still_fed", "jobs_after_close"]},
            },
            "closed_md": STR_OR_NULL,
            "log_entry": STR_OR_NULL,
            "reason": {"type": ["string", "null"], "description": "why it was refused/failed"},
            "needs_attention": {"type": "boolean"},
            "message": {"type": "string"},
        },
        ["name", "status", "needs_attention", "message"],
    ),
}
EXAMPLES = [
    'labctl migrate-experiment exp1 --reason "converged; results in the report"',
    'labctl poll | labctl migrate-experiment exp1 --jobs - --reason "done" --apply',
    'labctl migrate-experiment exp2 --apply --force --reason "jobs are zombies, see ops#12"',
    "labctl migrate-experiment --list --format table",
]
CRASH_ENV = "LABCTL_TEST_CRASH_AT"  # tests: SIGKILL labctl at this named point


def _hook(lc: Context) -> Any:
    point = lc.environ.get(CRASH_ENV)

    def hook(name: str) -> None:
        if point == name:
            import signal

            os.kill(os.getpid(), signal.SIGKILL)

    return hook


def _targets(lc: Context) -> list[Any]:
    from labctl.backends.crontab import CrontabTarget

    cfg = lc.config
    out = []
    if cfg.get("experiments.user_crontab"):
        out.append(
            CrontabTarget(user=cfg.get("cron.user") or None, program=cfg.get("cron.program"))
        )
    system = bool(cfg.get("experiments.system_crontabs"))
    out += [
        CrontabTarget(file=Path(f).expanduser(), system=system)
        for f in cfg.get("experiments.crontabs")
    ]
    return out


def _jobs(lc: Context, jobs: str | None) -> tuple[Any, list[tuple[dict[str, Any], float | None]],
                                                   str, tuple[str, str] | None]:  # fmt: skip
    """(job records or None, records with last-seen times, source, why they may be
    incomplete or None)."""
    from labctl.cluster.config import configured_clusters
    from labctl.experiments.jobcheck import store_problem, stream_problem
    from labctl.guard.stored import stored_jobs
    from labctl.stream import read_records

    if jobs is not None:
        from labctl.confine import check

        read = list(read_records(lc, check(lc, jobs)))
        recs = [r for r in read if r.get("kind") == "job"]
        return recs, [(r, None) for r in recs], f"--jobs {jobs}", stream_problem(read)
    names = [c.name for c in configured_clusters(lc.config)]
    stored = stored_jobs(lc.state_dir, names)
    if not stored.exists:
        return None, [], "store", None
    seen: list[tuple[dict[str, Any], float | None]] = [(r, t) for r, t in stored.seen]
    max_age = lc.config.get("experiments.max_state_age_s")
    problem = store_problem(stored.polled_at, lc.clock(), max_age)
    return stored.records, seen, "poll's state store", problem


def _who(lc: Context) -> str:
    import pwd

    try:
        return lc.environ.get("USER") or pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def cli(
    lc: Context,
    name: Annotated[
        str | None, typer.Argument(help="The experiment (a folder under active/).")
    ] = None,
    root: Annotated[
        Path | None, typer.Option("--root", help="Experiments root (default [experiments] root).")
    ] = None,
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why it is closed (needed with --apply).")
    ] = None,
    jobs: Annotated[
        str | None,
        typer.Option("--jobs", metavar="FILE|-", help="poll records to check (else the store)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Go on past pending/running jobs (needs --reason).")
    ] = False,
    apply: Annotated[bool, typer.Option("--apply", help="Act (default: dry run).")] = False,
    list_: Annotated[
        bool, typer.Option("--list", help="Survey every experiment; flag what needs a person.")
    ] = False,
) -> int:
    """Close an experiment in one safe pass: retire its rules, move it, write CLOSED.md."""
    from labctl.errors import UsageError
    from labctl.experiments.match import valid_name

    cfg = lc.config
    top = Path(os.path.abspath(Path(root or cfg.get("experiments.root")).expanduser()))
    if lc.confine is not None:  # under `labctl mcp`: the configured root too
        lc.confine.check(top)
    if list_:
        if name is not None or apply or force:
            raise UsageError("--list takes no NAME, --apply or --force")
        return lc.emit(_survey(lc, top, jobs))
    if name is None or not valid_name(name):
        raise UsageError(f"give the experiment's folder name (one path component), not {name!r}")
    if (apply or force) and not (reason and reason.strip()):
        raise UsageError("--apply and --force need --reason TEXT (it goes into CLOSED.md)")
    return lc.emit(_migrate(lc, top, name, reason, jobs, force=force, apply=apply))


def _migrate(lc: Context, top: Path, name: str, reason: str | None, jobs: str | None, *,
             force: bool, apply: bool) -> Iterator[dict[str, Any]]:  # fmt: skip
    from labctl.experiments.core import migrate
    from labctl.experiments.model import Setup

    cfg = lc.config
    records, _, source, problem = _jobs(lc, jobs)
    setup = Setup(
        name=name,
        root=top,
        state_dir=lc.state_dir,
        log_dir=lc.log_dir,
        crontabs=_targets(lc),
        refill_files=[Path(f).expanduser() for f in cfg.get("experiments.refill_files")],
        job_patterns=[t.replace("{name}", name) for t in cfg.get("experiments.job_patterns")],
        reason=reason,
        apply=apply,
        force=force,
        who=_who(lc),
        host=socket.gethostname(),
        now=lc.clock,
        redact=lc.redactor.text,
        jobs=records,
        jobs_source=source,
        jobs_problem=problem,
        lock_wait_s=cfg.get("poll.lock_wait_s"),
        hook=_hook(lc),
    )
    yield migrate(setup)


def _survey(lc: Context, top: Path, jobs: str | None) -> Iterator[dict[str, Any]]:
    from labctl.experiments.survey import survey

    cfg = lc.config
    _, seen, _, _ = _jobs(lc, jobs)
    yield from survey(
        top,
        _targets(lc),
        [Path(f).expanduser() for f in cfg.get("experiments.refill_files")],
        seen,
        cfg.get("experiments.job_patterns"),
        now=lc.clock(),
        idle_s=cfg.get("experiments.idle_days") * 86400,
    )
