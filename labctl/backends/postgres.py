"""PostgreSQL through psycopg 3: connect, and stream a gate's rows from a named cursor.

`DATABASE_URL` (or the config's `[database] url`) when set, else libpq's own `PG*`
variables (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, PGSERVICE…). Supabase and
self-hosted labs both give a direct connection string; through a transaction pooler
(pgbouncer) prepared statements are off (`prepare_threshold=None`).

Rows come from a server-side (named) cursor: the SELECT names only the columns the gate
needs, extracts each score from its JSON on the server, and carries every filter; the
client holds one `itersize` batch at a time, so memory stays flat however many rows match.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from labctl.errors import BackendError, ConfigError, LabctlError

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.sql import Composable, Composed

    from labctl.gate.metric import Path
    from labctl.gate.query import Query

ITERSIZE = 500
# errors that mean the config names something the database does not have
_CONFIG_SQLSTATES = {"42P01", "42703", "42883", "3F000", "42501"}


def translate(exc: Exception, what: str) -> LabctlError:
    """A psycopg error as a labctl error: config (exit 2) or backend (exit 3)."""
    import psycopg

    state = getattr(getattr(exc, "diag", None), "sqlstate", None) or getattr(exc, "sqlstate", None)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if state in _CONFIG_SQLSTATES:
        return ConfigError(f"{what}: {text}", reason="config", sqlstate=state)
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return BackendError(f"{what}: {text}", reason="timeout", sqlstate=state)
    if isinstance(exc, psycopg.OperationalError) and state is None:
        return BackendError(f"{what}: {text}", reason="unreachable")
    return BackendError(f"{what}: {text}", reason="backend", sqlstate=state)


@contextmanager
def connect(conninfo: str, timeout_s: float) -> Iterator[Connection[Any]]:
    """One connection in one transaction, with a statement timeout; closed on exit."""
    import psycopg
    from psycopg.rows import dict_row

    try:
        conn = psycopg.connect(
            conninfo,
            connect_timeout=max(1, int(timeout_s)),
            row_factory=dict_row,
            prepare_threshold=None,
            application_name="labctl gate",
        )
    except psycopg.Error as exc:
        raise translate(exc, "cannot connect to PostgreSQL") from None
    try:
        with conn:
            conn.execute(
                "SELECT set_config('statement_timeout', %s, true)", (f"{int(timeout_s * 1000)}",)
            )
            yield conn
    finally:
        conn.close()


def path_sql(path: Path) -> Composable:
    """stats->'metrics'->>'pass@1' as SQL (identifier and literals quoted)."""
    from psycopg import sql

    expr: Composable = sql.Identifier(path.column)
    for i, key in enumerate(path.keys):
        op = "->>" if i == len(path.keys) - 1 else "->"
        expr = sql.SQL("{}" + op + "{}").format(expr, sql.Literal(key))
    return expr


def table_sql(name: str) -> Composable:
    from psycopg import sql

    return sql.Identifier(*name.split("."))


def select_sql(query: Query) -> tuple[Composed, list[Any]]:
    """The one SELECT of a gate: its columns, every filter, ordered by the key."""
    from psycopg import sql

    columns = []
    for col in query.columns:
        expr = path_sql(col.path)
        if col.path.is_json or col.out != col.path.column:
            expr = sql.SQL("{} AS {}").format(expr, sql.Identifier(col.out))
        columns.append(expr)
    where: list[Composable] = []
    params: list[Any] = []
    for f in query.filters:
        marks = sql.SQL(", ").join(sql.Placeholder() for _ in f.values)
        where.append(sql.SQL("{} IN ({})").format(sql.Identifier(f.column), marks))
        params.extend(f.values)
    stmt = sql.SQL("SELECT {} FROM {} WHERE {} ORDER BY {}").format(
        sql.SQL(", ").join(columns),
        table_sql(query.table),
        sql.SQL(" AND ").join(where),
        sql.Identifier(query.key),
    )
    return stmt, params


def stream_rows(conninfo: str, query: Query, timeout_s: float) -> Iterator[dict[str, Any]]:
    """Every row of the gate's SELECT, from a named cursor, `ITERSIZE` at a time."""
    import psycopg

    stmt, params = select_sql(query)
    with connect(conninfo, timeout_s) as conn:
        try:
            with conn.cursor(name="labctl_gate") as cur:
                cur.itersize = ITERSIZE
                cur.execute(stmt, params)
                yield from cur
        except psycopg.Error as exc:
            raise translate(exc, f"reading {query.table}") from None
