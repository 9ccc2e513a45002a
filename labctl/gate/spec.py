"""The `[[gates]]` tables of the config, validated into `ResultsGate` / `StreakGate`.

Every problem is one line naming the gate and the key (a `config` error, exit 2); nothing
is read when the gate asked for is misconfigured. Results gate keys:

    name              unique; letters, digits, `.`, `_`, `-`
    kind              "results" (default) or "streak"
    source            supabase | postgres | -   (default [gate] source)
    table             the results table, `name` or `schema.name`
    id_column         its primary key, the keyset order (default "id")
    model_column      default "model"
    benchmark_column  default "benchmark"
    status_column     default "status";  finished: status values that count ["finished"]
    owner_column      default "owner";   user: the owner whose rows count ([gate] user)
    time_column       which run is the latest (then id); "" = by id alone (default
                      "created_at")
    partial           optional column or JSON path; true = a partial run, never counted
                      (read and set aside by labctl, not filtered by the server, so that
                      only partial runs give `partial_run`, not `missing`)
    where             optional {column = value or [values]}: more equality filters
    combine           "latest" (default) or "mean_last_n" (with last_n, default 3); never max
    register_table    where --register writes the outcome (default "gate_results")
    [[gates.require]] benchmark, metric (column or JSON path), threshold, direction
                      ("higher" is better, the default, or "lower")

Streak gate keys: name, kind = "streak", required (N clean cycles), cycle_pattern (a regex
on the job name whose first group is the cycle) or cycle_tag (a record field, dotted path),
research_categories (diagnosis categories that are a valid research rejection),
research_exit_codes, clean_verdicts (default ["completed"]).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from labctl.errors import ConfigError
from labctl.gate.metric import IDENT, Path, parse_path
from labctl.gate.reader import TableReader
from labctl.verdicts import V

SOURCES = ("supabase", "postgres", "-")
COMBINES = ("latest", "mean_last_n")
DIRECTIONS = ("higher", "lower")
DEFAULT_CYCLE_PATTERN = r"(?i)cycle[-_]?(\d+)"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")

RESULTS_KEYS = frozenset(
    [
        "name",
        "kind",
        "source",
        "table",
        "id_column",
        "model_column",
        "benchmark_column",
        "status_column",
        "finished",
        "owner_column",
        "user",
        "time_column",
        "partial",
        "where",
        "combine",
        "last_n",
        "register_table",
        "require",
    ]
)
REQUIRE_KEYS = frozenset({"benchmark", "metric", "threshold", "direction"})
STREAK_KEYS = frozenset(
    [
        "name",
        "kind",
        "required",
        "cycle_pattern",
        "cycle_tag",
        "research_categories",
        "research_exit_codes",
        "clean_verdicts",
    ]
)


@dataclass(frozen=True)
class Requirement:
    benchmark: str
    metric: Path
    threshold: float
    direction: str  # "higher" or "lower" is better


@dataclass(frozen=True)
class ResultsGate:
    name: str
    table: str
    requirements: tuple[Requirement, ...]
    user: str
    source: str = "postgres"
    id_column: str = "id"
    model_column: str = "model"
    benchmark_column: str = "benchmark"
    status_column: str = "status"
    finished: tuple[str, ...] = ("finished",)
    owner_column: str = "owner"
    time_column: str = "created_at"
    partial: Path | None = None
    where: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    combine: str = "latest"
    last_n: int = 1
    register_table: str = "gate_results"
    kind: str = "results"


@dataclass(frozen=True)
class StreakGate:
    name: str
    required: int = 3
    cycle_pattern: re.Pattern[str] | None = None
    cycle_tag: str | None = None
    research_categories: frozenset[str] = frozenset()
    research_exit_codes: frozenset[int] = frozenset()
    clean_verdicts: frozenset[str] = frozenset({V.COMPLETED})
    kind: str = "streak"


Gate = ResultsGate | StreakGate


def _requirements(r: TableReader) -> tuple[Requirement, ...]:
    items = r.table.get("require")
    if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
        raise r.fail("needs at least one [[gates.require]] table (benchmark, metric, threshold)")
    out: list[Requirement] = []
    for n, item in enumerate(items, 1):
        sub = TableReader(item, f"{r.where} require #{n}")
        sub.check_keys(REQUIRE_KEYS)
        bench = sub.text("benchmark")
        if any(req.benchmark == bench for req in out):
            raise sub.fail(f"benchmark {bench!r} is required twice")
        metric = parse_path(sub.text("metric"), f"{sub.where} metric")
        out.append(
            Requirement(
                bench,
                metric,
                sub.number("threshold"),
                sub.choice("direction", "higher", DIRECTIONS),
            )
        )
    return tuple(out)


def _where(r: TableReader) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    table = r.table.get("where", {})
    if not isinstance(table, dict):
        raise r.fail("where must be a table of column = value")
    out = []
    for column, value in table.items():
        if not IDENT.match(column):
            raise r.fail(f"where: {column!r} is not a column name")
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, str | int | float | bool) for v in values):
            raise r.fail(f"where.{column} must be a string, number, boolean or a list of them")
        out.append((column, tuple(values)))
    return tuple(out)


def parse_results(r: TableReader, name: str, user: str, source: str) -> ResultsGate:
    r.check_keys(RESULTS_KEYS, REQUIRE_KEYS, "[[gates.require]]")
    table = r.text("table")
    if not _TABLE.match(table):
        raise r.fail(f"table {table!r} is not a table name (name or schema.name)")
    combine = r.choice("combine", "latest", COMBINES)
    partial = r.table.get("partial")
    return ResultsGate(
        name=name,
        table=table,
        requirements=_requirements(r),
        user=r.text("user", user) if "user" in r.table else user,
        source=r.choice("source", source, SOURCES),
        id_column=r.ident("id_column", "id"),
        model_column=r.ident("model_column", "model"),
        benchmark_column=r.ident("benchmark_column", "benchmark"),
        status_column=r.ident("status_column", "status"),
        finished=r.strings("finished", ("finished",)) or ("finished",),
        owner_column=r.ident("owner_column", "owner"),
        time_column=r.ident("time_column", "created_at", allow_empty=True),
        partial=None if partial in (None, "") else parse_path(partial, f"{r.where} partial"),
        where=_where(r),
        combine=combine,
        last_n=r.integer("last_n", 3) if combine == "mean_last_n" else 1,
        register_table=r.text("register_table", "gate_results"),
    )


def parse_streak(r: TableReader, name: str, required: int | None = None) -> StreakGate:
    r.check_keys(STREAK_KEYS)
    pattern = r.table.get("cycle_pattern")
    tag = r.table.get("cycle_tag")
    if pattern is not None and tag is not None:
        raise r.fail("give cycle_pattern or cycle_tag, not both")
    if tag is not None and (not isinstance(tag, str) or not tag):
        raise r.fail("cycle_tag must be a record field name (dotted path)")
    compiled = compile_cycle(pattern if tag is None else None, r.where)
    codes = r.table.get("research_exit_codes", [])
    if not isinstance(codes, list) or not all(
        isinstance(c, int) and not isinstance(c, bool) for c in codes
    ):
        raise r.fail("research_exit_codes must be a list of integers")
    return StreakGate(
        name=name,
        required=required if required is not None else r.integer("required", 3),
        cycle_pattern=compiled,
        cycle_tag=tag,
        research_categories=frozenset(r.strings("research_categories")),
        research_exit_codes=frozenset(codes),
        clean_verdicts=frozenset(r.strings("clean_verdicts", (V.COMPLETED,))),
    )


def compile_cycle(pattern: Any, where: str) -> re.Pattern[str] | None:
    """A cycle pattern with at least one capture group (None: the default pattern)."""
    text = DEFAULT_CYCLE_PATTERN if pattern is None else pattern
    if not isinstance(text, str):
        raise ConfigError(f"{where}: cycle_pattern must be a regular expression")
    try:
        compiled = re.compile(text)
    except re.error as exc:
        raise ConfigError(f"{where}: cycle_pattern {text!r} is not a valid regex: {exc}") from None
    if compiled.groups < 1:
        raise ConfigError(f"{where}: cycle_pattern {text!r} needs a capture group: the cycle")
    return compiled


def parse_gates(tables: list[dict[str, Any]], user: str, source: str) -> dict[str, Gate]:
    """Every `[[gates]]` table, validated; keyed by name."""
    gates: dict[str, Gate] = {}
    for n, table in enumerate(tables, 1):
        name = table.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ConfigError(f"[[gates]] #{n}: name is required (letters, digits, '.', '_', '-')")
        if name in gates:
            raise ConfigError(f"[[gates]] {name}: two gates have this name")
        reader = TableReader(table, f"[[gates]] {name}")
        kind = reader.choice("kind", "results", ("results", "streak"))
        gates[name] = (
            parse_streak(reader, name)
            if kind == "streak"
            else parse_results(reader, name, user, source)
        )
    return gates
