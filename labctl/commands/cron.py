"""`labctl cron install|status|remove|mark-run`: the periodic sweep, in the crontab once.

install adds the sweep to the user's crontab (through `crontab -l` / `crontab -`, or the
crontab file `[cron] file`) with a trailing `# labctl:sweep` tag so labctl can find it
again: running it twice leaves one line, and a different line already carrying the tag,
or an untagged line that already runs the sweep (a hand-written `scripts/sweep` or
`labctl poll | ...` line), is reported (exit 1) and left alone unless --replace, which
puts labctl's line in its place. remove takes out only tagged lines.
Every other byte of the crontab stays identical. status says what is installed, whether a
cron daemon runs here and when the sweep last ran (scripts/sweep records each run with
mark-run); it exits 1 when the sweep is missing, doubled, stale or cannot run.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from labctl.cli import EXIT_CODES_HELP, with_context
from labctl.context import Context
from labctl.schemas import COMMON, INT_OR_NULL, SECONDS, STR_OR_NULL, TIME, record

_LINES = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"line_number": {"type": "integer"}, "line": {"type": "string"}},
        "required": ["line_number", "line"],
    },
}
SCHEMAS = {
    **COMMON,
    "cron": record(
        "cron",
        "The sweep's crontab line: what install/remove did (or would do with --dry-run), "
        "or what status found. status: installed, unchanged, replaced, conflict, removed, "
        "absent, duplicate, untagged, recorded. `existing`: the lines that already run the "
        "sweep (tagged or not); `untagged`: those of them without the tag (a sweep written "
        "by hand, which install never duplicates). needs_attention makes the exit code 1.",
        {
            "action": {"enum": ["install", "status", "remove", "mark-run"]},
            "crontab": {"type": "string", "description": "which crontab (user or file)"},
            "tag": {"type": "string"},
            "status": {
                "enum": [
                    "installed",
                    "unchanged",
                    "replaced",
                    "conflict",
                    "removed",
                    "absent",
                    "duplicate",
                    "untagged",
                    "recorded",
                ]
            },
            "line": STR_OR_NULL,
            "line_number": INT_OR_NULL,
            "existing": _LINES,
            "untagged": _LINES,
            "applied": {"type": "boolean"},
            "cron_daemon": {"type": ["boolean", "null"]},
            "last_run": {
                "type": ["object", "null"],
                "properties": {
                    "started_at": TIME,
                    "ended_at": TIME,
                    "exit_code": INT_OR_NULL,
                    "host": STR_OR_NULL,
                    "age_s": SECONDS,
                    "stale": {"type": "boolean"},
                },
            },
            "needs_attention": {"type": "boolean"},
            "message": {"type": "string"},
        },
        ["action", "status", "applied", "needs_attention", "message"],
    ),
}
EXAMPLES = [
    "labctl cron status || labctl cron install     # after a restart: never two sweeps",
    "labctl cron install --every 30m",
    'labctl cron install --replace --command "SWEEP_QUIET_OK=1 /opt/labctl/scripts/sweep"',
    "labctl cron remove --dry-run",
]
# Variables labctl itself reads for its places: cron's bare environment lacks them, so an
# installed line carries the ones set now (never a secret: only these names).
_PLACE_VARS = (
    "LABCTL_CONFIG",
    "LABCTL_STATE_DIR",
    "LABCTL_LOG_DIR",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
)

app = typer.Typer(
    help="Install, show or remove the periodic sweep in the crontab (exactly once)."
    "\n\nThe sweep's line carries a trailing `# labctl:sweep` tag; every other byte of the "
    "crontab stays identical. An untagged line that already runs the sweep (a hand-written "
    "scripts/sweep or `labctl poll | ...` line) counts too: install reports it instead of "
    "adding a second sweep (--replace adopts it). `labctl cron status || labctl cron "
    "install` after a restart never leaves two sweeps.",
    epilog=EXIT_CODES_HELP,
    add_completion=False,
    rich_markup_mode=None,
    no_args_is_help=True,
)


def _place(lc: Context) -> Any:
    from labctl.backends.crontab import CrontabTarget
    from labctl.cron.core import CronPlace

    cfg = lc.config
    file = cfg.get("cron.file")
    target = CrontabTarget(
        file=Path(file).expanduser() if file else None,
        user=cfg.get("cron.user") or None,
        program=cfg.get("cron.program"),
        system=bool(cfg.get("cron.system_format")),
    )
    return CronPlace(
        target=target,
        state_dir=lc.state_dir,
        stale_after_s=2 * cfg.get("progress.poll_interval_s") + 300,
    )


def default_command(lc: Context) -> str:
    """This checkout's scripts/sweep, else the sweep shipped with labctl run by this labctl
    (labctl.cron.sweep: the same stages, and the run recorded for `cron status`)."""
    from importlib import resources

    from labctl.cron.sweep import command

    env = {name: lc.environ[name] for name in _PLACE_VARS if lc.environ.get(name)}
    if lc.config.path_source != "default" and "LABCTL_CONFIG" not in lc.environ:
        env = {"LABCTL_CONFIG": str(lc.config.path.resolve()), **env}
    script = Path(__file__).resolve().parents[2] / "scripts" / "sweep"
    console = Path(sys.executable).parent / "labctl"
    return command(
        env,
        checkout_script=script if script.is_file() else None,
        shipped=Path(str(resources.files("labctl").joinpath("data/sweep.sh"))),
        labctl=[str(console)] if console.is_file() else [sys.executable, "-m", "labctl"],
    )


def _command(lc: Context, given: str | None) -> str:
    """What cron runs: --command, else [cron] command, else the sweep (one line)."""
    from labctl.cron.lines import escape_percent
    from labctl.errors import UsageError

    cmd = given or lc.config.get("cron.command") or default_command(lc)
    if "\n" in cmd or "\r" in cmd or not cmd.strip():
        raise UsageError("--command must be one non-empty line")
    return escape_percent(cmd.strip())


def _seconds(text: str) -> float:
    from labctl.errors import UsageError
    from labctl.records import duration_seconds

    try:
        return duration_seconds(text)
    except ValueError as exc:
        raise UsageError(f"--every: {exc}") from None


@app.command("install")
@with_context("cron install")
def install(
    lc: Context,
    every: Annotated[
        str | None,
        typer.Option("--every", metavar="DURATION", help="How often (default [cron] every)."),
    ] = None,
    schedule: Annotated[
        str | None,
        typer.Option("--schedule", help="A raw cron schedule instead ('7,37 * * * *')."),
    ] = None,
    command: Annotated[
        str | None,
        typer.Option("--command", help="What cron runs (default [cron] command, else the sweep)."),
    ] = None,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="Put this line in place of the line(s) already running the sweep.",
        ),
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would change.")] = False,
) -> int:
    """Add the sweep to the crontab, tagged `# labctl:sweep`; twice leaves one line."""
    from labctl.cron import schedule as sched
    from labctl.cron.core import install as do_install
    from labctl.cron.core import sweep_line

    place = _place(lc)
    if schedule is not None:
        when = sched.check(schedule)
    else:
        text = every or lc.config.get("cron.every")
        when = sched.every(_seconds(text), text)
    line = sweep_line(when, _command(lc, command), place.target, lc.config.get("cron.user"))
    return lc.emit([do_install(place, line, replace=replace, dry_run=dry_run)])


@app.command("status")
@with_context("cron status")
def status(lc: Context) -> int:
    """What is installed, whether cron runs here, and when the sweep last ran."""
    from labctl.backends.crontab import daemon_running
    from labctl.cron.core import status as do_status

    rec = do_status(_place(lc), now=lc.clock(), daemon=daemon_running(), ours=_command(lc, None))
    return lc.emit([rec])


@app.command("remove")
@with_context("cron remove")
def remove(
    lc: Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would change.")] = False,
) -> int:
    """Remove only the line(s) tagged `# labctl:sweep`; every other byte stays."""
    from labctl.cron.core import remove as do_remove

    return lc.emit([do_remove(_place(lc), dry_run=dry_run, ours=_command(lc, None))])


@app.command("mark-run")
@with_context("cron mark-run")
def mark_run(
    lc: Context,
    exit_code: Annotated[int, typer.Option("--exit-code", help="The sweep's exit code.")],
    started_at: Annotated[
        float | None, typer.Option("--started-at", help="When it started (epoch seconds).")
    ] = None,
) -> int:
    """Record a sweep run in the state dir (scripts/sweep calls this at its end)."""
    import socket

    from labctl.cron.core import mark_run as do_mark

    rec = do_mark(
        lc.state_dir,
        started=started_at,
        ended=lc.clock(),
        exit_code=exit_code,
        host=socket.gethostname(),
    )
    return lc.emit([rec])
