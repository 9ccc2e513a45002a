"""Record helpers shared by every command: the `error` record, times, durations.

A record is a plain dict with a `kind`. Times are RFC 3339 strings in UTC with an explicit
offset (`2026-11-30T18:24:39Z`), durations are seconds, sizes are bytes, unknowns are None.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

Record = dict[str, Any]


def error_record(reason: str, message: str, **fields: Any) -> Record:
    """A problem record: machine-readable `reason` (snake_case) and a human `message`."""
    rec: Record = {"kind": "error", "reason": reason, "message": message}
    rec.update(fields)
    return rec


def rfc3339(epoch: float | None) -> str | None:
    """Epoch seconds -> `YYYY-MM-DDTHH:MM:SSZ` (UTC). None stays None."""
    if epoch is None:
        return None
    return datetime.fromtimestamp(int(epoch), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str | None) -> float | None:
    """RFC 3339 / ISO 8601 with offset (or `Z`) -> epoch seconds. Naive strings are UTC."""
    if not text:
        return None
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def now_rfc3339(clock: Callable[[], float] = time.time) -> str:
    out = rfc3339(clock())
    assert out is not None
    return out
