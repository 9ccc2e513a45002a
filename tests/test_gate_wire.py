"""gate's Supabase source on the wire (the real supabase-py client against the PostgREST fake
of tests/fakes/postgrest.py), and what the gate's config puts into the query.

The database is the seeded one of tests/test_gate_db.py (tests/fakes/gate_db.py).
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from fakes import gate_db
from fakes.postgrest import FakePostgrest
from helpers.cli import run_labctl
from schema_check import assert_valid

CONFIG = Path(__file__).parent / "fixtures" / "gate" / "config.toml"
PLANTED = "sk-planted-SECRET-wire-8c3e51d0"


@pytest.fixture(scope="module")
def pg() -> dict[str, str]:
    env = gate_db.ready_env()
    if not env:
        pytest.fail("PostgreSQL is not up: run scripts/pg-up (scripts/test does)")
    return env


def gate(*args: str, env: dict[str, str], config: Path = CONFIG) -> Any:
    res = run_labctl("gate", "--config", str(config), *args, env=env)
    assert_valid("gate", res.records)
    return res


def test_every_request_carries_the_key_as_apikey_and_bearer_and_no_output_shows_it(
    pg: dict[str, str],
) -> None:
    with FakePostgrest(gate_db.conninfo(gate_db.TEST_DB)) as fake:
        env = {"SUPABASE_URL": fake.url, "SUPABASE_KEY": PLANTED}
        res = gate("release", "--source", "supabase", env=env)
    assert res.code == 1 and any(r["kind"] == "gate" for r in res.records), res.stderr
    assert len(fake.requests) >= 8  # every page, the last (empty) one included
    for req in fake.requests:
        assert req["headers"].get("apikey") == PLANTED, req["headers"]
        assert req["headers"].get("authorization") == f"Bearer {PLANTED}", req["headers"]
    assert PLANTED not in res.stdout + res.stderr


# -- `where`: more equality filters, in the query of every source -----------------------------
WHERE_MODELS = ["m-pass", "m-below", "m-partial"]


def where_config(tmp_path: Path) -> Path:
    """The `release` gate again, as `release-where`, with a `where` table: a list (IN) and
    a boolean (equality)."""
    text = CONFIG.read_text()
    start = text.index('[[gates]]\nname = "release"\n')
    block = text[start : text.index("[[gates]]\nname = ", start + 1)]
    block = block.replace('name = "release"', 'name = "release-where"', 1).replace(
        'partial = "partial"\n',
        'partial = "partial"\nwhere = { model = ["m-pass", "m-below", "m-partial"], '
        "partial = false }\n",
        1,
    )
    path = tmp_path / "where.toml"
    path.write_text(text + "\n" + block)
    return path


def test_a_where_filter_is_applied_by_the_server_on_both_sources(
    pg: dict[str, str], tmp_path: Path
) -> None:
    config = where_config(tmp_path)
    with FakePostgrest(gate_db.conninfo(gate_db.TEST_DB)) as fake:
        env = {"SUPABASE_URL": fake.url, "SUPABASE_KEY": "k"}
        via_rest = gate("release-where", "--source", "supabase", env=env, config=config)
    via_pg = gate("release-where", "--source", "postgres", env=pg, config=config)
    assert via_rest.code == via_pg.code == 1, via_pg.stderr
    assert via_rest.records == via_pg.records
    verdicts: dict[str, dict[str, tuple[str, bool]]] = {}
    for rec in via_pg.records:
        if rec["kind"] == "verdict":
            verdicts.setdefault(rec["model"], {})[rec["benchmark"]] = (rec["reason"], rec["passed"])
    expected = {m: dict(gate_db.EXPECTED[m]) for m in WHERE_MODELS}
    # `partial = false` drops m-partial's only humaneval run on the server: labctl never
    # sees it, so the benchmark is missing (the gate's own `partial` would say partial_run)
    expected["m-partial"]["humaneval"] = ("missing", False)
    assert verdicts == expected  # only the models `where` names, none of the 30 others
    kept = [
        row
        for row in gate_db.SCENARIO
        if row[0] in WHERE_MODELS and row[2] == "finished" and not row[3]
    ]
    assert {r["rows_read"] for r in via_pg.records if r["kind"] == "gate"} == {len(kept)}
    for req in fake.requests:
        params = dict(req["params"])
        assert params["model"] == "in.(m-pass,m-below,m-partial)", req["query"]
        assert params["partial"] == "eq.false", req["query"]


# -- nothing listening ------------------------------------------------------------------------
def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_supabase_url_where_nothing_listens_is_one_error_and_exit_3() -> None:
    """(postgrest-py retries a GET whose connection failed 3 times, 1 + 2 + 4 s apart: ~7 s.)"""
    url = f"http://127.0.0.1:{closed_port()}"
    env = {"SUPABASE_URL": url, "SUPABASE_KEY": PLANTED}
    res = gate("release", "--source", "supabase", env=env)
    assert res.code == 3, res.stderr
    (err,) = res.records
    assert err["kind"] == "error" and err["reason"] == "unreachable", err
    assert url in err["message"]
    assert "Traceback" not in res.stderr
    assert PLANTED not in res.stdout + res.stderr
