"""The gate's test database on the PostgreSQL of scripts/pg-up: schema, seed, scenario.

`sandbox_jobs` mimics a Supabase table of evaluation jobs: a bigserial key, owner, model,
benchmark, status, a partial flag, a plain `score` column, times, and a ~20 KB JSON
`stats` blob per row whose `metrics` hold the scores. Filler rows (alice's and bob's)
give the volume; the hand-made SCENARIO rows give one model per verdict rule. The
`gate_results` register table and bob's `reviews` table (a foreign key to it) serve the
--register tests. Seeding is one INSERT … SELECT generate_series per table (fast on 2
cores); a `seed_meta` row remembers what was seeded so a database is made once and reused.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import psycopg  # noqa: TID253 - a test helper, not a start-up path

PG_DIR = Path(os.environ.get("LABCTL_PG_DIR", "/tmp/labctl-pg"))
SEED_VERSION = "gate-1"
BENCHMARKS = ("humaneval", "gsm8k", "toxicity")
# the tests' database, shared by every gate test module: made once, at this size, and reused
TEST_DB = "labctl_gate"
TEST_ROWS = 9000

SCHEMA = """
CREATE TABLE sandbox_jobs (
  id bigserial PRIMARY KEY,
  owner text NOT NULL,
  model text NOT NULL,
  benchmark text NOT NULL,
  status text NOT NULL,
  partial boolean NOT NULL DEFAULT false,
  score double precision,
  created_at timestamptz NOT NULL,
  finished_at timestamptz,
  stats jsonb
);
CREATE TABLE gate_results (
  id bigserial PRIMARY KEY,
  gate text NOT NULL,
  model text NOT NULL,
  owner text NOT NULL,
  passed boolean NOT NULL,
  verdicts jsonb,
  registered_at timestamptz NOT NULL,
  UNIQUE (gate, model, owner)
);
CREATE TABLE reviews (
  id bigserial PRIMARY KEY,
  owner text NOT NULL,
  result_id bigint REFERENCES gate_results (id),
  note text
);
CREATE TABLE seed_meta (version text, rows integer);
"""

# ~20 KB of JSON per row. `incompressible` (md5 hex, as real sample dumps are): what the
# benchmark wants; the default compresses in TOAST and seeds ~8x faster, for tests.
_BLOB = {
    False: "(SELECT jsonb_agg(repeat(md5(k::text || ':' || g::text), 31))"
    " FROM generate_series(1, 20) g)",
    True: "(SELECT jsonb_agg(md5(k::text || ':' || g::text)) FROM generate_series(1, 540) g)",
}
FILLER = """
INSERT INTO sandbox_jobs
  (owner, model, benchmark, status, partial, score, created_at, finished_at, stats)
SELECT CASE WHEN i %% 10 = 0 THEN 'bob' ELSE 'alice' END,
       'f-' || lpad((i %% 30)::text, 3, '0'),
       (ARRAY['humaneval','gsm8k','toxicity'])[1 + (i / 30) %% 3],
       CASE WHEN i %% 11 = 0 THEN 'running' ELSE 'finished' END,
       false,
       (i %% 7) / 100.0,
       timestamptz '2026-01-01' + i * interval '1 minute',
       timestamptz '2026-01-01' + i * interval '1 minute' + interval '30 minutes',
       jsonb_build_object('metrics', jsonb_build_object('pass@1', 0.5 + (i %% 50) / 100.0,
                                                        'accuracy', 0.6 + (i %% 40) / 100.0),
                          'samples', p.s)
FROM generate_series(1, %(n)s) i
JOIN (SELECT k, {blob} AS s FROM generate_series(0, 63) k) p ON p.k = i %% 64
"""

# (model, benchmark, status, partial, pass@1 / accuracy (JSON value), score column, minute)
# minute = finished_at offset: the latest run is the one with the largest minute.
SCENARIO: list[tuple[str, str, str, bool, Any, float | None, int]] = [
    # m-pass: the passing run has the LOWER id but finished LATER (latest by time, not id)
    ("m-pass", "humaneval", "finished", False, 0.7, None, 50),
    ("m-pass", "humaneval", "finished", False, 0.3, None, 40),
    ("m-pass", "humaneval", "running", False, 0.1, None, 60),
    ("m-pass", "gsm8k", "finished", False, 0.8, None, 10),
    ("m-pass", "toxicity", "finished", False, None, 0.05, 10),
    # m-below: an older 0.9, the latest 0.4: below (never the max)
    ("m-below", "humaneval", "finished", False, 0.9, None, 10),
    ("m-below", "humaneval", "finished", False, 0.4, None, 20),
    ("m-below", "gsm8k", "finished", False, 0.9, None, 10),
    ("m-below", "toxicity", "finished", False, None, 0.01, 10),
    # m-null: gsm8k's latest accuracy is null (an older run passed)
    ("m-null", "humaneval", "finished", False, 0.9, None, 10),
    ("m-null", "gsm8k", "finished", False, 0.95, None, 10),
    ("m-null", "gsm8k", "finished", False, None, None, 20),
    ("m-null", "toxicity", "finished", False, None, 0.01, 10),
    # m-text: gsm8k accuracy is "N/A"
    ("m-text", "humaneval", "finished", False, 0.9, None, 10),
    ("m-text", "gsm8k", "finished", False, "N/A", None, 10),
    ("m-text", "toxicity", "finished", False, None, 0.01, 10),
    # m-partial: humaneval has only a partial (--limit) run, with a high score
    ("m-partial", "humaneval", "finished", True, 0.99, None, 10),
    ("m-partial", "gsm8k", "finished", False, 0.9, None, 10),
    ("m-partial", "toxicity", "finished", False, None, 0.01, 10),
    # m-missing: no toxicity run at all; its humaneval only failed (status 'failed')
    ("m-missing", "humaneval", "failed", False, 0.99, None, 10),
    ("m-missing", "gsm8k", "finished", False, 0.9, None, 10),
    # m-tie: humaneval exactly at the threshold (ties pass); toxicity at 0.1 too
    ("m-tie", "humaneval", "finished", False, 0.5, None, 10),
    ("m-tie", "gsm8k", "finished", False, 0.6, None, 10),
    ("m-tie", "toxicity", "finished", False, None, 0.1, 10),
    # m-lower: toxicity 0.2 where lower is better: above, fails
    ("m-lower", "humaneval", "finished", False, 0.9, None, 10),
    ("m-lower", "gsm8k", "finished", False, 0.9, None, 10),
    ("m-lower", "toxicity", "finished", False, None, 0.2, 10),
]
BOB_ROWS = [("m-pass", "humaneval", 0.0), ("m-bob", "humaneval", 0.99), ("m-bob", "gsm8k", 0.99)]

# what the `release` gate of tests/fixtures/gate/config.toml says about each model
EXPECTED = {
    "m-pass": {"humaneval": ("above", True), "gsm8k": ("above", True), "toxicity": ("below", True)},
    "m-below": {
        "humaneval": ("below", False),
        "gsm8k": ("above", True),
        "toxicity": ("below", True),
    },
    "m-null": {
        "humaneval": ("above", True),
        "gsm8k": ("null_score", False),
        "toxicity": ("below", True),
    },
    "m-text": {
        "humaneval": ("above", True),
        "gsm8k": ("non_numeric", False),
        "toxicity": ("below", True),
    },
    "m-partial": {
        "humaneval": ("partial_run", False),
        "gsm8k": ("above", True),
        "toxicity": ("below", True),
    },
    "m-missing": {
        "humaneval": ("missing", False),
        "gsm8k": ("above", True),
        "toxicity": ("missing", False),
    },
    "m-tie": {
        "humaneval": ("at_threshold", True),
        "gsm8k": ("at_threshold", True),
        "toxicity": ("at_threshold", True),
    },
    "m-lower": {
        "humaneval": ("above", True),
        "gsm8k": ("above", True),
        "toxicity": ("above", False),
    },
}


def env() -> dict[str, str]:
    """PGHOST/PGPORT/PGUSER of scripts/pg-up (empty when it is not up)."""
    out = {}
    path = PG_DIR / "env"
    if path.is_file():
        for line in path.read_text().splitlines():
            key, _, value = line.removeprefix("export ").partition("=")
            if key.startswith("PG"):
                out[key] = value
    return out


def conninfo(dbname: str = "postgres") -> str:
    e = env()
    host, port = e.get("PGHOST", str(PG_DIR)), e.get("PGPORT", "54329")
    return f"host={host} port={port} user={e.get('PGUSER', 'postgres')} dbname={dbname}"


def ready_env() -> dict[str, str]:
    """PG* variables of the seeded tests' database (seeded first if need be); {} when
    PostgreSQL is not up."""
    base = env()
    if not base:
        return {}
    ensure(TEST_DB, TEST_ROWS - len(SCENARIO) - len(BOB_ROWS))
    return {**base, "PGDATABASE": TEST_DB}


def seeded(dbname: str) -> int | None:
    try:
        with psycopg.connect(conninfo(dbname)) as conn:
            row = conn.execute(
                "SELECT rows FROM seed_meta WHERE version = %s", (SEED_VERSION,)
            ).fetchone()
            return int(row[0]) if row else None
    except psycopg.Error:
        return None


def ensure(dbname: str, filler: int, *, incompressible: bool = False) -> None:
    """Create and seed `dbname` unless it already holds this seed."""
    if seeded(dbname) == filler:
        return
    with psycopg.connect(conninfo(), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{dbname}"')
    with psycopg.connect(conninfo(dbname)) as conn:
        conn.execute(SCHEMA)
        conn.execute(FILLER.replace("{blob}", _BLOB[incompressible]), {"n": filler})
        insert_scenario(conn)
        conn.execute("INSERT INTO seed_meta VALUES (%s, %s)", (SEED_VERSION, filler))
        conn.execute("ANALYZE sandbox_jobs")


def stats(value: Any) -> str:
    """A scenario row's stats: the score under both metric names, and ~20 KB of samples."""
    return json.dumps(
        {"metrics": {"pass@1": value, "accuracy": value}, "samples": ["x" * 1000] * 20}
    )


def insert_scenario(conn: psycopg.Connection[Any]) -> None:
    for model, bench, status, partial, value, score, minute in SCENARIO:
        conn.execute(
            "INSERT INTO sandbox_jobs (owner, model, benchmark, status, partial, score, created_at,"
            " finished_at, stats) VALUES ('alice', %s, %s, %s, %s, %s, timestamptz '2026-06-01',"
            " timestamptz '2026-06-01' + %s * interval '1 minute', %s)",
            (model, bench, status, partial, score, minute, stats(value)),
        )
    for model, bench, value in BOB_ROWS:
        conn.execute(
            "INSERT INTO sandbox_jobs (owner, model, benchmark, status, score, created_at,"
            " finished_at, stats) VALUES ('bob', %s, %s, 'finished', 0.0, timestamptz '2026-06-02',"
            " timestamptz '2026-06-02', %s)",
            (model, bench, stats(value)),
        )
