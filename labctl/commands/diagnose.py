"""`labctl diagnose`: name the root cause of a failed job from its log, fast.

Inputs: log files, directories (their *.log/*.out/*.err/*.txt, .gz too), globs, `-` for
log text on stdin — one `diagnosis` record each — or, with no paths, job records on stdin
(from `labctl poll`): every record whose verdict is a failure (or every job with `--all`)
gets a `diagnosis` field, read from the job's stderr/stdout on its cluster through the
same transport poll uses; all other records pass through untouched. Logs are read from
the end (a window, widened only when inconclusive; `--full` scans everything), streamed,
in bounded memory. `--group` adds one `diagnosis_group` record per failure fingerprint.
Every diagnosis says `why` its root cause won (or why the log is healthy/unknown) and lists
its `candidates` -- every failure-looking line, in log order, with its fate: `won`, or
`demoted` with the reason (survived: progress after it; logged at WARNING/INFO level; later
success; a later independent failure; explained by another entry; wrapper of the root cause;
the scheduler's state or the last end report decides). `--why` shows them in the table view
(after each diagnosis; or after the jobs table for job records). `--explain ID` shows one
catalog entry (an ID, never a log: a log's candidates are `--why LOG`).
"""

from __future__ import annotations

import glob as globlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from labctl.commands.diagnose_schema import SCHEMAS
from labctl.context import Context
from labctl.errors import UsageError
from labctl.verdicts import NEEDS_DIAGNOSIS

if TYPE_CHECKING:
    from labctl.diagnose.catalog import Catalog
    from labctl.diagnose.options import DiagnoseOptions

__all__ = ["SCHEMAS", "cli"]
EXAMPLES = [
    "labctl poll | labctl diagnose | labctl table",
    "labctl diagnose logs/slurm-4812.out",
    "labctl diagnose --group runs/*/stderr.log",
    "labctl diagnose --catalog --format table",
    "labctl diagnose --why logs/slurm-4812.out",
    "labctl diagnose --explain cuda_oom",
]
LOG_SUFFIXES = (".log", ".out", ".err", ".txt", ".gz")


def expand_paths(paths: Iterable[str]) -> Iterator[Path]:
    """Files as named; directories searched for log files; globs expanded (sorted)."""
    for given in paths:
        matches = sorted(globlib.glob(given, recursive=True)) if globlib.has_magic(given) else []
        for item in matches or [given]:
            path = Path(item)
            if path.is_dir():
                yield from sorted(
                    p
                    for p in path.rglob("*")
                    if p.is_file()
                    and p.name.endswith(LOG_SUFFIXES)
                    and not any(part.startswith(".") for part in p.relative_to(path).parts)
                )
            else:
                yield path


def _options(lc: Context, window: int, full: bool) -> DiagnoseOptions:
    from labctl.diagnose.load import configured_catalog
    from labctl.diagnose.options import DiagnoseOptions

    catalog = configured_catalog(lc.config.section("catalog"))
    return DiagnoseOptions(catalog=catalog, redactor=lc.redactor, window=window, full=full)


def diagnose_files(
    lc: Context, paths: list[str], opts: DiagnoseOptions
) -> Iterator[dict[str, Any]]:
    from labctl.confine import checked
    from labctl.diagnose import LogUnreadable, diagnose_chunks, diagnose_path

    for path in checked(lc, expand_paths(checked(lc, paths))):
        if str(path) == "-":
            yield diagnose_chunks(
                iter(lambda: lc.stdin.read(1 << 20), b""),
                source="-",
                catalog=opts.catalog,
                redactor=opts.redactor,
            )
            continue
        try:
            yield diagnose_path(
                path,
                window=opts.window,
                full=opts.full,
                catalog=opts.catalog,
                redactor=opts.redactor,
                now=lc.clock(),
            )
        except LogUnreadable as exc:
            yield exc.record() | {"path": str(path)}


def _check_modes(
    paths: list[str], *, catalog: bool, explain: str | None, why: bool, grouped: bool
) -> None:
    """--catalog and --explain ID read the catalog, never a log; --why explains diagnoses."""
    lookup = "--catalog" if catalog else "--explain" if explain else None
    if lookup and paths:
        raise UsageError(
            f"{lookup} shows the catalog and reads no log; to see why each candidate of a log "
            "won or was demoted, use --why LOG..."
        )
    if lookup and why:
        raise UsageError(f"--why explains the diagnoses of logs; {lookup} shows catalog entries")
    if why and grouped:
        raise UsageError(
            "--why explains each diagnosis and --group replaces them with one record per "
            "fingerprint: use one or the other"
        )


def _explain(ident: str, cat: Catalog) -> dict[str, Any]:
    """The catalog entry ID names; an ID shaped like a log path gets a pointer to --why."""
    from labctl import diagnose

    if ident not in cat.by_id and ("/" in ident or ident.endswith(LOG_SUFFIXES)):
        raise UsageError(
            f"no catalog entry {ident!r}: --explain takes an entry ID; to see why each "
            f"candidate of a log won or was demoted, use --why {ident}"
        )
    return diagnose.explain(ident, cat)


def run(
    lc: Context,
    paths: list[str],
    *,
    input: Path | None,
    all_jobs: bool,
    window: int,
    full: bool,
    grouped: bool,
) -> Iterator[dict[str, Any]]:
    from labctl.diagnose import group
    from labctl.diagnose.jobs import diagnose_job

    opts = _options(lc, window, full)
    seen: list[dict[str, Any]] = []
    if paths:
        for rec in diagnose_files(lc, paths, opts):
            if grouped:
                seen.append(rec)
                if rec.get("kind") == "error":
                    yield rec
            else:
                yield rec
    else:
        from labctl.stream import read_records

        for rec in read_records(lc, input):
            if rec.get("kind") == "job" and (all_jobs or rec.get("verdict") in NEEDS_DIAGNOSIS):
                rec, errors = diagnose_job(lc, rec, opts)
                yield from errors
            if grouped and isinstance(rec.get("diagnosis"), dict):
                seen.append(rec)
            yield rec
    if grouped:
        yield from group(seen)


def cli(
    lc: Context,
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Log files, directories, globs or - (default: job records on stdin)."),
    ] = None,
    input: Annotated[
        Path | None, typer.Option("--input", "-i", help="Read job records from FILE.")
    ] = None,
    all_jobs: Annotated[
        bool, typer.Option("--all", help="Diagnose every job record, not only failures.")
    ] = False,
    window: Annotated[
        int, typer.Option("--window", metavar="BYTES", help="Bytes read from a log's end first.")
    ] = 4 << 20,
    full: Annotated[bool, typer.Option("--full", help="Scan whole logs.")] = False,
    grouped: Annotated[
        bool, typer.Option("--group", help="Add one record per failure fingerprint.")
    ] = False,
    catalog: Annotated[
        bool, typer.Option("--catalog", help="List the failure catalog and exit.")
    ] = False,
    explain: Annotated[
        str | None,
        typer.Option(
            "--explain",
            metavar="ID",
            help="Show one catalog entry (an entry ID; a log's candidates are --why LOG).",
        ),
    ] = None,
    why: Annotated[
        bool,
        typer.Option(
            "--why",
            help="Table view: after each diagnosis, every candidate line and why it won or "
            "was demoted (the records' `candidates`).",
        ),
    ] = False,
) -> int:
    """Name the root cause of failed jobs from their logs (bounded reads, stable fingerprints).

    Each diagnosis lists its candidates: every failure-looking line and its fate -- won (the
    root cause), or demoted: survived (progress after it), logged at WARNING/INFO level, a
    wrapper of the root cause, explained by another failure, a later success, the scheduler's
    state or the last end report decides. --why shows them in the table view. --explain ID
    shows one catalog entry (an entry ID, never a log), --catalog all of them.
    """
    if window < 4096:
        raise UsageError("--window must be at least 4096 bytes")
    _check_modes(paths or [], catalog=catalog, explain=explain, why=why, grouped=grouped)
    if catalog or explain:
        from labctl import diagnose

        cat = _options(lc, window, full).catalog
        recs = [_explain(explain, cat)] if explain else diagnose.catalog_records(cat)
        return lc.emit(recs)
    if why:
        from dataclasses import replace

        lc = replace(lc, detail=True)
    return lc.emit(
        run(
            lc,
            paths or [],
            input=input,
            all_jobs=all_jobs,
            window=window,
            full=full,
            grouped=grouped,
        )
    )
