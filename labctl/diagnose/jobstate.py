"""What the scheduler says about a job: the state that beats log text, exit code, log age."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from labctl.verdicts import Verdict as V

DEFAULT_HUNG_AFTER = 3600.0
_RUNNING = frozenset({"RUNNING", "R", "COMPLETING", "CG", "STARTED"})
_FAILED = frozenset({"FAILED", "F", "ERROR", "OUT_OF_MEMORY", "OOM", "BOOT_FAIL", "NODE_FAIL"})
# poll's verdicts, as the scheduler state word they stand for when the record has no state
_VERDICT_WORD: dict[str, str] = {
    V.FAILED: "FAILED",
    V.TIMEOUT: "TIMEOUT",
    V.OUT_OF_MEMORY: "OUT_OF_MEMORY",
    V.NODE_FAIL: "NODE_FAIL",
    V.PREEMPTED: "PREEMPTED",
    V.CANCELLED: "CANCELLED",
    V.COMPLETED: "COMPLETED",
}
# the verdicts that say the job failed: a quiet log never makes them healthy
_FAILED_VERDICTS = frozenset({V.FAILED, V.TIMEOUT, V.OUT_OF_MEMORY, V.NODE_FAIL})


@dataclass(frozen=True)
class JobState:
    """What the scheduler (or the poll record) says about the job. All optional."""

    state: str | None = None
    exit_code: int | None = None
    signal: int | None = None
    reason: str | None = None
    log_age: float | None = None  # seconds since the log last grew
    hung_after: float = DEFAULT_HUNG_AFTER
    verdict: str | None = None  # poll's verdict (failed, timeout, out_of_memory, ...)

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
            verdict=value.get("verdict"),
        )

    @property
    def word(self) -> str | None:
        if self.state:
            return self.state.split()[0].upper().rstrip("+")
        return _VERDICT_WORD.get(self.verdict or "")

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
        """The scheduler's word that the job failed: a failed state, a non-zero exit, or
        poll's verdict failed/timeout/out_of_memory/node_fail (a quiet log never overrules it)."""
        return (
            self.word in _FAILED
            or any(c != 0 for c in self.codes)
            or self.verdict in _FAILED_VERDICTS
        )

    def describe(self) -> str:
        parts = [f"verdict {self.verdict}" if self.verdict else None]
        parts.append(f"state {self.state}" if self.state else None)
        parts.append(f"exit code {self.exit_code}" if self.exit_code is not None else None)
        parts.append(f"signal {self.signal}" if self.signal else None)
        return ", ".join(p for p in parts if p) or "failed"

    def record(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "reason": self.reason,
            "log_age": self.log_age,
            "hung_after": self.hung_after,
            "verdict": self.verdict,
        }
