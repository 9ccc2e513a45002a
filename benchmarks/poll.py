"""Benchmark `labctl poll`: the sacct parser, and a whole poll against its bare SLURM calls.

    .venv/bin/python benchmarks/poll.py [--rows 20000] [--jobs 200] [--repeat 7] [--no-slurm]

1. Parse: 20,000 sacct `--parsable2` rows (5,000 jobs: allocation, .batch, .extern, .0;
   a quarter FAILED/CANCELLED, names with spaces and `|`, SubmitLines) through exactly
   what poll runs (`rejoin_rows` + `sacct_jobs`) and then through the poll adapter's
   combine and the merge into records. Reports rows/s and the tracemalloc peak.
2. A whole poll of the local SLURM (scripts/slurm-up) holding `--jobs` jobs of ours
   (80 % finished, 20 % held), in steady state (the store already knows them), against
   the bare `squeue` + `sacct` calls that same poll makes, run directly with the same
   argv and environment, in the same run. Reports medians and the ratio (goal <= 1.3).
   The poll is timed in-process (`labctl.poll.core.run`: store, both cluster scripts,
   parse, merge, log stat) and, for reference, as a CLI process (adds Python start-up).
"""

from __future__ import annotations

import argparse
import getpass
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from labctl.backends.script import LOGIN_USER
from labctl.backends.slurm_state import SlurmQuery, rejoin_rows, state_commands
from labctl.cluster.config import ClusterConfig
from labctl.cluster.slurm import combine
from labctl.cluster.snapshot import Snapshot
from labctl.parse.slurm import SACCT_FIELDS, SLURM_ENV, sacct_jobs
from labctl.poll.core import PollSettings, run
from labctl.poll.known import known_for
from labctl.poll.merge import merge
from labctl.poll.store import Store

D = "\x1f"


def sacct_text(rows: int, seed: int = 7, t0: int = 1_796_000_000) -> str:
    rnd = random.Random(seed)
    lines: list[str] = []
    for n in range(rows // 4):
        jid = str(100_000 + n)
        state, code = rnd.choice(
            [("COMPLETED", "0:0")] * 6 + [("FAILED", "3:0"), ("CANCELLED by 0", "0:15")]
        )
        sub, start = t0 + n, t0 + n + rnd.randint(1, 600)
        end = start + rnd.randint(10, 90_000)
        name = rnd.choice(["rl-grpo qwen7b", "sft|lr=3e-4", "eval mmlu", "datagen"]) + f"-{n}"
        submit = f"sbatch -J {name} -o logs/%x-%j.out --time=1-00:00:00 train.sh"
        common = [str(sub), str(sub), str(start), str(end), str(end - start)]
        lines.append(D.join([jid, jid, state, code, "0:0", "None", *common, "1-00:00:00",
                             "1440", "00:00:00", "gpu[001-002]", "2", "gpu", "alice", "1000",
                             "lab", "/home/alice/run", submit, name]))  # fmt: skip
        for step in ("batch", "extern", "0"):
            st = state.split()[0] if step != "extern" else "COMPLETED"
            lines.append(D.join([f"{jid}.{step}", f"{jid}.{step}", st, code, "", "", *common,
                                 "", "", "00:00:00", "gpu001", "1", "", "", "", "lab", "", "",
                                 step]))  # fmt: skip
    return "\n".join(lines) + "\n"


def bench_parse(rows: int, repeat: int) -> None:
    text = sacct_text(rows)
    n = text.count("\n")
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        jobs = sacct_jobs(rejoin_rows(text, len(SACCT_FIELDS)))
        times.append(time.perf_counter() - t)
    best = statistics.median(times)
    tracemalloc.start()
    jobs = sacct_jobs(rejoin_rows(text, len(SACCT_FIELDS)))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    n_jobs = len(jobs)
    t = time.perf_counter()
    snap = Snapshot(now=2e9, jobs=combine([], jobs))  # consumes `jobs`
    merged = merge("c", "slurm", snap, {}, now=2e9, since_cut=None, forget_after_s=3600)
    merge_s = time.perf_counter() - t
    print(f"parse   {n} sacct rows ({n_jobs} jobs, {len(text) / 1e6:.1f} MB): "
          f"median {best * 1000:.0f} ms = {n / best:,.0f} rows/s; "
          f"tracemalloc peak {peak / 1e6:.1f} MB")  # fmt: skip
    print(f"        + combine/merge into {len(merged.records)} records: {merge_s * 1000:.0f} ms")


def time_calls(calls: list[list[str]], env: dict[str, str]) -> tuple[float, float]:
    """Seconds the scheduler calls take run directly: one after another, and all at once."""
    t = time.perf_counter()
    for argv in calls:
        subprocess.run(argv, check=False, capture_output=True, env=env)
    sequential = time.perf_counter() - t
    t = time.perf_counter()
    procs = [subprocess.Popen(a, stdout=subprocess.PIPE, env=env) for a in calls]
    for p in procs:
        p.communicate()
    return sequential, time.perf_counter() - t


def sh(*argv: str) -> str:
    env = {**os.environ, **SLURM_ENV}
    return subprocess.run(argv, check=True, capture_output=True, text=True, env=env).stdout


def submit(n: int, workdir: Path, tag: str) -> list[str]:
    ids = []
    for i in range(n):
        held = ["--hold"] if i % 5 == 4 else []
        out = sh("sbatch", "--parsable", f"--chdir={workdir}", "-J", f"{tag}-{i}", *held,
                 "--wrap", "true")  # fmt: skip
        ids.append(out.strip())
    deadline = time.monotonic() + 300
    while True:
        left = sh("squeue", "-h", "-n", ",".join(f"{tag}-{i}" for i in range(n)), "-t", "R,PD,CG",
                  "-o", "%i %r")  # fmt: skip
        busy = [ln for ln in left.splitlines() if "JobHeldUser" not in ln]
        if not busy:
            return ids
        if time.monotonic() > deadline:
            raise SystemExit(f"{len(busy)} benchmark jobs still not finished")
        time.sleep(1)


def bench_poll(jobs: int, repeat: int) -> None:
    tag = f"bench{os.getpid()}"
    workdir = Path(tempfile.mkdtemp(prefix="labctl-bench-"))
    workdir.chmod(0o777)
    state = Path(tempfile.mkdtemp(prefix="labctl-bench-state-"))
    cluster = ClusterConfig(name="local", skip=())
    settings = PollSettings(lookback_s=900)
    t = time.perf_counter()
    ids = submit(jobs, workdir, tag)
    print(f"poll    {jobs} jobs submitted and settled in {time.perf_counter() - t:.0f} s")
    try:
        first = list(run([cluster], state_dir=state, settings=settings))
        mine = [r for r in first if r.get("kind") == "job" and r["job_id"] in set(ids)]
        total = sum(1 for r in first if r.get("kind") == "job")
        print(f"        first poll: {len(mine)} of our jobs, {total} job records in all")
        store = Store(state / "poll.sqlite")
        known = known_for(store, cluster, settings, time.time())
        store.close()
        query = SlurmQuery(known_ids=known.active_ids, since=known.since)
        me = getpass.getuser()
        calls = [[a.replace(LOGIN_USER, me) for a in argv] for _, argv in state_commands(query)]
        poll_s, bare_s, par_s, cli_s = [], [], [], []
        env_slurm = {**os.environ, **SLURM_ENV}
        cli = [sys.executable, "-m", "labctl", "poll", "--format", "jsonl"]
        env = {**os.environ, "LABCTL_STATE_DIR": str(state / "cli")}
        subprocess.run(cli, capture_output=True, env=env, check=False)  # warm its store
        for _ in range(repeat):
            sequential, concurrent = time_calls(calls, env_slurm)
            bare_s.append(sequential)
            par_s.append(concurrent)
            t = time.perf_counter()
            list(run([cluster], state_dir=state, settings=settings))
            poll_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run(cli, capture_output=True, env=env, check=False)
            cli_s.append(time.perf_counter() - t)
        bare, par, whole, proc = (statistics.median(x) for x in (bare_s, par_s, poll_s, cli_s))
        print(f"        bare calls ({len(calls)}: squeue + {len(calls) - 1} sacct): "
              f"median {bare * 1000:.0f} ms one after another, {par * 1000:.0f} ms "
              "all at once")  # fmt: skip
        print(f"        poll (in-process, steady state): median {whole * 1000:.0f} ms "
              f"= {whole / bare:.2f}x the bare calls in sequence (goal <= 1.3x), "
              f"{whole / par:.2f}x them run concurrently as poll does")  # fmt: skip
        print(f"        labctl poll as a process: median {proc * 1000:.0f} ms = "
              f"{proc / bare:.2f}x (adds interpreter start-up)")  # fmt: skip
        tracemalloc.start()
        list(run([cluster], state_dir=state, settings=settings))
        print(f"        poll tracemalloc peak {tracemalloc.get_traced_memory()[1] / 1e6:.1f} MB")
        tracemalloc.stop()
    finally:
        held = [j for i, j in enumerate(ids) if i % 5 == 4]
        if held:
            subprocess.run(["scancel", *held], check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-slurm", action="store_true", help="only the parser benchmark")
    args = ap.parse_args()
    bench_parse(args.rows, args.repeat)
    if not args.no_slurm:
        bench_poll(args.jobs, args.repeat)


if __name__ == "__main__":
    main()
