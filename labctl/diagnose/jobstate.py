"""What the scheduler says about a job: the state that beats log text, exit code, log age."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_HUNG_AFTER = 3600.0
_RUNNING = frozenset({"RUNNING", "R", "COMPLETING", "CG", "STARTED"})
_FAILED = frozenset({"FAILED", "F", "ERROR", "OUT_OF_MEMORY", "OOM", "BOOT_FAIL", "NODE_FAIL"})


@dataclass(frozen=True)
class JobState:
    """What the scheduler (or the poll record) says about the job. All optional."""

    state: str | None = None
    exit_code: int | None = None
    signal: int | None = None
    reason: str | None = None
    log_age: float | None = None  # seconds since the log last grew
    hung_after: float = DEFAULT_HUNG_AFTER

    @classmethod
    def coerce(cls, value: JobState | Mapping[str, Any] | None) -> JobState | None:
        """Accepts a JobState or a mapping (`exit_code` may be sacct's `"0:9"`)."""
        if value is None or isinstance(value, JobState):
            return value
        code, sig = value.get("exit_code"), value.get("signal")
        if isinstance(code, str):
            left, _, right = code.partition(":")
            code = int(left) if left.lstrip("-").isdigit() else None
            if right.isdigit() and int(right) and sig is None:
                sig = int(right)
        age = value.get("log_age")
        return cls(
            state=value.get("state"),
            exit_code=code,
            signal=sig,
            reason=value.get("reason"),
            log_age=float(age) if age is not None else None,
            hung_after=float(value.get("hung_after") or DEFAULT_HUNG_AFTER),
        )

    @property
    def word(self) -> str | None:
        return self.state.split()[0].upper().rstrip("+") if self.state else None

    @property
    def running(self) -> bool:
        return self.word in _RUNNING

    @property
    def codes(self) -> list[int]:
        out = []
        if self.exit_code is not None:
            out.append(self.exit_code)
        if self.signal:
            out.append(-self.signal)
        return out

    @property
    def failed(self) -> bool:
        return self.word in _FAILED or any(c != 0 for c in self.codes)

    def record(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "reason": self.reason,
            "log_age": self.log_age,
            "hung_after": self.hung_after,
        }
