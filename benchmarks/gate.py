"""Benchmark `labctl gate`: peak RSS and time per source vs a naive `SELECT *` + fetchall.

    scripts/pg-up && .venv/bin/python benchmarks/gate.py [--sizes 9000,90000] [--runs 1]

1. Seeds (once; reused on later runs) one database per size on the PostgreSQL of
   scripts/pg-up: `sandbox_jobs` with N rows, each with ~20 KB of incompressible JSON
   `stats` (md5 hex samples, so TOAST cannot shrink it), the gate's scores inside it.
2. For each size, in fresh child processes (one at a time, peak RSS = the child's own
   VmHWM read at its end), times:
     labctl gate --source postgres   named cursor, needed columns, server-side JSON paths
     labctl gate --source supabase   supabase-py against tests/fakes' PostgREST fake (in
                                     this process, so its memory is not the child's)
     naive psycopg                   `SELECT * FROM sandbox_jobs` + fetchall()
     naive supabase (smallest size)  `select("*")` paged by offset, every row kept
   and checks that both labctl sources return the same records.
3. Prints a table and the ratios: labctl vs naive, and each source's RSS at the largest
   size vs the smallest (flat = close to 1.0). Goal: peak RSS < 60 MB at every size.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fakes import gate_db  # noqa: E402
from fakes.postgrest import FakePostgrest  # noqa: E402

CONFIG = """[gate]
user = "alice"
[[gates]]
name = "bench"
table = "sandbox_jobs"
time_column = "finished_at"
partial = "partial"
[[gates.require]]
benchmark = "humaneval"
metric = "stats->'metrics'->>'pass@1'"
threshold = 0.5
[[gates.require]]
benchmark = "gsm8k"
metric = "stats->metrics->>accuracy"
threshold = 0.6
[[gates.require]]
benchmark = "toxicity"
metric = "score"
threshold = 0.1
direction = "lower"
"""

_HWM = """
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
"""

LABCTL_CHILD = (
    _HWM
    + """
import contextlib, io, json, sys, time
t0 = time.perf_counter()
from labctl.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = main({args!r})
wall = time.perf_counter() - t0
records = [json.loads(line) for line in out.getvalue().splitlines()]
rows = max((r.get("rows_read", 0) for r in records if r.get("kind") == "gate"), default=0)
print(json.dumps({{"wall": wall, "rc": rc, "rss_kb": hwm(), "rows": rows,
                   "records": records}}))
"""
)

NAIVE_PG = (
    _HWM
    + """
import json, time
t0 = time.perf_counter()
import psycopg
with psycopg.connect({conninfo!r}) as conn:
    rows = conn.execute("SELECT * FROM sandbox_jobs").fetchall()
wall = time.perf_counter() - t0
print(json.dumps({{"wall": wall, "rc": 0, "rss_kb": hwm(), "rows": len(rows)}}))
"""
)

NAIVE_SUPABASE = (
    _HWM
    + """
import json, time
t0 = time.perf_counter()
from supabase import create_client
sb = create_client({url!r}, "bench-key")
rows, start = [], 0
while True:
    page = sb.table("sandbox_jobs").select("*").range(start, start + 999).execute().data
    if not page:
        break
    rows.extend(page)
    start += len(page)
wall = time.perf_counter() - t0
print(json.dumps({{"wall": wall, "rc": 0, "rss_kb": hwm(), "rows": len(rows)}}))
"""
)


def child(code: str, env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, env=env, cwd=ROOT, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"child failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return json.loads(proc.stdout.decode().splitlines()[-1])


def best(runs: int, code: str, env: dict[str, str]) -> dict[str, Any]:
    results = [child(code, env) for _ in range(runs)]
    return min(results, key=lambda r: r["wall"]) | {"rss_kb": max(r["rss_kb"] for r in results)}


def measure(size: int, runs: int, config: Path, naive_supabase: bool) -> dict[str, dict[str, Any]]:
    dbname = f"labctl_gate_bench_{size}"
    t0 = time.perf_counter()
    fresh = gate_db.seeded(dbname) != size - len(gate_db.SCENARIO) - len(gate_db.BOB_ROWS)
    gate_db.ensure(
        dbname, size - len(gate_db.SCENARIO) - len(gate_db.BOB_ROWS), incompressible=True
    )
    if fresh:
        print(f"  seeded {dbname}: {size} rows in {time.perf_counter() - t0:.1f} s", flush=True)
    pg_env = {**os.environ, **gate_db.env(), "PGDATABASE": dbname}
    pg_env.pop("DATABASE_URL", None)
    out: dict[str, dict[str, Any]] = {}
    args = ["gate", "--config", str(config), "bench"]
    out["labctl postgres"] = best(runs, LABCTL_CHILD.format(args=args), pg_env)
    with FakePostgrest(gate_db.conninfo(dbname)) as fake:
        sb_env = {**pg_env, "SUPABASE_URL": fake.url, "SUPABASE_KEY": "bench-key"}
        out["labctl supabase"] = best(
            runs, LABCTL_CHILD.format(args=[*args, "--source", "supabase"]), sb_env
        )
        if naive_supabase:
            out["naive supabase select=*"] = best(1, NAIVE_SUPABASE.format(url=fake.url), pg_env)
    if out["labctl postgres"]["records"] != out["labctl supabase"]["records"]:
        raise SystemExit("the two sources disagree")
    out["naive SELECT * fetchall"] = best(
        1, NAIVE_PG.format(conninfo=gate_db.conninfo(dbname)), pg_env
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="9000,90000")
    ap.add_argument("--runs", type=int, default=1)
    opts = ap.parse_args()
    if not gate_db.env():
        raise SystemExit("PostgreSQL is not up: run scripts/pg-up")
    sizes = [int(s) for s in opts.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "gate.toml"
        config.write_text(CONFIG)
        results = {size: measure(size, opts.runs, config, size == sizes[0]) for size in sizes}
    print(f"\n{'rows':>7}  {'reader':<26} {'wall s':>8} {'peak RSS MB':>12} {'rows read':>10}")
    for size, by in results.items():
        for name, r in by.items():
            mb = r["rss_kb"] / 1024
            print(f"{size:>7}  {name:<26} {r['wall']:>8.2f} {mb:>12.1f} {r['rows']:>10}")
    print()
    for size, by in results.items():
        naive = by["naive SELECT * fetchall"]
        for name in ("labctl postgres", "labctl supabase"):
            r = by[name]
            print(
                f"{size:>7} rows: {name}: RSS {naive['rss_kb'] / r['rss_kb']:.1f}x smaller, "
                f"{naive['wall'] / r['wall']:.1f}x the speed of naive SELECT * + fetchall"
            )
    if len(sizes) > 1:
        lo, hi = results[sizes[0]], results[sizes[-1]]
        for name in ("labctl postgres", "labctl supabase", "naive SELECT * fetchall"):
            growth = hi[name]["rss_kb"] / lo[name]["rss_kb"]
            print(f"{name}: peak RSS x{growth:.2f} when rows grow x{sizes[-1] / sizes[0]:g}")
    worst = max(r["rss_kb"] for by in results.values() for n, r in by.items() if "labctl" in n)
    print(f"\nlabctl's worst peak RSS: {worst / 1024:.1f} MB (goal < 60 MB)")


if __name__ == "__main__":
    main()
