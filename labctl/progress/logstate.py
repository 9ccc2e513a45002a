"""The data that crosses a poll: scan configuration, stored state, scan result, read plan.

Everything here is JSON-friendly (`to_dict`/`from_dict`); non-finite floats become the
strings "nan", "inf" and "-inf" because strict JSON has no NaN.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from typing import Any

from labctl.progress.markers import Marker

MiB = 1 << 20
KiB = 1 << 10


@lru_cache(maxsize=64)
def _compile(pattern: str) -> re.Pattern[bytes]:
    try:
        rx = re.compile(pattern.encode())
    except re.error as exc:
        raise ValueError(f"progress regex does not compile: {exc}") from exc
    if "step" not in rx.groupindex:
        raise ValueError("progress regex needs a named group (?P<step>...)")
    return rx


@dataclass(frozen=True)
class ScanConfig:
    max_read: int = 4 * MiB  # most bytes read per poll; when more is new, the newest are read
    first_tail: int = 256 * KiB  # first sight (or after truncation): only this tail
    carry_cap: int = 64 * KiB  # longest unterminated line kept for the next chunk
    progress_regex: str | None = None  # e.g. r"iter (?P<step>\d+)/(?P<total>\d+)"
    regex_counter: str = "step"
    max_markers: int = 16

    def __post_init__(self) -> None:
        if self.progress_regex is not None:
            _compile(self.progress_regex)
        if min(self.max_read, self.first_tail, self.carry_cap) <= 0:
            raise ValueError("read sizes must be positive")

    @property
    def regex(self) -> re.Pattern[bytes] | None:
        return _compile(self.progress_regex) if self.progress_regex else None


DEFAULT_CONFIG = ScanConfig()


@dataclass
class ScanState:
    """What one poll hands the next (JSON via to_dict/from_dict)."""

    offset: int = 0  # file offset just past the bytes consumed
    size: int = 0
    carry: str = ""  # unterminated last line, latin-1 so any bytes round-trip through JSON
    midline: bool = False  # the next bytes start inside a line whose head we never saw
    slot: str | None = None  # counter format in use (see PRIORITY)
    counter: str | None = None
    value: float | None = None
    total: float | None = None
    bar: str | None = None  # identity of the training tqdm bar
    bar_rank: list[float] = field(default_factory=list)
    phase: str | None = None
    finished: bool = False
    finished_value: float | None = None
    slots: list[str] = field(default_factory=list)  # formats seen so far
    metrics: dict[str, float] = field(default_factory=dict)
    metrics_raw: dict[str, float] = field(default_factory=dict)
    resets: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {k: _jsonable(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScanState:
        names = {f.name for f in fields(cls)}
        state = cls(**{k: v for k, v in data.items() if k in names})
        state.metrics = {k: float(v) for k, v in state.metrics.items()}
        state.metrics_raw = {k: float(v) for k, v in state.metrics_raw.items()}
        return state


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # "nan", "inf", "-inf": strict JSON has no NaN
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


@dataclass
class ScanResult:
    counter: str | None  # step | epoch_step | epoch | <custom>
    value: float | None
    total: float | None
    # log:tqdm | log:lightning | log:levanter | log:verl | log:hf_dict | log:regex
    source: str | None
    counter_key: str | None  # changes when the counter changes identity (another bar, format)
    phase: str | None  # train | eval | checkpoint | startup | finished
    finished: bool
    seen: bool  # the counter was read from this chunk (not carried over)
    metrics: dict[str, float]  # short names: loss, lr, grad_norm, entropy, kl, is_log_ratio, ...
    metrics_raw: dict[str, float]
    markers: list[Marker]
    offset: int
    size: int
    bytes_read: int
    skipped_bytes: int
    reset: bool
    state: ScanState

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "state"}
        out["markers"] = [m.to_dict() for m in self.markers]
        return {k: _jsonable(v) for k, v in out.items()}


@dataclass(frozen=True)
class ReadPlan:
    start: int
    length: int
    reset: bool  # the file shrank: truncated or rewritten by a requeue
    skipped: int  # new bytes not read because of the cap (the oldest of them)

    def shell(self, path: str) -> str:
        """A POSIX command printing exactly these bytes (for a remote read)."""
        return f"tail -c +{self.start + 1} -- {shlex.quote(path)} | head -c {self.length}"


def plan_read(state: ScanState | None, size: int, config: ScanConfig = DEFAULT_CONFIG) -> ReadPlan:
    if state is None or size < state.offset:
        start = max(0, size - config.first_tail)
        return ReadPlan(start, size - start, state is not None, 0)
    new = size - state.offset
    if new > config.max_read:
        return ReadPlan(size - config.max_read, config.max_read, False, new - config.max_read)
    return ReadPlan(state.offset, new, False, 0)
