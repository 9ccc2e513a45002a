"""gate's Supabase source on the wire (the real supabase-py client against the PostgREST fake
of tests/fakes/postgrest.py), and what the gate's config puts into the query.

The database is the seeded one of tests/test_gate_db.py (tests/fakes/gate_db.py).
"""

from __future__ import annotations

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
