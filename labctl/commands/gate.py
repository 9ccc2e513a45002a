"""`labctl gate NAME`: pass/fail per model from evaluation results, in bounded memory.

A results gate (`[[gates]]` in the config) reads only the columns it needs from its
table — each score extracted from the JSON `stats` on the server, never the whole blob —
with every filter on the server (finished status, the configured user's rows, the
required benchmarks, `--model`, the gate's `where`; the `partial` flag is read and judged
here, see labctl.gate.query), from PostgreSQL (a named cursor; DATABASE_URL or PG*),
Supabase (supabase-py, keyset pages of ≤ 1000 rows; SUPABASE_URL/SUPABASE_KEY) or JSON
Lines rows on stdin (`--source -`). One `verdict` per model × benchmark and one `gate`
per model; a missing, null or non-numeric score never passes. Nothing is written unless
`--register` is given; then ownership and foreign keys are checked first (PostgreSQL).

A streak gate (`kind = "streak"`, or `--streak N`) reads job records on stdin (`labctl
poll`, or `poll | diagnose`) and counts consecutive clean cycles since the last
operational failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from labctl.context import Context
from labctl.gate.schema import SCHEMAS

__all__ = ["EXAMPLES", "SCHEMAS", "cli"]

EXAMPLES = [
    "labctl gate release                      # every model of yours, from the gate's source",
    "labctl gate release --model qwen7b-sft-v3 --source supabase",
    "labctl gate release --register --dry-run # the statements --register would run",
    "labctl gate release --source - < results.jsonl",
    'labctl poll | labctl diagnose | labctl gate lifecycle   # a kind = "streak" gate',
    "cat sweeps/*.jsonl | labctl gate --streak 3 --cycle 'matrix-c(\\d+)-'",
]


def cli(
    lc: Context,
    name: Annotated[
        str | None, typer.Argument(help="The gate (a [[gates]] name); optional with --streak.")
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            help="Only this model (repeat); named models with no result fail as missing.",
        ),
    ] = None,
    source: Annotated[
        Literal["supabase", "postgres", "-"] | None,
        typer.Option("--source", "-s", help="Where rows come from (default: the gate's source)."),
    ] = None,
    register: Annotated[
        bool, typer.Option("--register", help="Write each model's outcome to the register table.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="With --register: check and show, write nothing.")
    ] = False,
    streak: Annotated[
        int | None,
        typer.Option("--streak", metavar="N", min=1, help="Streak gate: N clean cycles needed."),
    ] = None,
    cycle: Annotated[
        str | None,
        typer.Option(
            "--cycle",
            metavar="REGEX",
            help="Streak: job-name regex whose first group "
            "is the cycle (default: cycle[-_]?(\\d+)), or tag:FIELD (a record field).",
        ),
    ] = None,
    input: Annotated[
        Path | None, typer.Option("--input", "-i", help="Read rows or records from FILE.")
    ] = None,
) -> int:
    """Pass/fail per model from evaluation results (bounded memory), or a lifecycle streak.

    A results gate filters on the server: finished status, the configured user's rows,
    the required benchmarks, --model and the gate's `where`. Its `partial` flag is the
    exception: it is read as a column and labctl sets partial runs aside itself, so a
    benchmark whose only runs are partial fails as partial_run rather than missing.
    """
    from labctl.gate.run import run_gate

    return lc.emit(
        run_gate(
            lc,
            name,
            models=model or [],
            source=source,
            register=register,
            dry_run=dry_run,
            streak=streak,
            cycle=cycle,
            input_path=input,
        )
    )
