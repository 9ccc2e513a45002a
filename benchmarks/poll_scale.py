#!/usr/bin/env python3
"""Poll and the sweep at lab scale (issue 21): wall time, CPU and peak memory, ratios in one run.

    .venv/bin/python benchmarks/poll_scale.py [--jobs 1000] [--replay 10000] [--store 60000]
        [--repeat 5] [--user USER] [--no-slurm]

1. live (the local SLURM of scripts/slurm-up): --jobs finished jobs of one user (submitted
   now, a tenth of them failing with a CUDA OOM traceback on stderr), polled once to warm
   the store, then --repeat rounds, alternating in the same run:
     bare    the scheduler calls poll makes, run directly with the same argv and
             environment: `squeue --states=all` + the windowed `sacct`, one after another
             (and, for reference, at once, as poll's script runs them);
     poll    `labctl poll --since 2h` as a process (reports all of them);
     sweep   `labctl poll --since 2h | labctl diagnose | labctl table --format table`.
   Goals: poll <= 2x bare (in sequence); sweep <= 3x poll.
2. replay: sacct's real answer for those jobs (or a generated one with --no-slurm) renumbered
   to --replay jobs and served by stand-in squeue/sacct commands on the cluster's
   path_prepend, so poll's own path runs whole (script, parse, store, merge, emitter):
   a first poll (empty store) and steady polls. Goals: < 3 s and < 100 MB.
3. a lab's store: the same cluster whose store also holds --store finished jobs from three
   days ago (weeks of a lab's history), polled with an answer of 1,000 jobs, against the
   same poll with none of that history.

Every measured command is a fresh child process; peak RSS is its own (wait4's ru_maxrss),
CPU is user + system of the process and its children. The machine may be shared: wall
ratios are from alternating runs, CPU seconds are printed beside them.
"""

from __future__ import annotations

import argparse
import getpass
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from poll import sacct_text, time_calls  # noqa: E402

from labctl.backends.slurm_state import SlurmQuery, state_commands  # noqa: E402
from labctl.parse.slurm import SLURM_ENV  # noqa: E402

PY = [sys.executable, "-m", "labctl"]
FAIL = (
    'echo "step 1 loss 2.31"; echo "Traceback (most recent call last):" >&2; '
    'echo "  File \\"train.py\\", line 88, in <module>" >&2; '
    'echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 '
    'has a total capacity of 79.15 GiB of which 1.20 GiB is free." >&2; exit 1'
)


def measure(argv: list[str], env: dict[str, str], out: Path | None = None) -> dict[str, float]:
    t = time.perf_counter()
    with open(out or os.devnull, "wb") as fh:
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.DEVNULL, env=env)
        _, status, ru = os.wait4(proc.pid, 0)
    return {
        "wall": time.perf_counter() - t,
        "rss_mb": ru.ru_maxrss / 1024,
        "cpu": ru.ru_utime + ru.ru_stime,
        "rc": os.waitstatus_to_exitcode(status),
    }


def pipeline(stages: list[list[str]], env: dict[str, str]) -> dict[str, object]:
    t = time.perf_counter()
    procs: list[subprocess.Popen[bytes]] = []
    prev = None
    for i, argv in enumerate(stages):
        last = i == len(stages) - 1
        p = subprocess.Popen(
            argv,
            stdin=prev,
            stdout=subprocess.DEVNULL if last else subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        if prev is not None:
            prev.close()
        prev = p.stdout
        procs.append(p)
    rss, cpu = [], 0.0
    for p in procs:
        _, _, ru = os.wait4(p.pid, 0)
        rss.append(ru.ru_maxrss / 1024)
        cpu += ru.ru_utime + ru.ru_stime
    return {"wall": time.perf_counter() - t, "rss_mb": rss, "cpu": cpu}


def write_config(path: Path, user: str, prepend: Path | None = None) -> None:
    lines = ["[[clusters]]", 'name = "local"', f'users = ["{user}"]']
    if prepend is not None:
        lines.append(f'path_prepend = ["{prepend}"]')
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o600)


def as_user(user: str, argv: list[str]) -> list[str]:
    return argv if user == getpass.getuser() else ["runuser", "-u", user, "--", *argv]


def submit(user: str, n: int, logs: Path) -> str:
    """n jobs of `user`, a tenth failing; returns their name tag once all have finished."""
    tag = f"scale{os.getpid()}"
    env = {**os.environ, **SLURM_ENV}
    for i in range(n):
        wrap = FAIL if i % 10 == 3 else 'echo "step 1 reward 0.5"'
        kind = "sft" if i % 10 == 3 else "rl"
        argv = ["sbatch", "--parsable", "-J", f"{kind}-{tag}-{i}", f"--chdir={logs}",
                "-o", f"{logs}/%x-%j.out", "-e", f"{logs}/%x-%j.err", "--wrap", wrap]  # fmt: skip
        subprocess.run(as_user(user, argv), check=True, capture_output=True, env=env)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        argv = ["squeue", "-h", "-u", user, "-o", "%j"]
        out = subprocess.run(argv, check=False, capture_output=True, text=True, env=env).stdout
        if tag not in out:
            return tag
        time.sleep(2)
    raise SystemExit("benchmark jobs did not finish within 10 minutes")


def med(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def live(args: argparse.Namespace, work: Path) -> str | None:
    logs = work / "logs"
    logs.mkdir(mode=0o777)
    logs.chmod(0o777)
    t = time.perf_counter()
    submit(args.user, args.jobs, logs)
    print(f"live    {args.jobs} jobs of {args.user} submitted and finished in "
          f"{time.perf_counter() - t:.0f} s")  # fmt: skip
    config = work / "live.toml"
    write_config(config, args.user)
    env = {**os.environ, "LABCTL_CONFIG": str(config), "LABCTL_STATE_DIR": str(work / "state")}
    poll = [*PY, "poll", "--since", "2h"]
    first = measure(poll, env, work / "poll.jsonl")
    n = sum(1 for _ in (work / "poll.jsonl").open())
    print(f"        first poll: {first['wall']:.2f} s, {n} job records")
    query = SlurmQuery(users=(args.user,), since=time.time() - 7200)
    calls = [argv for _, argv in state_commands(query)]
    slurm_env = {**os.environ, **SLURM_ENV}
    bare, concurrent, polls, sweeps = [], [], [], []
    sweep = [poll, [*PY, "diagnose"], [*PY, "table", "--format", "table"]]
    for _ in range(args.repeat):
        sequential, at_once = time_calls(calls, slurm_env)
        bare.append(sequential)
        concurrent.append(at_once)
        polls.append(measure(poll, env))
        sweeps.append(pipeline(sweep, env))  # type: ignore[arg-type]
    b, c = statistics.median(bare), statistics.median(concurrent)
    p, s = med(polls, "wall"), statistics.median(x["wall"] for x in sweeps)
    print(f"        bare squeue + sacct ({len(calls)} calls): median {b:.3f} s in sequence, "
          f"{c:.3f} s at once")  # fmt: skip
    print(f"        labctl poll --since 2h: median {p:.3f} s (CPU {med(polls, 'cpu'):.2f} s), "
          f"peak RSS {med(polls, 'rss_mb'):.0f} MB = {p / b:.2f}x bare in sequence "
          f"({'meets' if p / b <= 2 else 'MISSES'} the 2x goal), {p / c:.2f}x at once")  # fmt: skip
    rss = [max(x["rss_mb"][i] for x in sweeps) for i in range(3)]  # type: ignore[index]
    print(f"        sweep poll | diagnose | table: median {s:.3f} s = {s / p:.2f}x poll "
          f"({'meets' if s / p <= 3 else 'MISSES'} the 3x goal); peak RSS per stage "
          f"{', '.join(f'{r:.0f}' for r in rss)} MB")  # fmt: skip
    return subprocess.run(
        calls[-1], check=False, capture_output=True, text=True, env=slurm_env
    ).stdout


def renumber(answer: str, jobs: int) -> str:
    """sacct's answer for n jobs, repeated with fresh ids until it holds `jobs` jobs."""
    rows = [r for r in answer.splitlines() if r]
    allocations = sum(1 for r in rows if "." not in r.split("\x1f", 1)[0])
    out: list[str] = []
    for k in range(-(-jobs // max(1, allocations))):
        for row in rows:
            cells = row.split("\x1f")
            head = cells[0].split(".")[0]
            new = str(int(head) + 1_000_000 * (k + 1))
            cells[0], cells[1] = cells[0].replace(head, new, 1), cells[1].replace(head, new, 1)
            out.append("\x1f".join(cells))
    kept, count = [], 0
    for row in out:
        if "." not in row.split("\x1f", 1)[0]:
            count += 1
            if count > jobs:
                break
        kept.append(row)
    return "\n".join(kept) + "\n"


def stand_ins(work: Path, answer: str) -> Path:
    bin_dir = work / "bin"
    bin_dir.mkdir()
    (work / "answer.txt").write_text(answer)
    (bin_dir / "squeue").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "sacct").write_text(
        f'#!/bin/sh\ncase "$*" in *--jobs=*) exit 0;; esac\nexec cat {work / "answer.txt"}\n'
    )
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    return bin_dir


def replay(args: argparse.Namespace, work: Path, answer: str) -> None:
    text = renumber(answer, args.replay)
    rdir = work / "replay"
    rdir.mkdir()
    config = rdir / "config.toml"
    write_config(config, args.user, stand_ins(rdir, text))
    env = {**os.environ, "LABCTL_CONFIG": str(config), "LABCTL_STATE_DIR": str(rdir / "state")}
    poll = [*PY, "poll", "--since", "2h"]
    first = measure(poll, env, rdir / "out.jsonl")
    n = sum(1 for _ in (rdir / "out.jsonl").open())
    steady = [measure(poll, env) for _ in range(args.repeat)]
    print(f"replay  {n} jobs ({text.count(chr(10))} sacct rows, {len(text) / 1e6:.1f} MB) "
          "through stand-in squeue/sacct:")  # fmt: skip
    for label, runs in (("first poll (empty store)", [first]), ("steady poll", steady)):
        w, r = med(runs, "wall"), med(runs, "rss_mb")
        ok = "meets" if w < 3 and r < 100 else "MISSES"
        print(f"        {label}: {w:.2f} s (CPU {med(runs, 'cpu'):.2f} s), peak RSS {r:.0f} MB "
              f"({ok} < 3 s and < 100 MB)")  # fmt: skip


def history(args: argparse.Namespace, work: Path, answer: str) -> None:
    from labctl.poll.model import StoredJob
    from labctl.poll.store import Store

    text = renumber(answer, 1000)
    results = {}
    for label, old in (("no history", 0), (f"{args.store:,} finished jobs of earlier days", 1)):
        hdir = work / f"history{old}"
        hdir.mkdir()
        config = hdir / "config.toml"
        write_config(config, args.user, stand_ins(hdir, text))
        env = {**os.environ, "LABCTL_CONFIG": str(config), "LABCTL_STATE_DIR": str(hdir / "s")}
        poll = [*PY, "poll"]
        measure(poll, env)
        if old:
            store = Store(hdir / "s" / "poll.sqlite")
            some = next(iter(store.jobs("local").values()))
            past = time.time() - 3 * 86400
            with store.transaction():
                for start in range(0, args.store, 5000):
                    store.put_jobs("local", [
                        StoredJob(**{**some.fields(), "key": (str(9_000_000 + i), -1, 1),
                                     "job_id": str(9_000_000 + i), "last_seen": past,
                                     "first_seen": past, "active": False, "terminal": True})
                        for i in range(start, min(args.store, start + 5000))
                    ])  # fmt: skip
            store.close()
        runs = [measure(poll, env) for _ in range(args.repeat)]
        results[label] = runs
        print(f"store   steady poll of 1,000 jobs, store with {label}: {med(runs, 'wall'):.2f} s, "
              f"peak RSS {med(runs, 'rss_mb'):.0f} MB")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--replay", type=int, default=10_000)
    ap.add_argument("--store", type=int, default=60_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--user", default=getpass.getuser())
    ap.add_argument("--no-slurm", action="store_true", help="replay a generated answer only")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="labctl-scale-"))
    work.chmod(0o755)
    try:
        answer = None if args.no_slurm or not shutil.which("sbatch") else live(args, work)
        if not answer:
            # 1,000 jobs that ended within the last hours (--since 2h reports them all)
            answer = sacct_text(4 * 1000, t0=int(time.time()) - 7000)
        replay(args, work, answer)
        history(args, work, answer)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
