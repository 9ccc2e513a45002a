"""Benchmark what issue 22 adds to every poll: checking the state store when it is opened,
and the fallback copy in memory when the state dir takes no write.

    .venv/bin/python benchmarks/poll_state.py [--jobs 1000 10000] [--runs 5]

For a store of N jobs (records shaped like poll's, ~1 KB of JSON each), in a fresh child
process per run (min of --runs, CPU seconds: the machine is shared; peak RSS from the
child's rusage), the phases of a poll's start:

  open        Store(path)
  check       Store.check(): SQLite's quick_check (what issue 22 adds to every poll)
  read        reading every job (what a poll does anyway)
  memory      the unsaved fallback: the file's bytes copied into memory and checked
  sqlite3     the reference tool, whole process: `sqlite3 FILE 'PRAGMA quick_check'`

and the ratios check / (open + read) and check / sqlite3.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PYTHON = sys.executable
READ = """
import json, sys, time
from pathlib import Path
from labctl.poll.store import Store
path = Path(sys.argv[1])
t = [time.process_time()]
store = Store(path)
t.append(time.process_time())
store.check()
t.append(time.process_time())
assert len(store.jobs("c1")) > 0
t.append(time.process_time())
store.close()
memory = Store.in_memory(path.read_bytes())
memory.check()
t.append(time.process_time())
print(json.dumps(dict(zip(("open", "check", "read", "memory"), (b - a for a, b in zip(t, t[1:]))))))
"""


def build(path: Path, n: int) -> None:
    from labctl.poll.model import StoredJob
    from labctl.poll.store import Store

    record = {
        "kind": "job",
        "cluster": "c1",
        "name": "rl-grpo-qwen7b-seed1",
        "state": "RUNNING",
        "verdict": "running-progressing",
        "stdout": "/scratch/alice/runs/rl-grpo-qwen7b/slurm-%j.out",
        "progress": {
            "counter": "step",
            "value": 1180,
            "metrics": {"m" + str(i): i for i in range(60)},
        },
    }
    store = Store(path)
    with store.transaction():
        store.put_jobs(
            "c1",
            [
                StoredJob(
                    key=(str(100000 + i), -1, 1796000000 + i),
                    job_id=str(100000 + i),
                    array_job_id=None,
                    first_seen=1.0,
                    last_seen=2.0,
                    verdict="running-progressing",
                    terminal=False,
                    active=i % 3 == 0,
                    stdout=str(record["stdout"]),
                    stderr=None,
                    record={**record, "job_id": str(i)},
                    progress={"offset": i * 1000, "value": 1180},
                )
                for i in range(n)
            ],
        )
        store.cluster_ok("c1", 2.0, 2.0)
    store.close()


def child(argv: list[str]) -> tuple[str, float, int]:
    """(stdout, CPU seconds, peak RSS in KiB) of one child process."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, argv
    return out, usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss)


def phases(path: Path, runs: int) -> tuple[dict[str, float], int]:
    results = [child([PYTHON, "-c", READ, str(path)]) for _ in range(runs)]
    times = [json.loads(out) for out, _, _ in results]
    return {k: min(t[k] for t in times) for k in times[0]}, max(r[2] for r in results)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if shutil.which("sqlite3") is None:
        sys.exit("the reference tool sqlite3 is not installed (apt-get install sqlite3)")
    tmp = Path(tempfile.mkdtemp(prefix="lc-bench-state-"))
    try:
        for n in args.jobs:
            path = tmp / f"poll-{n}.sqlite"
            build(path, n)
            size = path.stat().st_size
            best, rss = phases(path, args.runs)
            ref = [child(["sqlite3", str(path), "PRAGMA quick_check"]) for _ in range(args.runs)]
            best["sqlite3"] = min(r[1] for r in ref)
            print(f"\n{n} jobs, store {size / 1e6:.1f} MB (CPU ms, min of {args.runs})")
            for phase, cpu in best.items():
                print(f"  {phase:<8} {cpu * 1000:8.1f} ms")
            print(f"  peak RSS: labctl child {rss / 1024:.1f} MiB, sqlite3 "
                  f"{max(r[2] for r in ref) / 1024:.1f} MiB")  # fmt: skip
            print(f"  check / (open + read) {best['check'] / (best['open'] + best['read']):.2f}x")
            print(f"  check / sqlite3       {best['check'] / best['sqlite3']:.2f}x")
            print(json.dumps({"jobs": n, "bytes": size, **best}))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
