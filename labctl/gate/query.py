"""What a results gate asks the database for: the columns it needs and every filter.

One `Query` serves every source: the PostgreSQL adapter renders it as one SELECT for a
named cursor, the Supabase adapter as PostgREST parameters paged by keyset, and rows read
on stdin are filtered by `matches` in Python. Never `*`, never a whole JSON column: each
score is one extracted JSON path (`m0`, `m1`, …).

Every row filter is in the query (finished status, owner, the required benchmarks,
`--model`, the gate's `where`), except one: a gate's `partial` flag is a column the rows
bring back, and the tally sets partial runs aside. Filtering them on the server would make
a benchmark whose only runs are partial look like one never run (`missing`); read, they
are reported as `partial_run`. It costs one small column per row, never the stats blob.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from labctl.gate.metric import Path
from labctl.gate.spec import ResultsGate


@dataclass(frozen=True)
class Column:
    out: str  # the name in a returned row
    path: Path

    def postgrest(self) -> str:
        text = self.path.postgrest()
        return (
            text if not self.path.is_json and self.out == self.path.column else f"{self.out}:{text}"
        )


@dataclass(frozen=True)
class Filter:
    column: str
    values: tuple[Any, ...]  # one value: equality; several: IN


@dataclass(frozen=True)
class Query:
    table: str
    key: str  # primary key: ORDER BY key, keyset pages `key > last`
    columns: tuple[Column, ...]
    filters: tuple[Filter, ...]
    metric_out: dict[str, str]  # benchmark -> column out-name of its score
    time_out: str | None
    partial_out: str | None

    def column_names(self) -> list[str]:
        return [c.out for c in self.columns]


def build_query(gate: ResultsGate, models: Sequence[str] = ()) -> Query:
    columns: list[Column] = []

    def add(path: Path, alias: str) -> str:
        for col in columns:
            if col.path == path:
                return col.out
        out = alias if path.is_json else path.column
        columns.append(Column(out, path))
        return out

    add(Path(gate.id_column), gate.id_column)
    add(Path(gate.model_column), gate.model_column)
    add(Path(gate.benchmark_column), gate.benchmark_column)
    time_out = add(Path(gate.time_column), gate.time_column) if gate.time_column else None
    # `partial` is read, not filtered: the tally counts partial runs so that a benchmark with
    # only partial runs says `partial_run`, not `missing` (a server filter would hide them)
    partial_out = add(gate.partial, "partial") if gate.partial is not None else None
    metric_out = {}
    n = 0
    for req in gate.requirements:
        before = len(columns)
        metric_out[req.benchmark] = add(req.metric, f"m{n}")
        n += len(columns) - before
    filters = [
        Filter(gate.status_column, tuple(gate.finished)),
        Filter(gate.owner_column, (gate.user,)),
        Filter(gate.benchmark_column, tuple(r.benchmark for r in gate.requirements)),
    ]
    if models:
        filters.append(Filter(gate.model_column, tuple(dict.fromkeys(models))))
    filters.extend(Filter(col, values) for col, values in gate.where)
    return Query(
        table=gate.table,
        key=gate.id_column,
        columns=tuple(columns),
        filters=tuple(filters),
        metric_out=metric_out,
        time_out=time_out,
        partial_out=partial_out,
    )


def matches(query: Query, row: dict[str, Any]) -> bool:
    """Would the server's filters keep this row (for rows read on stdin)?"""
    for f in query.filters:
        value = row.get(f.column)
        if not any(value == v or (value is not None and str(value) == str(v)) for v in f.values):
            return False
    return True


def project(query: Query, row: dict[str, Any]) -> dict[str, Any]:
    """A stdin row reduced to the query's columns (JSON paths extracted as text)."""
    return {c.out: c.path.extract(row) for c in query.columns}
