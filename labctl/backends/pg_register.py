"""`labctl gate --register`: write each model's outcome to the gate's register table.

Only ever on request, only rows of the configured user, and only after two checks in the
same transaction (rows locked with FOR UPDATE when writing):
  1. ownership: the rows it would update (same gate and model) all belong to the user;
  2. foreign keys: no other user's row references them (every FOREIGN KEY that points at
     the register table, read from the catalog `pg_constraint`; a referencing table
     without the owner column counts every referencing row as someone else's).
Any blocking row: one `error` record (reason `register_blocked`) naming each, and nothing
is written. Otherwise an UPDATE per existing row and an INSERT per new one, each shown
as a `register` record with its full statement (`applied: false` with --dry-run).

The register table needs: gate text, model text, <owner_column> text, passed boolean,
verdicts jsonb, registered_at timestamptz (and a primary key to name rows by).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from labctl.backends.postgres import connect, table_sql, translate
from labctl.records import error_record

if TYPE_CHECKING:
    from psycopg import Connection

    from labctl.gate.spec import ResultsGate

Record = dict[str, Any]
MAX_NAMED = 20  # blocking rows named per constraint

_FKS = """
SELECT c.conname, c.conrelid::regclass::text AS ref_table,
  array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i) AS ref_cols,
  array(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
        JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i) AS cols,
  c.conrelid AS ref_oid
FROM pg_constraint c WHERE c.contype = 'f' AND c.confrelid = %s::regclass ORDER BY c.conname
"""
_PKEY = """
SELECT array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i)
FROM pg_constraint c WHERE c.contype = 'p' AND c.conrelid = %s::regclass
"""
_HAS_COLUMN = """
SELECT 1 FROM pg_attribute WHERE attrelid = %s AND attname = %s AND attnum > 0 AND NOT attisdropped
"""


def _key_columns(conn: Connection[Any], table: str) -> list[str]:
    row = conn.execute(_PKEY, (table,)).fetchone()
    return list(row["array"]) if row else []


def _row_key(row: Record, key: Sequence[str]) -> dict[str, Any]:
    return {k: row[k] for k in key} if key else {"ctid": row["ctid"]}


def _targets(
    conn: Connection[Any], gate: ResultsGate, models: list[str], lock: bool
) -> list[Record]:
    from psycopg import sql

    regclass = table_sql(gate.register_table).as_string(conn)
    key = _key_columns(conn, regclass)
    cols: list[sql.Composable] = [sql.Identifier(k) for k in key]
    cols = cols or [sql.SQL("ctid::text AS ctid")]
    stmt = sql.SQL(
        "SELECT {}, model, {} AS owner FROM {} WHERE gate = %s AND model = ANY(%s){}"
    ).format(
        sql.SQL(", ").join(cols),
        sql.Identifier(gate.owner_column),
        table_sql(gate.register_table),
        sql.SQL(" FOR UPDATE" if lock else ""),
    )
    rows = conn.execute(stmt, (gate.name, models)).fetchall()
    return [{"key": _row_key(r, key), "model": r["model"], "owner": r["owner"]} for r in rows]


def _referencing(conn: Connection[Any], gate: ResultsGate, models: list[str]) -> list[Record]:
    """Other users' rows whose foreign keys point at the user's rows of this gate."""
    from psycopg import sql

    regclass = table_sql(gate.register_table).as_string(conn)
    found: list[Record] = []
    for fk in conn.execute(_FKS, (regclass,)).fetchall():
        has_owner = conn.execute(_HAS_COLUMN, (fk["ref_oid"], gate.owner_column)).fetchone()
        key = _key_columns(conn, fk["ref_table"])
        cols: list[sql.Composable] = [sql.Identifier(k) for k in key]
        cols = cols or [sql.SQL("r.ctid::text AS ctid")]
        owner = (
            sql.SQL("r.{}").format(sql.Identifier(gate.owner_column))
            if has_owner
            else sql.SQL("NULL")
        )
        stmt = sql.SQL(
            "SELECT {cols}, {owner} AS owner FROM {ref} r WHERE ({rcols}) IN "
            "(SELECT {tcols} FROM {reg} t WHERE t.gate = %s AND t.model = ANY(%s) AND t.{own} = %s)"
            "{mine} LIMIT {n}"
        ).format(
            cols=sql.SQL(", ").join(cols),
            owner=owner,
            ref=sql.SQL(fk["ref_table"]),  # regclass text from the catalog, already quoted
            rcols=sql.SQL(", ").join(
                sql.SQL("r.{}").format(sql.Identifier(c)) for c in fk["ref_cols"]
            ),
            tcols=sql.SQL(", ").join(sql.SQL("t.{}").format(sql.Identifier(c)) for c in fk["cols"]),
            reg=table_sql(gate.register_table),
            own=sql.Identifier(gate.owner_column),
            mine=sql.SQL(" AND r.{} IS DISTINCT FROM %s").format(sql.Identifier(gate.owner_column))
            if has_owner
            else sql.SQL(""),
            n=sql.Literal(MAX_NAMED),
        )
        params = [gate.name, models, gate.user] + ([gate.user] if has_owner else [])
        for row in conn.execute(stmt, params).fetchall():
            found.append(
                {
                    "table": fk["ref_table"],
                    "constraint": fk["conname"],
                    "key": _row_key(row, key),
                    "owner": row["owner"],
                }
            )
    return found


def _blocked(gate: ResultsGate, not_owned: list[Record], refs: list[Record]) -> Record:
    named = [
        f"{gate.register_table} {r['key']} (model {r['model']}) is owned by {r['owner']}"
        for r in not_owned
    ]
    named += [
        f"{r['table']} {r['key']} of {r['owner'] or 'an unknown owner'} references it "
        f"({r['constraint']})"
        for r in refs
    ]
    return error_record(
        "register_blocked",
        f"refusing to register gate {gate.name}: " + "; ".join(named),
        gate=gate.name,
        table=gate.register_table,
        blocking=[{"why": "owner", **r} for r in not_owned]
        + [{"why": "foreign_key", **r} for r in refs],
    )


def _statement(gate: ResultsGate, outcome: Record, update: bool, when: str) -> Any:
    from psycopg import sql
    from psycopg.types.json import Jsonb

    lit = sql.Literal
    if update:
        return sql.SQL(
            "UPDATE {} SET passed = {}, verdicts = {}, registered_at = {} "
            "WHERE gate = {} AND model = {} AND {} = {}"
        ).format(
            table_sql(gate.register_table),
            lit(outcome["passed"]),
            lit(Jsonb(outcome["verdicts"])),
            lit(when),
            lit(gate.name),
            lit(outcome["model"]),
            sql.Identifier(gate.owner_column),
            lit(gate.user),
        )
    return sql.SQL(
        "INSERT INTO {} (gate, model, {}, passed, verdicts, registered_at) "
        "VALUES ({}, {}, {}, {}, {}, {})"
    ).format(
        table_sql(gate.register_table),
        sql.Identifier(gate.owner_column),
        lit(gate.name),
        lit(outcome["model"]),
        lit(gate.user),
        lit(outcome["passed"]),
        lit(Jsonb(outcome["verdicts"])),
        lit(when),
    )


def register(
    conninfo: str,
    gate: ResultsGate,
    outcomes: list[Record],
    *,
    when: str,
    apply: bool,
    timeout_s: float,
) -> Iterator[Record]:
    """Check, then write (apply) or show (dry run) one statement per model."""
    import psycopg

    models = [o["model"] for o in outcomes]
    with connect(conninfo, timeout_s) as conn:
        try:
            targets = _targets(conn, gate, models, lock=apply)
            not_owned = [t for t in targets if t["owner"] != gate.user]
            refs = _referencing(conn, gate, models)
            if not_owned or refs:
                yield _blocked(gate, not_owned, refs)
                return
            existing = {t["model"] for t in targets}
            records = []
            for outcome in outcomes:
                stmt = _statement(gate, outcome, outcome["model"] in existing, when)
                if apply:
                    conn.execute(stmt)
                records.append(
                    {
                        "kind": "register",
                        "gate": gate.name,
                        "model": outcome["model"],
                        "table": gate.register_table,
                        "action": "update" if outcome["model"] in existing else "insert",
                        "passed": outcome["passed"],
                        "statement": stmt.as_string(conn),
                        "applied": apply,
                    }
                )
        except psycopg.Error as exc:
            raise translate(exc, f"registering in {gate.register_table}") from None
    yield from records
