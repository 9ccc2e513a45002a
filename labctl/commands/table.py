"""`labctl table`: render any records from stdin as box-drawing tables.

One table per record `kind`, columns from the fields present; kinds with a dedicated view
(jobs) get it. `--format jsonl` turns the command into a validating pass-through:
malformed lines become `error` records and everything else passes through unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from labctl.context import Context
from labctl.schemas import COMMON
from labctl.stream import read_records

SCHEMAS = {
    **COMMON,
    "*": {
        "description": "Any record read on stdin is passed through unchanged.",
        "type": "object",
    },
}
EXAMPLES = [
    "labctl poll | labctl diagnose | labctl table",
    "labctl table --input sweep.jsonl --format table > status.txt",
]


def cli(
    lc: Context,
    input: Annotated[
        Path | None,
        typer.Option("--input", "-i", help="Read records from FILE instead of stdin."),
    ] = None,
) -> int:
    """Render records from stdin as box-drawing tables (┌─┬─┐), one per record kind."""
    if lc.config.resolved["output.format"].source == "default":
        # `labctl table` means a table, even when piped (for a chat message or a file)
        from dataclasses import replace

        lc = replace(lc, fmt="table")
    return lc.emit(read_records(lc, input))
