"""`labctl supervise [options] -- COMMAND ARGS...`: run an experiment, fix known failures,
re-run, and escalate instead of looping.

The command runs as a child in its own session and process group. Its output (stdout and
stderr, in order) goes redacted to a per-attempt log under the state dir and, on a
terminal, to stderr. No output for --stall-after: the group gets SIGTERM, then SIGKILL
after the grace, and the attempt is diagnosed `hung`. Each failed attempt is diagnosed
with diagnose's engine; the catalog's machine action is carried out on the next attempt's
argv/env (halve the batch size in any spelling, add gradient clipping, set or clear an env
variable, lower the step limit after a hang, pip-install a missing module only with
[supervise] allow_install = true, a plain re-run only for retryable failures). An attempt
identical to an earlier one is never started except that one plain re-run. An unknown
failure, a fix that can change nothing more, the same failure after a re-run or the
budget spent (--max-retries) escalate: files under <state_dir>/escalations (and a copy in
--escalate-to), the notify command, exit 1. SIGTERM/SIGINT are forwarded to the child's
group (exit 130). Events are JSON Lines on stdout, or appended to --events FILE.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Annotated, Any

import typer

from labctl.commands.supervise_schema import SCHEMAS
from labctl.context import Context
from labctl.errors import ExitCode, UsageError, exit_code_for_reason

__all__ = ["CONTEXT_SETTINGS", "SCHEMAS", "cli"]
EXAMPLES = [
    "labctl supervise -- python train.py --per_device_train_batch_size 64",
    "labctl supervise --max-retries 5 --stall-after 20m -- torchrun --nproc_per_node 8 "
    "train.py data.train_batch_size=32",
    "labctl supervise --events runs.jsonl --escalate-to ~/inbox -- python eval.py",
]
# options stop at the command: `labctl supervise python train.py --batch-size 8` works too
CONTEXT_SETTINGS = {"allow_interspersed_args": False}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_FAMILY_SETTINGS = ("batch_size", "scope", "grad_clip", "num_workers")


def _positive_duration(text: str, option: str) -> float:
    """`--stall-after 30m`: seconds (> 0), or a usage error naming the option."""
    from labctl.records import duration_seconds

    try:
        value = duration_seconds(text)
    except ValueError:
        raise UsageError(f"{option} {text!r}: use a number with s, m, h or d (e.g. 30m)") from None
    if value <= 0:
        raise UsageError(f"{option} {text!r} must be more than 0 seconds")
    return value


def _outcome(rec: dict[str, Any]) -> ExitCode:
    """The exit code: how the run ended (a failed attempt it recovered from is not one)."""
    kind = rec.get("kind")
    if kind == "escalated":
        return ExitCode.ATTENTION
    if kind == "interrupted":
        return ExitCode.INTERRUPTED
    if kind == "error":
        return exit_code_for_reason(rec.get("reason"))
    return ExitCode.OK


def _families(lc: Context, catalog: Any) -> dict[str, frozenset[str]]:
    from labctl.supervise.args import spellings

    fams = {name: list(names) for name, names in catalog.arg_families.items()}
    for fam in _FAMILY_SETTINGS:
        fams.setdefault(fam, []).extend(lc.config.get(f"supervise.{fam}_args"))
    return {name: spellings(names) for name, names in fams.items()}


def build_options(lc: Context, command: list[str], flags: dict[str, Any]) -> Any:
    from labctl.backends.localrun import find_program
    from labctl.diagnose.load import configured_catalog
    from labctl.supervise.args import command_name
    from labctl.supervise.options import Options

    cfg = lc.config
    retries = (
        flags["max_retries"]
        if flags["max_retries"] is not None
        else cfg.get("supervise.max_retries")
    )
    stall = (
        _positive_duration(flags["stall_after"], "--stall-after")
        if flags["stall_after"]
        else cfg.get("supervise.stall_after_s")
    )
    grace = (
        _positive_duration(flags["kill_grace"], "--kill-grace")
        if flags["kill_grace"]
        else cfg.get("supervise.kill_grace_s")
    )
    if retries < 0:
        raise UsageError("--max-retries must be 0 or more")
    if stall <= 0 or not 0 < grace <= 30:
        raise UsageError("the stall threshold must be positive and the kill grace 0-30 seconds")
    if find_program(command, lc.environ, None) is None:
        raise UsageError(f"{command[0]}: command not found (or not executable)")
    name = flags["name"] or command_name(command)
    if not _NAME.match(name):
        raise UsageError(f"--name {name!r}: use letters, digits, '.', '_' or '-'")
    escalate_to = flags["escalate_to"] or cfg.get("supervise.escalate_to") or None
    if escalate_to and lc.confine is not None:  # under `labctl mcp`: it writes there
        lc.confine.check(escalate_to)
    catalog = configured_catalog(cfg.section("catalog"))
    return Options(
        argv=tuple(command),
        name=name,
        cwd=None,
        max_retries=int(retries),
        stall_after=float(stall),
        kill_grace=float(grace),
        allow_install=bool(cfg.get("supervise.allow_install")),
        families=_families(lc, catalog),
        state_dir=lc.state_dir,
        catalog=catalog,
        escalate_to=Path(escalate_to).expanduser() if escalate_to else None,
        notify=cfg.get("supervise.notify") or None,
        keep_s=float(cfg.get("supervise.keep_days")) * 86400,
    )


def _run(lc: Context, opts: Any) -> int:
    from labctl.backends.child import Signals
    from labctl.supervise.loop import supervise
    from labctl.supervise.options import Services

    tee = None
    if not lc.quiet and getattr(lc.stderr, "isatty", lambda: False)():
        tee = getattr(lc.stderr, "buffer", None)
    with Signals() as signals:
        svc = Services(lc.environ, lc.clock, lc.redactor, signals, tee, lc.note)
        return lc.emit(supervise(opts, svc), _outcome, severity_only=True)


def cli(
    lc: Context,
    command: Annotated[list[str], typer.Argument(help="The command to run, after `--`.")],
    max_retries: Annotated[
        int | None,
        typer.Option("--max-retries", help="Re-runs before escalating (default: config, 3)."),
    ] = None,
    stall_after: Annotated[
        str | None,
        typer.Option(
            "--stall-after",
            metavar="DURATION",
            help="No output this long means hung: 90s, 30m, 2h (default: config, 30m).",
        ),
    ] = None,
    kill_grace: Annotated[
        str | None,
        typer.Option("--kill-grace", metavar="DURATION", help="SIGTERM to SIGKILL, at most 30s."),
    ] = None,
    events: Annotated[
        Path | None,
        typer.Option("--events", metavar="FILE", help="Append the events here, not stdout."),
    ] = None,
    escalate_to: Annotated[
        str | None,
        typer.Option("--escalate-to", metavar="DIR", help="Also copy escalation files here."),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Short name of the run (default: the script).")
    ] = None,
) -> int:
    """Run a command, apply the catalog's fix to known failures and re-run; escalate the rest.

    The command runs in its own process group; its output goes, redacted, to a log per
    attempt under the state dir (and to stderr on a terminal). A failed attempt is diagnosed
    with diagnose's catalog and the fix applied to the next attempt: halve the batch size
    in any spelling ([supervise] batch_size_args adds more), add gradient clipping, set or
    clear an environment variable, lower the step limit after a hang (no output for
    --stall-after), pip-install a missing module (only with [supervise] allow_install =
    true); a retryable failure is re-run once as it was. An unknown failure, a fix that can
    change nothing more, the same failure again or the spent budget escalate: a .md and
    .json file under <state dir>/escalations (copied to --escalate-to) and the [supervise]
    notify command. SIGTERM/SIGINT are forwarded to the command's process group.

    A full or read-only state dir never stops the command: what could not be written (an
    attempt log, the registration, the escalation files) is named in a `state_unwritable`
    record, and the events still reach stdout. Each escalation folder is written on its
    own: an --escalate-to copy the disk refuses is a `not_written` record, and the notify
    command gets whichever file was written.

    Exit codes: 0 the command succeeded; 1 escalated; 2 usage error, nothing started;
    3 labctl could not run the command, read its log or write its state; 130 interrupted.
    """
    flags = {
        "max_retries": max_retries,
        "stall_after": stall_after,
        "kill_grace": kill_grace,
        "escalate_to": escalate_to,
        "name": name,
    }
    opts = build_options(lc, list(command), flags)
    if events is None:
        return _run(lc, opts)
    try:
        fh = open(events, "a", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise UsageError(f"--events {events}: {exc.strerror}") from None
    with fh:
        return _run(dataclasses.replace(lc, stdout=fh, fmt="jsonl", stdout_isatty=False), opts)
