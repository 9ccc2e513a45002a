"""A PostgREST-compatible fake on 127.0.0.1 that answers from a real PostgreSQL.

The real supabase-py client is pointed at it (SUPABASE_URL). It translates the subset of
PostgREST's query syntax that clients send for reads — `select` (columns, `alias:`, JSON
paths `a->b->>c` with bare or "quoted" keys, `*`), filters `col=op.value` (eq, neq, gt,
gte, lt, lte, in.(…), is.null|true|false), `order=col.asc|desc[.nullsfirst|.nullslast]`,
`limit`, `offset` — into one parameterised SELECT, caps every page at `max_rows` the way
Supabase's `db-max-rows` does (silently), and records every request so tests can assert
on the wire. Hooks: `before(n)` runs before request n is answered (concurrent writes);
`fail_at` answers request n with a 500 (an upstream failure mid-read); `log_ids` keeps the
key column of every row it returned.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import psycopg  # noqa: TID253 - a test helper, not a start-up path
from psycopg import sql  # noqa: TID253
from psycopg.rows import dict_row  # noqa: TID253

_OPS = {"eq": "=", "neq": "<>", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_RESERVED = {"select", "order", "limit", "offset", "on_conflict", "columns"}


class BadRequest(Exception):
    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside double quotes and parentheses."""
    out, cur, depth, quoted = [], [], 0, False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        if ch == sep and not quoted and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def parse_select_item(item: str) -> tuple[sql.Composable, str | None]:
    """`alias:col->a->>"b"` -> (SQL expression AS name, the name)."""
    if item == "*":
        return sql.SQL("*"), None
    alias = None
    m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*):(?!:)", item)
    if m:
        alias, item = m.group(1), item[m.end() :]
    parts = re.split(r"(->>|->)", item)
    column = parts[0]
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", column):
        raise BadRequest("PGRST100", f'failed to parse select parameter ("{item}")')
    expr: sql.Composable = sql.Identifier(column)
    name = column
    for op, key in zip(parts[1::2], parts[2::2], strict=True):
        key = key[1:-1] if key.startswith('"') and key.endswith('"') else key
        if not key:
            raise BadRequest("PGRST100", f'failed to parse select parameter ("{item}")')
        expr = sql.SQL("{}" + op + "{}").format(expr, sql.Literal(key))
        name = key
    name = alias or name
    return sql.SQL("{} AS {}").format(expr, sql.Identifier(name)), name


def parse_in(value: str) -> list[str]:
    if not (value.startswith("(") and value.endswith(")")):
        raise BadRequest("PGRST100", f"failed to parse filter (in.{value})")
    items = split_top(value[1:-1])
    out = []
    for item in items:
        if item.startswith('"') and item.endswith('"'):
            item = item[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        out.append(item)
    return out


def parse_filter(column: str, value: str) -> tuple[sql.Composable, list[Any]]:
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", column):
        raise BadRequest("PGRST100", f"failed to parse filter column {column!r}")
    op, _, arg = value.partition(".")
    ident = sql.Identifier(column)
    if op in _OPS:
        return sql.SQL("{} " + _OPS[op] + " %s").format(ident), [arg]
    if op == "in":
        values = parse_in(arg)
        marks = sql.SQL(", ").join(sql.Placeholder() for _ in values)
        return sql.SQL("{} IN ({})").format(ident, marks), values
    if op == "is" and arg in ("null", "true", "false"):
        return sql.SQL("{} IS " + arg.upper()).format(ident), []
    raise BadRequest("PGRST100", f"unsupported filter operator {op!r}")


def parse_order(text: str) -> sql.Composable:
    terms = []
    for term in text.split(","):
        bits = term.split(".")
        spec = [sql.Identifier(bits[0])]
        for bit in bits[1:]:
            words = {
                "asc": "ASC",
                "desc": "DESC",
                "nullsfirst": "NULLS FIRST",
                "nullslast": "NULLS LAST",
            }
            if bit not in words:
                raise BadRequest("PGRST100", f"failed to parse order ({term})")
            spec.append(sql.SQL(words[bit]))
        terms.append(sql.SQL(" ").join(spec))
    return sql.SQL(", ").join(terms)


def build(
    table: str, pairs: list[tuple[str, str]], max_rows: int
) -> tuple[sql.Composable, list[Any], int]:
    select = "*"
    where: list[sql.Composable] = []
    params: list[Any] = []
    order: sql.Composable | None = None
    limit, offset = max_rows, 0
    for key, value in pairs:
        if key == "select":
            select = value
        elif key == "order":
            order = parse_order(value)
        elif key == "limit":
            limit = min(int(value), max_rows)
        elif key == "offset":
            offset = int(value)
        elif key not in _RESERVED:
            clause, values = parse_filter(key, value)
            where.append(clause)
            params.extend(values)
    items = [parse_select_item(i) for i in split_top(select)]
    stmt = sql.SQL("SELECT {} FROM {}").format(
        sql.SQL(", ").join(expr for expr, _ in items), sql.Identifier(*table.split("."))
    )
    if where:
        stmt = sql.SQL("{} WHERE {}").format(stmt, sql.SQL(" AND ").join(where))
    if order is not None:
        stmt = sql.SQL("{} ORDER BY {}").format(stmt, order)
    stmt = sql.SQL("{} LIMIT {} OFFSET {}").format(stmt, sql.Literal(limit), sql.Literal(offset))
    return stmt, params, offset


def _json_default(obj: Any) -> Any:
    if isinstance(obj, datetime | date):
        return obj.isoformat()
    if isinstance(obj, Decimal):
        return float(obj)
    raise TypeError(type(obj).__name__)


class FakePostgrest:
    def __init__(self, conninfo: str, *, max_rows: int = 1000, key_column: str = "id") -> None:
        self.conninfo = conninfo
        self.max_rows = max_rows
        self.key_column = key_column
        self.requests: list[dict[str, Any]] = []
        self.returned: list[list[Any]] = []  # the key of each row, per request
        self.fail_at: int | None = None
        self.before: Callable[[int], None] | None = None
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakePostgrest:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(
        self, method: str, target: str, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(target)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        with self.lock:
            self.requests.append(
                {
                    "method": method,
                    "path": parts.path,
                    "query": parts.query,
                    "params": pairs,
                    "headers": headers,
                }
            )
            n = len(self.requests)
        if self.before is not None:
            self.before(n)
        m = re.match(r"^/rest/v1/([A-Za-z_][A-Za-z0-9_.]*)$", parts.path)
        if method != "GET" or m is None:
            return _error(404, "PGRST125", f"no route {method} {parts.path}")
        if self.fail_at == n:
            auth = headers.get("authorization", "")
            return _error(500, "XX000", f"upstream connection lost (request {n}, {auth})")
        try:
            stmt, params, offset = build(m.group(1), pairs, self.max_rows)
            with psycopg.connect(self.conninfo, row_factory=dict_row) as conn:
                rows = conn.execute(stmt, params).fetchall()
        except BadRequest as exc:
            return _error(exc.status, exc.code, exc.message)
        except psycopg.Error as exc:
            state = exc.sqlstate or "XX000"
            return _error(400 if state.startswith("42") else 500, state, str(exc).splitlines()[0])
        with self.lock:
            self.returned.append([r.get(self.key_column) for r in rows])
        body = json.dumps(rows, default=_json_default).encode()
        end = offset + len(rows) - 1
        rng = f"{offset}-{end}/*" if rows else "*/*"
        return 200, {"Content-Type": "application/json; charset=utf-8", "Content-Range": rng}, body

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, headers, body = fake.answer(
                    "GET", self.path, {k.lower(): v for k, v in self.headers.items()}
                )
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def _error(status: int, code: str, message: str) -> tuple[int, dict[str, str], bytes]:
    body = json.dumps({"code": code, "message": message, "details": None, "hint": None}).encode()
    return status, {"Content-Type": "application/json"}, body
