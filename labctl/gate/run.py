"""`labctl gate`, end to end: pick the gate, read its source, judge, maybe register.

The judging is pure (labctl.gate.verdict, labctl.gate.streak); this module only wires a
gate to its source — PostgreSQL (labctl.backends.postgres), Supabase
(labctl.backends.supabase_rows) or rows on stdin — and to the register step.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labctl.errors import ConfigError, UsageError
from labctl.gate.query import Query, build_query, matches, project
from labctl.gate.spec import Gate, ResultsGate, StreakGate, compile_cycle, parse_gates
from labctl.gate.streak import run_streak
from labctl.gate.verdict import Tally, finish
from labctl.records import now_rfc3339

if TYPE_CHECKING:
    from labctl.context import Context

Record = dict[str, Any]


def configured_user(lc: Context) -> str:
    return str(
        lc.config.get("gate.user") or lc.environ.get("USER") or lc.environ.get("LOGNAME") or ""
    )


def load_gates(lc: Context) -> dict[str, Gate]:
    return parse_gates(
        lc.config.table_list("gates"), configured_user(lc), lc.config.get("gate.source")
    )


def pick(gates: dict[str, Gate], name: str | None, streak: int | None, cycle: str | None) -> Gate:
    """The gate asked for; `--streak N` alone gives an ad-hoc streak gate."""
    if name is None:
        if streak is not None:
            return with_cycle(StreakGate("streak", required=streak), cycle)
        if len(gates) != 1:
            names = ", ".join(sorted(gates)) or "none configured: add [[gates]] to the config"
            raise UsageError(f"name a gate: labctl gate NAME (gates: {names})")
        name = next(iter(gates))
    gate = gates.get(name)
    if gate is None:
        names = ", ".join(sorted(gates)) or "none"
        raise ConfigError(f"no gate named {name!r} in [[gates]] (gates: {names})")
    if streak is not None or cycle is not None:
        if not isinstance(gate, StreakGate):
            raise UsageError(f"gate {name} is a results gate; --streak/--cycle need a streak gate")
        gate = replace(gate, required=streak if streak is not None else gate.required)
        if cycle is not None:
            gate = with_cycle(gate, cycle)
    return gate


def with_cycle(gate: StreakGate, cycle: str | None) -> StreakGate:
    """--cycle REGEX (a capture group) or --cycle tag:FIELD; None: the gate's own key."""
    if cycle is not None and cycle.startswith("tag:"):
        if not cycle[4:]:
            raise UsageError("--cycle tag:FIELD needs a field name (dotted path)")
        return replace(gate, cycle_tag=cycle[4:], cycle_pattern=None)
    if cycle is None and (gate.cycle_pattern is not None or gate.cycle_tag):
        return gate
    return replace(gate, cycle_pattern=compile_cycle(cycle, "--cycle"), cycle_tag=None)


def stdin_rows(
    lc: Context, query: Query, tally: Tally, input_path: Path | None
) -> Iterator[Record]:
    """Rows on stdin go into the tally; records (anything with a `kind`) pass through."""
    from labctl.stream import read_records

    for rec in read_records(lc, input_path):
        if "kind" in rec:
            yield rec
        elif matches(query, rec):
            tally.add(project(query, rec))


def source_rows(lc: Context, gate: ResultsGate, query: Query, source: str) -> Iterable[Record]:
    timeout = float(lc.config.get("gate.timeout_s"))
    if source == "postgres":
        from labctl.backends.postgres import stream_rows

        return stream_rows(lc.config.get("database.url"), query, timeout)
    url, key = lc.config.get("supabase.url"), lc.config.get("supabase.key")
    if not url or not key:
        raise ConfigError(
            "source supabase needs [supabase] url and key (or SUPABASE_URL and SUPABASE_KEY)"
        )
    from labctl.backends.supabase_rows import stream_rows as supabase_rows

    return supabase_rows(
        url, key, query, page_size=int(lc.config.get("gate.page_size")), timeout_s=timeout
    )


def run_results(
    lc: Context,
    gate: ResultsGate,
    models: list[str],
    source: str,
    input_path: Path | None,
    outcomes: dict[str, Record],
) -> Iterator[Record]:
    """Passed-through records, then the verdicts (each model's kept in `outcomes`)."""
    if not gate.user:
        raise ConfigError(f"gate {gate.name}: no user (set [gate] user, the gate's user, or $USER)")
    query = build_query(gate, models)
    tally = Tally(gate, query)
    if source == "-":
        yield from stdin_rows(lc, query, tally, input_path)
    else:
        for row in source_rows(lc, gate, query, source):
            tally.add(row)
    for rec in finish(tally, models):
        if rec["kind"] in ("verdict", "gate"):
            entry = outcomes.setdefault(rec["model"], {"model": rec["model"], "verdicts": []})
            if rec["kind"] == "verdict":
                keep = {k: v for k, v in rec.items() if k not in ("kind", "gate", "model")}
                entry["verdicts"].append(keep)
            else:
                entry["passed"] = rec["passed"]
        yield rec


def run_gate(
    lc: Context,
    name: str | None,
    *,
    models: list[str],
    source: str | None,
    register: bool,
    dry_run: bool,
    streak: int | None,
    cycle: str | None,
    input_path: Path | None,
) -> Iterator[Record]:
    from labctl.stream import read_records

    gate = pick(load_gates(lc), name, streak, cycle)
    if isinstance(gate, StreakGate):
        if models or register or source not in (None, "-"):
            raise UsageError(
                "a streak gate reads job records on stdin; --model/--source/--register do not apply"
            )
        yield from run_streak(gate, read_records(lc, input_path))
        return
    if dry_run and not register:
        raise UsageError("--dry-run goes with --register (a gate never writes without it)")
    source = source or gate.source
    if (
        register
        and not lc.config.get("database.url")
        and not any(k.startswith("PG") for k in lc.environ)
    ):
        raise ConfigError(
            "--register needs a direct PostgreSQL connection (DATABASE_URL or PG* variables): "
            "the ownership and foreign-key checks read the catalog (pg_constraint)"
        )
    outcomes: dict[str, Record] = {}
    yield from run_results(lc, gate, models, source, input_path, outcomes)
    if register and outcomes:
        from labctl.backends.pg_register import register as write

        yield from write(
            lc.config.get("database.url"),
            gate,
            list(outcomes.values()),
            when=now_rfc3339(lc.clock),
            apply=not dry_run,
            timeout_s=float(lc.config.get("gate.timeout_s")),
        )
