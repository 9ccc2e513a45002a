"""Record helpers shared by every command: the `error` record, times, durations.

A record is a plain dict with a `kind`. Times are RFC 3339 strings in UTC with an explicit
offset (`2026-11-30T18:24:39Z`), durations are seconds, sizes are bytes, unknowns are None.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

Record = dict[str, Any]


class Redacted(dict[str, Any]):
    """A record every string of which was redacted where it was made, by the process's default
    redactor (a worker process gets its parent's): the emitter writes it without a second
    look. Only a maker that redacts each of its string fields may build one."""


class Encoded(Redacted):
    """A Redacted record encoded where it was made (a worker process), by the emitter's own
    encoder and exit-code rules (`labctl.emit.encoded`): `line` is its JSON text, `exit_code`
    what the rules give it. It crosses to the emitter as the line, the code and its scalar
    fields (its mapping holds only those: a file's thousand comments are neither pickled
    nor parsed again); `whole()` is the record itself, for a reader that needs every field."""

    __slots__ = ("exit_code", "line")

    def __init__(self, fields: dict[str, Any], line: str, exit_code: int) -> None:
        super().__init__(fields)
        self.line = line
        self.exit_code = exit_code

    def whole(self) -> Redacted:
        import json

        return Redacted(json.loads(self.line))

    def __reduce__(self) -> tuple[Any, ...]:
        return Encoded, (dict(self), self.line, self.exit_code)


def error_record(reason: str, message: str, **fields: Any) -> Record:
    """A problem record: machine-readable `reason` (snake_case) and a human `message`."""
    rec: Record = {"kind": "error", "reason": reason, "message": message}
    rec.update(fields)
    return rec


def rfc3339(epoch: float | None) -> str | None:
    """Epoch seconds -> `YYYY-MM-DDTHH:MM:SSZ` (UTC). None stays None."""
    if epoch is None:
        return None
    return _utc_text(int(epoch))


@functools.lru_cache(maxsize=1 << 16)  # a poll's jobs share their submit/start/end seconds
def _utc_text(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def duration_seconds(text: str) -> float:
    """A duration people type (`90`, `30m`, `6h`, `2d`) in seconds; ValueError otherwise.
    (SLURM's `D-HH:MM:SS` is `labctl.parse.slurm.parse_duration`.)"""
    m = _DURATION.match(text)
    if m is None:
        raise ValueError(f"{text!r} is not a duration: use a number with s, m, h or d (e.g. 6h)")
    return float(m.group(1)) * _UNITS[m.group(2)]
