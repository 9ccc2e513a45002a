"""gate against a real PostgreSQL (scripts/pg-up) and supabase-py against a PostgREST fake.

The database is seeded once (9,000 rows × ~20 KB stats, tests/fakes/gate_db.py) and reused
across runs; tests that write (register, concurrent inserts) reset only their own tables.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import psycopg  # noqa: TID253 - a test helper, not a start-up path
import pytest
from fakes import gate_db
from fakes.postgrest import FakePostgrest, split_top
from helpers.cli import run_labctl
from schema_check import assert_valid

CONFIG = Path(__file__).parent / "fixtures" / "gate" / "config.toml"
DB = gate_db.TEST_DB
SCENARIO_MODELS = sorted(gate_db.EXPECTED)
PLANTED = "sk-planted-SECRET-4f1d9a7e2b"


@pytest.fixture(scope="session")
def pg() -> dict[str, str]:
    env = gate_db.ready_env()
    if not env:
        pytest.fail("PostgreSQL is not up: run scripts/pg-up (scripts/test does)")
    return env


@pytest.fixture
def db(pg: dict[str, str]) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(gate_db.conninfo(DB), autocommit=True) as conn:
        yield conn


def gate(*args: str, env: dict[str, str], input: str | None = None) -> Any:
    res = run_labctl("gate", "--config", str(CONFIG), *args, env=env, input=input)
    assert_valid("gate", res.records)
    return res


def by_model(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for rec in records:
        if rec["kind"] == "verdict":
            out.setdefault(rec["model"], {})[rec["benchmark"]] = (rec["reason"], rec["passed"])
    return out


def models_args(models: list[str]) -> list[str]:
    return [arg for m in models for arg in ("--model", m)]


# -- reading ---------------------------------------------------------------------------------
def test_postgres_source_applies_every_rule(pg: dict[str, str]) -> None:
    res = gate("release", *models_args(SCENARIO_MODELS), env=pg)
    assert res.code == 1, res.stderr
    assert by_model(res.records) == gate_db.EXPECTED
    gates = {r["model"]: r["passed"] for r in res.records if r["kind"] == "gate"}
    assert gates == {m: all(p for _, p in v.values()) for m, v in gate_db.EXPECTED.items()}
    # bob's rows never count: his m-pass humaneval 0.0 is newer than alice's runs
    assert "m-bob" not in gates


def test_only_passing_models_exit_0(pg: dict[str, str]) -> None:
    res = gate("release", "--model", "m-pass", "--model", "m-tie", env=pg)
    assert res.code == 0, res.records
    assert [r["passed"] for r in res.records if r["kind"] == "gate"] == [True, True]


def test_mean_last_n(pg: dict[str, str]) -> None:
    res = gate("release-mean", "--model", "m-below", env=pg)
    (verdict,) = [r for r in res.records if r["kind"] == "verdict"]
    assert verdict["score"] == pytest.approx(0.65)  # (0.4 + 0.9) / 2, not max 0.9
    assert len(verdict["run_ids"]) == 2 and res.code == 0


def test_supabase_and_postgres_agree_and_the_wire_is_lean(pg: dict[str, str]) -> None:
    with FakePostgrest(gate_db.conninfo(DB)) as fake:
        env = {"SUPABASE_URL": fake.url, "SUPABASE_KEY": PLANTED}
        via_rest = gate("release", "--source", "supabase", env=env)
    via_pg = gate("release", env=pg)
    assert via_rest.code == via_pg.code == 1
    assert via_rest.records == via_pg.records
    rows_read = {r["rows_read"] for r in via_pg.records if r["kind"] == "gate"}
    assert rows_read == {sum(len(ids) for ids in fake.returned)}
    assert len(fake.requests) >= 8  # > 7,000 matching rows: many pages
    last = None
    for req, ids in zip(fake.requests, fake.returned, strict=True):
        params = dict(req["params"])
        items = split_top(params["select"])
        assert "*" not in items and "stats" not in items, items
        assert all(i.split(":")[-1].startswith("stats->") for i in items if "stats" in i)
        assert params["status"] == "eq.finished" and params["owner"] == "eq.alice"
        assert params["benchmark"] == "in.(humaneval,gsm8k,toxicity)"
        assert params["order"] == "id.asc" and 0 < int(params["limit"]) <= 1000
        assert "offset" not in params
        if last is None:
            assert "id" not in params
        else:
            assert params["id"] == f"gt.{last}"  # keyset: after the last key seen
            assert not ids or min(ids) > last
        last = ids[-1] if ids else last
    assert fake.returned[-1] == []  # stops on an empty page, not a short one


def test_stdin_rows_agree_with_the_database(
    pg: dict[str, str], db: psycopg.Connection[Any]
) -> None:
    rows = db.execute(
        "SELECT row_to_json(s)::text FROM (SELECT id, owner, model, benchmark, status, partial, "
        "score, finished_at, jsonb_build_object('metrics', stats->'metrics') AS stats "
        "FROM sandbox_jobs WHERE model LIKE 'm-%%') s"
    ).fetchall()
    text = "\n".join(r[0] for r in rows) + '\n{"kind":"note","text":"passes through"}\n'
    res = gate("release", "--source", "-", *models_args(SCENARIO_MODELS), env={}, input=text)
    assert by_model(res.records) == gate_db.EXPECTED
    assert {"kind": "note", "text": "passes through"} in res.records


def test_concurrent_inserts_and_deletes_are_neither_skipped_nor_duplicated(
    pg: dict[str, str], db: psycopg.Connection[Any], tmp_path: Path
) -> None:
    db.execute("DROP TABLE IF EXISTS conc_jobs")
    db.execute(
        "CREATE TABLE conc_jobs AS SELECT i::bigint AS id, 'alice'::text AS owner, "
        "'c-' || (i % 5) AS model, 'humaneval'::text AS benchmark, 'finished'::text AS status, "
        "timestamptz '2026-01-01' + i * interval '1 s' AS created_at, "
        "jsonb_build_object('metrics', jsonb_build_object('pass@1', 0.9)) AS stats "
        "FROM generate_series(1, 2500) i"
    )
    db.execute("ALTER TABLE conc_jobs ADD PRIMARY KEY (id)")
    config = tmp_path / "conc.toml"
    config.write_text(
        '[gate]\nuser = "alice"\n[[gates]]\nname = "release"\ntable = "conc_jobs"\n'
        '[[gates.require]]\nbenchmark = "humaneval"\nmetric = "stats->metrics->>pass@1"\n'
        "threshold = 0.5\n"
    )
    with FakePostgrest(gate_db.conninfo(DB)) as fake:

        def meanwhile(n: int) -> None:
            if n == 2:  # after the first page: delete rows already read, add new ones
                with psycopg.connect(gate_db.conninfo(DB), autocommit=True) as other:
                    other.execute("DELETE FROM conc_jobs WHERE id <= 20")
                    other.execute(
                        "INSERT INTO conc_jobs SELECT 10000 + i, 'alice', 'c-new', 'humaneval', "
                        "'finished', now(), '{\"metrics\": {\"pass@1\": 0.1}}' "
                        "FROM generate_series(1, 7) i"
                    )

        fake.before = meanwhile
        res = run_labctl(
            "gate",
            "--config",
            str(config),
            "release",
            "--source",
            "supabase",
            env={"SUPABASE_URL": fake.url, "SUPABASE_KEY": "k"},
        )
    ids = [i for page in fake.returned for i in page]
    assert len(ids) == len(set(ids)) == 2500 + 7
    assert set(ids) == set(range(1, 2501)) | set(range(10001, 10008))
    gates = {r["model"]: r for r in res.records if r["kind"] == "gate"}
    assert gates["c-new"]["rows_read"] == 2507 and not gates["c-new"]["passed"]
    verdicts = {r["model"]: r for r in res.records if r["kind"] == "verdict"}
    assert verdicts["c-new"]["run_ids"] == [10007]


def test_a_500_mid_read_is_an_error_and_exit_3_with_no_verdict(pg: dict[str, str]) -> None:
    with FakePostgrest(gate_db.conninfo(DB)) as fake:
        fake.fail_at = 3
        res = gate(
            "release",
            "--source",
            "supabase",
            env={"SUPABASE_URL": fake.url, "SUPABASE_KEY": PLANTED},
        )
    assert res.code == 3
    (err,) = res.records
    assert err["kind"] == "error" and err["reason"] == "backend"
    assert "upstream connection lost" in err["message"]
    # the fake echoed the Authorization header into its message: it must not leak
    assert PLANTED not in res.stdout + res.stderr
    assert len(fake.requests) == 3


def test_unreachable_postgres_is_exit_3(pg: dict[str, str]) -> None:
    res = gate("release", env={**pg, "PGHOST": "127.0.0.1", "PGPORT": "1"})
    assert res.code == 3
    assert res.records[0]["reason"] == "unreachable"


def test_a_column_the_table_lacks_is_a_config_error(pg: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(CONFIG.read_text().replace('metric = "score"', 'metric = "scoer"'))
    res = run_labctl("gate", "--config", str(config), "release", env=pg)
    assert res.code == 2
    assert res.records[0]["reason"] == "config" and "scoer" in res.records[0]["message"]


# -- register --------------------------------------------------------------------------------
def reset_register(db: psycopg.Connection[Any]) -> None:
    db.execute("TRUNCATE reviews, gate_results RESTART IDENTITY")


def results(db: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
    return db.execute(
        "SELECT model, owner, passed, registered_at FROM gate_results ORDER BY id"
    ).fetchall()


def test_nothing_is_written_without_register_and_dry_run_shows_statements(
    pg: dict[str, str], db: psycopg.Connection[Any]
) -> None:
    reset_register(db)
    gate("release", "--model", "m-pass", env=pg)
    assert results(db) == []
    res = gate(
        "release", "--model", "m-pass", "--model", "m-below", "--register", "--dry-run", env=pg
    )
    regs = [r for r in res.records if r["kind"] == "register"]
    assert [(r["model"], r["action"], r["applied"]) for r in regs] == [
        ("m-below", "insert", False),
        ("m-pass", "insert", False),
    ]
    assert regs[1]["statement"].startswith('INSERT INTO "gate_results"')
    assert results(db) == []


def test_register_inserts_then_updates_only_alices_rows(
    pg: dict[str, str], db: psycopg.Connection[Any]
) -> None:
    reset_register(db)
    res = gate("release", "--model", "m-pass", "--register", env=pg)
    assert res.code == 0
    assert [(r["action"], r["applied"]) for r in res.records if r["kind"] == "register"] == [
        ("insert", True)
    ]
    (row,) = results(db)
    assert row[:3] == ("m-pass", "alice", True)
    verdicts = db.execute("SELECT verdicts FROM gate_results").fetchone()[0]
    assert {v["benchmark"] for v in verdicts} == {"humaneval", "gsm8k", "toxicity"}
    res = gate("release", "--model", "m-pass", "--register", env=pg)
    assert [r["action"] for r in res.records if r["kind"] == "register"] == ["update"]
    assert len(results(db)) == 1


def test_register_refuses_when_another_users_row_references_ours(
    pg: dict[str, str], db: psycopg.Connection[Any]
) -> None:
    reset_register(db)
    gate("release", "--model", "m-pass", "--register", env=pg)
    before = results(db)
    (rid,) = db.execute("SELECT id FROM gate_results").fetchone()
    db.execute("INSERT INTO reviews (owner, result_id, note) VALUES ('alice', %s, 'mine')", (rid,))
    res = gate("release", "--model", "m-pass", "--register", env=pg)
    assert res.code == 0  # alice's own review does not block
    db.execute("INSERT INTO reviews (owner, result_id, note) VALUES ('bob', %s, 'lgtm')", (rid,))
    before = results(db)
    for extra in ([], ["--dry-run"]):
        res = gate("release", "--model", "m-pass", "--register", *extra, env=pg)
        assert res.code == 1
        (err,) = [r for r in res.records if r["kind"] == "error"]
        assert err["reason"] == "register_blocked"
        assert err["blocking"] == [
            {
                "why": "foreign_key",
                "table": "reviews",
                "constraint": "reviews_result_id_fkey",
                "key": {"id": 2},
                "owner": "bob",
            }
        ]
        assert "reviews {'id': 2} of bob" in err["message"]
        assert not [r for r in res.records if r["kind"] == "register"]
        assert results(db) == before  # nothing written


def test_register_refuses_a_model_registered_by_another_user(
    pg: dict[str, str], db: psycopg.Connection[Any]
) -> None:
    reset_register(db)
    db.execute(
        "INSERT INTO gate_results (gate, model, owner, passed, registered_at) "
        "VALUES ('release', 'm-tie', 'bob', false, now())"
    )
    res = gate("release", "--model", "m-tie", "--register", env=pg)
    (err,) = [r for r in res.records if r["kind"] == "error"]
    assert err["reason"] == "register_blocked" and "owned by bob" in err["message"]
    assert [r[1] for r in results(db)] == ["bob"]


def test_register_through_supabase_needs_a_direct_connection(pg: dict[str, str]) -> None:
    res = gate(
        "release",
        "--source",
        "supabase",
        "--register",
        env={"SUPABASE_URL": "http://127.0.0.1:1", "SUPABASE_KEY": "k"},
    )
    assert res.code == 2
    assert "pg_constraint" in res.records[0]["message"]


def test_dry_run_alone_is_a_usage_error(pg: dict[str, str]) -> None:
    res = gate("release", "--dry-run", env=pg)
    assert res.code == 2 and res.records[0]["reason"] == "usage"


def _params(query: str) -> dict[str, str]:
    return dict(parse_qsl(query))


def test_wire_log_is_json_serialisable(pg: dict[str, str]) -> None:
    # the recorded requests are what a reviewer reads when a wire assertion fails
    with FakePostgrest(gate_db.conninfo(DB)) as fake:
        gate(
            "release",
            "--source",
            "supabase",
            "--model",
            "m-pass",
            env={"SUPABASE_URL": fake.url, "SUPABASE_KEY": "k"},
        )
    json.dumps(fake.requests)
    assert _params(fake.requests[0]["query"])["model"] == "eq.m-pass"


def test_a_password_in_database_url_never_shows(pg: dict[str, str]) -> None:
    url = f"postgresql://alice:{PLANTED}@127.0.0.1:1/{DB}?connect_timeout=2"
    res = gate("release", env={"DATABASE_URL": url})
    assert res.code == 3 and res.records[0]["reason"] == "unreachable"
    assert PLANTED not in res.stdout + res.stderr
