"""Rows in, `verdict` and `gate` records out: the pure heart of a results gate.

Rows are consumed as a stream: per model × benchmark only the run that counts is kept
(`latest`: the newest finished, non-partial run by time then id) or the newest N
(`mean_last_n`), so memory grows with models × benchmarks, never with rows. Nothing is
emitted until the last row is read, so a source that fails half-way yields no verdict.

Rules: a missing, null, non-numeric (or NaN/∞) score is never a pass; ties pass
(`score >= threshold` when higher is better, `<=` when lower is); a benchmark whose only
runs are partial fails with `partial_run`; several runs never combine by max.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from labctl.gate.query import Query
from labctl.gate.spec import Requirement, ResultsGate
from labctl.records import parse_rfc3339

Record = dict[str, Any]


def _when(value: Any) -> float:
    """A run's time as a sortable number (unknown: oldest)."""
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        parsed = parse_rfc3339(value)
        if parsed is not None:
            return parsed
    return -math.inf


def _id_key(value: Any) -> tuple[int, Any]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, value)
    return (1, str(value))


def truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"true", "t", "1", "yes"}
    return bool(value)


def as_score(raw: Any) -> tuple[float | None, str | None]:
    """(score, problem): problem is null_score or non_numeric."""
    if raw is None:
        return None, "null_score"
    if isinstance(raw, bool):
        return None, "non_numeric"
    if isinstance(raw, int | float):
        value = float(raw)
    elif isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            return None, "non_numeric"
    else:
        return None, "non_numeric"
    return (value, None) if math.isfinite(value) else (None, "non_numeric")


@dataclass
class Slot:
    """The runs of one model × benchmark that can still count."""

    keep: int
    runs: list[tuple[float, tuple[int, Any], int, tuple[Any, Any]]] = field(
        default_factory=list
    )  # a min-heap of (time, id, arrival, (id, raw score)): the oldest on top
    partial: int = 0
    seen: int = 0

    def add(self, when: float, run_id: Any, raw: Any) -> None:
        self.seen += 1
        item = (when, _id_key(run_id), self.seen, (run_id, raw))
        if len(self.runs) < self.keep:
            heapq.heappush(self.runs, item)
        elif item[:3] > self.runs[0][:3]:
            heapq.heapreplace(self.runs, item)

    def newest_first(self) -> list[tuple[Any, Any]]:
        return [item[3] for item in sorted(self.runs, key=lambda i: i[:3], reverse=True)]


class Tally:
    """Consumes rows; remembers per model × benchmark only what can still count."""

    def __init__(self, gate: ResultsGate, query: Query) -> None:
        self.gate, self.query = gate, query
        self.slots: dict[tuple[str, str], Slot] = {}
        self.models: set[str] = set()
        self.rows = 0

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        q = self.query
        model = row.get(self.gate.model_column)
        bench = row.get(self.gate.benchmark_column)
        if model is None or bench not in q.metric_out:
            return
        model = str(model)
        self.models.add(model)
        slot = self.slots.setdefault((model, bench), Slot(self.gate.last_n))
        if q.partial_out is not None and truthy(row.get(q.partial_out)):
            slot.partial += 1
            return
        when = _when(row.get(q.time_out)) if q.time_out else -math.inf
        slot.add(when, row.get(q.key), row.get(q.metric_out[bench]))


def verdict(gate: ResultsGate, req: Requirement, model: str, slot: Slot | None) -> Record:
    rec: Record = {
        "kind": "verdict",
        "gate": gate.name,
        "model": model,
        "benchmark": req.benchmark,
        "metric": req.metric.sql_text(),
        "combine": gate.combine,
        "run_ids": [],
        "score": None,
        "threshold": req.threshold,
        "direction": req.direction,
        "passed": False,
    }
    runs = slot.newest_first() if slot else []
    if not runs:
        partial = slot is not None and slot.partial > 0
        rec["reason"] = "partial_run" if partial else "missing"
        rec["message"] = (
            f"only partial runs of {req.benchmark} ({slot.partial if slot else 0})"
            if partial
            else f"no finished run of {req.benchmark}"
        )
        return rec
    rec["run_ids"] = [run_id for run_id, _ in runs]
    scores = []
    for run_id, raw in runs:
        score, problem = as_score(raw)
        if problem is not None:
            rec["reason"] = problem
            rec["message"] = f"run {run_id}: score is {'null' if raw is None else repr(raw)}"
            return rec
        scores.append(score)
    score = sum(s for s in scores if s is not None) / len(scores)
    rec["score"] = score
    if score == req.threshold:
        rec["reason"], rec["passed"] = "at_threshold", True
    else:
        rec["reason"] = "above" if score > req.threshold else "below"
        rec["passed"] = (rec["reason"] == "above") == (req.direction == "higher")
    return rec


def evaluate(
    gate: ResultsGate, query: Query, rows: Iterable[dict[str, Any]], models: Sequence[str] = ()
) -> Iterator[Record]:
    """Every row first, then one `verdict` per model × benchmark and one `gate` per model."""
    tally = Tally(gate, query)
    for row in rows:
        tally.add(row)
    yield from finish(tally, models)


def finish(tally: Tally, models: Sequence[str] = ()) -> Iterator[Record]:
    """The records of a tally whose rows are all in."""
    gate = tally.gate
    names = sorted(tally.models | set(models))
    if not names:
        yield {
            "kind": "error",
            "reason": "no_results",
            "gate": gate.name,
            "message": f"gate {gate.name}: no finished run of user {gate.user!r} in "
            f"{gate.table} for {', '.join(r.benchmark for r in gate.requirements)}",
        }
        return
    for model in names:
        verdicts = [
            verdict(gate, r, model, tally.slots.get((model, r.benchmark)))
            for r in gate.requirements
        ]
        yield from verdicts
        failed = [v["benchmark"] for v in verdicts if not v["passed"]]
        yield {
            "kind": "gate",
            "gate": gate.name,
            "model": model,
            "passed": not failed,
            "benchmarks": len(verdicts),
            "failed": failed,
            "reasons": {v["benchmark"]: v["reason"] for v in verdicts},
            "user": gate.user,
            "rows_read": tally.rows,
        }
