"""Parsed SLURM records with the verdict poll gives them (`labctl.poll.verdict.decide`):
the parsers report facts, so tests that check a scenario's verdict ask the one function."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from labctl.poll.verdict import judge


def with_verdicts(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [judge(r) for r in records]


def slurm_verdict(
    state: str | None,
    *,
    exit_code: int | None = None,
    signal: int | None = None,
    reason: str | None = None,
    cancelled_by: int | None = None,
    owner_uid: int | None = None,
    batch_state: str | None = None,
    markers: Iterable[str] = (),
) -> tuple[str, str | None]:
    """(verdict, cause) of a SLURM job given as keywords, through `decide`."""
    j = judge(
        {
            "state": state,
            "exit_code": exit_code,
            "signal": signal,
            "reason": reason,
            "cancelled_by": cancelled_by,
            "uid": owner_uid,
            "steps": [] if batch_state is None else [{"step": "batch", "state": batch_state}],
            "log_markers": sorted(markers),
        }
    )
    return j["verdict"], j["cause"]
