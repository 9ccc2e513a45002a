"""Supabase (PostgREST) through supabase-py: stream a gate's rows, page by keyset.

Each page is one GET that names only the gate's columns (JSON scores extracted on the
server: `m0:stats->metrics->>"pass@1"`, never `*`, never the whole blob), carries every
filter in the query string, and asks for at most `page_size` (≤ 1000, Supabase's default
max rows) rows after the last key seen, ordered by the key: `id=gt.<last>&order=id.asc
&limit=1000`. Rows inserted during the read are therefore neither skipped (new keys come
after the cursor) nor duplicated (no offsets). The read stops at the first empty page —
never at a short one, since a server's `db-max-rows` may cap a page below what was asked.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from labctl.errors import BackendError, ConfigError, LabctlError
from labctl.gate.query import Query

MAX_PAGE = 1000
# PostgREST / PostgreSQL codes that mean the config names something that is not there
_CONFIG_CODES = {"42P01", "42703", "42883", "PGRST200", "PGRST204", "PGRST205", "PGRST100"}


def _api_error(exc: Any, table: str) -> LabctlError:
    code = str(getattr(exc, "code", "") or "")
    message = str(getattr(exc, "message", "") or exc)
    text = f"Supabase {table}: {message}" + (f" ({code})" if code else "")
    if code in _CONFIG_CODES:
        return ConfigError(text, reason="config", code=code)
    return BackendError(text, reason="backend", code=code or None)


def _client(url: str, key: str, timeout_s: float) -> Any:
    """supabase-py's PostgREST client, as `supabase.Client.table()` uses it.

    Built directly rather than through `supabase.create_client`, which also loads the
    auth, realtime, storage and functions clients: ~18 MB more peak memory for nothing a
    gate uses. Same headers (apikey, Bearer key), same /rest/v1 endpoint, same requests.
    """
    import httpx
    from postgrest import SyncPostgrestClient

    rest = url.rstrip("/") + "/rest/v1"
    if not rest.startswith(("http://", "https://")):
        raise ConfigError(f"Supabase URL must start with http:// or https://, not {url!r}")
    headers = {"apikey": key, "Authorization": f"Bearer {key}"}
    session = httpx.Client(base_url=rest, headers=headers, timeout=timeout_s, follow_redirects=True)
    return SyncPostgrestClient(rest, headers=headers, http_client=session)


def _page(client: Any, query: Query, after: Any, size: int) -> list[dict[str, Any]]:
    req = client.from_(query.table).select(",".join(c.postgrest() for c in query.columns))
    for f in query.filters:
        req = req.eq(f.column, f.values[0]) if len(f.values) == 1 else req.in_(f.column, f.values)
    if after is not None:
        req = req.gt(query.key, after)
    rows = req.order(query.key).limit(size).execute().data
    return rows if isinstance(rows, list) else []


def stream_rows(
    url: str, key: str, query: Query, *, page_size: int = MAX_PAGE, timeout_s: float = 60.0
) -> Iterator[dict[str, Any]]:
    """Every row of the gate, page after page; an unreachable or failing server raises."""
    import httpx
    from postgrest.exceptions import APIError

    if not 1 <= page_size <= MAX_PAGE:
        raise ConfigError(f"gate page size must be 1..{MAX_PAGE}, not {page_size}")
    client = _client(url, key, timeout_s)
    after: Any = None
    while True:
        try:
            rows = _page(client, query, after, page_size)
        except APIError as exc:
            raise _api_error(exc, query.table) from None
        except httpx.TimeoutException:
            raise BackendError(
                f"Supabase {url}: no answer within {timeout_s:g}s", reason="timeout"
            ) from None
        except httpx.HTTPError as exc:
            raise BackendError(
                f"Supabase {url}: {type(exc).__name__}: {exc}", reason="unreachable"
            ) from None
        if not rows:
            return
        last = rows[-1].get(query.key)
        if last is None:
            raise BackendError(
                f"Supabase {query.table}: rows came back without {query.key}", reason="bad_output"
            )
        if last == after:  # the server ignored `key > after`: stop rather than loop
            raise BackendError(
                f"Supabase {query.table}: the page after {query.key} {after} ended at the same key",
                reason="bad_output",
            )
        yield from rows
        after = last
