"""The lifecycle streak: consecutive clean cycles since the last operational failure.

Input: job records (from `labctl poll`, or `poll | diagnose`, or saved sweeps — the last
record of a job wins), grouped into cycles by the gate's key (a capture group of a name
pattern, or a record field). A cycle is `failed` when one of its jobs ended in an
operational failure, `clean` when every job ended clean (a `clean_verdicts` verdict, or a
valid research rejection: a configured diagnosis category or exit code), and
`in_progress` otherwise (it neither counts nor breaks the streak). Cycles are ordered by
their first submit time, then by their key. The streak counts clean cycles back from the
newest until a failed one; the gate passes when it reaches `required`.

Every failure is listed with its fingerprint and root cause when a diagnosis is in the
stream (a job's `diagnosis` field from `labctl diagnose`, or a `diagnosis` record naming
the same cluster and job id). Records that belong to no cycle pass through unchanged.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from labctl.gate.spec import StreakGate
from labctl.records import parse_rfc3339, rfc3339
from labctl.verdicts import TERMINAL as TERMINAL_VERDICTS
from labctl.verdicts import Verdict

Record = dict[str, Any]
# a job that vanished (`unknown`) ended too: it counts as an operational failure
TERMINAL = TERMINAL_VERDICTS | {Verdict.UNKNOWN}
_DIAG_FIELDS = ("category", "fingerprint", "title", "fix", "retryable", "catalog_id")


def dig(rec: Record, path: str) -> Any:
    value: Any = rec
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _natural(text: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


@dataclass
class Cycle:
    name: str
    jobs: dict[str, Record] = field(default_factory=dict)

    @property
    def first(self) -> float:
        times = [
            parse_rfc3339(j.get("submit_time") or j.get("start_time")) for j in self.jobs.values()
        ]
        known = [t for t in times if t is not None]
        return min(known) if known else math.inf


class Streak:
    def __init__(self, gate: StreakGate) -> None:
        self.gate = gate
        self.cycles: dict[str, Cycle] = {}
        self.diagnoses: dict[tuple[str, str], Record] = {}

    def cycle_of(self, rec: Record) -> str | None:
        if self.gate.cycle_tag:
            value = dig(rec, self.gate.cycle_tag)
            return None if value is None or value == "" else str(value)
        name = rec.get("name")
        pattern = self.gate.cycle_pattern
        if not isinstance(name, str) or pattern is None:
            return None
        m = pattern.search(name)
        return m.group(1) if m and m.group(1) is not None else None

    def take(self, rec: Record) -> bool:
        """Keep a record that belongs to the streak; False: pass it through."""
        kind = rec.get("kind")
        if kind == "diagnosis" and rec.get("job_id") is not None:
            self.diagnoses[(str(rec.get("cluster")), str(rec["job_id"]))] = rec
            return True
        if kind != "job":
            return False
        cycle = self.cycle_of(rec)
        if cycle is None:
            return False
        ident = str(rec.get("key") or f"{rec.get('cluster')}:{rec.get('job_id')}")
        self.cycles.setdefault(cycle, Cycle(cycle)).jobs[ident] = rec
        return True

    def found(self, job: Record) -> list[dict[str, Any]]:
        """The job's diagnoses: its own `diagnosis` field, then a `diagnosis` record for it."""
        mine = job.get("diagnosis")
        other = self.diagnoses.get((str(job.get("cluster")), str(job.get("job_id"))))
        return [d for d in (mine, other) if isinstance(d, dict)]

    def diagnosis(self, job: Record) -> dict[str, Any]:
        return next(iter(self.found(job)), {})

    def judge(self, job: Record) -> str:
        """clean, research_rejection, failure or running."""
        verdict = job.get("verdict")
        if verdict in self.gate.clean_verdicts:
            return "clean"
        if verdict not in TERMINAL:
            return "running"
        if job.get("exit_code") in self.gate.research_exit_codes:
            return "research_rejection"
        if any(d.get("category") in self.gate.research_categories for d in self.found(job)):
            return "research_rejection"
        return "failure"

    def failure(self, cycle: str, job: Record) -> Record:
        diag = self.diagnosis(job)
        out = {
            "cycle": cycle,
            "cluster": job.get("cluster"),
            "job_id": job.get("job_id"),
            "name": job.get("name"),
            "verdict": job.get("verdict"),
            "exit_code": job.get("exit_code"),
        }
        out.update({k: diag.get(k) for k in _DIAG_FIELDS})
        out["root_cause"] = diag.get("title") or diag.get("category")
        return out

    def cycle_record(self, cycle: Cycle) -> Record:
        judged = [(self.judge(j), j) for j in cycle.jobs.values()]
        counts = {
            k: sum(1 for v, _ in judged if v == k)
            for k in ("clean", "research_rejection", "failure", "running")
        }
        state = "failed" if counts["failure"] else "in_progress" if counts["running"] else "clean"
        first = cycle.first
        return {
            "kind": "cycle",
            "gate": self.gate.name,
            "cycle": cycle.name,
            "state": state,
            "jobs": len(judged),
            "clean_jobs": counts["clean"],
            "research_rejections": counts["research_rejection"],
            "running_jobs": counts["running"],
            "first_submit": None if math.isinf(first) else rfc3339(first),
            "failures": [self.failure(cycle.name, j) for v, j in judged if v == "failure"],
        }

    def results(self) -> Iterator[Record]:
        ordered = sorted(self.cycles.values(), key=lambda c: (c.first, _natural(c.name)))
        records = [self.cycle_record(c) for c in ordered]
        yield from records
        streak, last_failure = 0, None
        for rec in reversed(records):
            if rec["state"] == "failed":
                last_failure = rec["cycle"]
                break
            streak += rec["state"] == "clean"
        failures = [f for rec in records for f in rec["failures"]]
        required = self.gate.required
        yield {
            "kind": "streak",
            "gate": self.gate.name,
            "required": required,
            "streak": streak,
            "passed": streak >= required,
            "cycles": len(records),
            "clean_cycles": sum(r["state"] == "clean" for r in records),
            "failed_cycles": sum(r["state"] == "failed" for r in records),
            "in_progress_cycles": sum(r["state"] == "in_progress" for r in records),
            "last_failure_cycle": last_failure,
            "failures": failures,
            "message": _message(streak, required, last_failure, len(records)),
        }
        matched = {
            (str(j.get("cluster")), str(j.get("job_id"))) for c in ordered for j in c.jobs.values()
        }
        yield from (d for k, d in self.diagnoses.items() if k not in matched)


def _message(streak: int, required: int, last_failure: str | None, cycles: int) -> str:
    if cycles == 0:
        return "no job of any cycle in the input (check the gate's cycle_pattern or cycle_tag)"
    since = f" since the failure in cycle {last_failure}" if last_failure else ""
    verdict = "trusted" if streak >= required else f"{required - streak} more needed"
    return f"{streak} consecutive clean cycle(s){since}; {required} required: {verdict}"


def run_streak(gate: StreakGate, records: Iterable[Record]) -> Iterator[Record]:
    """Pass through what belongs to no cycle; then the cycles and the streak."""
    streak = Streak(gate)
    for rec in records:
        if rec.get("kind") == "error" or not streak.take(rec):
            yield rec
    yield from streak.results()
