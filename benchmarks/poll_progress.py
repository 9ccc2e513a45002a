#!/usr/bin/env python3
"""`labctl poll` on a running job whose training log is 2 GB: memory stays bounded.

    .venv/bin/python benchmarks/poll_progress.py [--size-gib 2] [--append-mib 256]

Generates an HF-Trainer-style log (tqdm `\\r` frames and metric dicts; the generator of
benchmarks/progress_log.py) and a `command`-scheduler cluster whose one RUNNING job writes
it, then runs the real CLI (`python -m labctl poll`) in child processes, each one's peak
RSS taken from wait4, through poll's own path (the cluster script's bounded `tail | head`
read, the scan, the state store):

- baseline: a poll of the same cluster with progress reading off;
- first sight: the first poll reads the log's 256 KiB tail;
- after +N MiB: the log grew by `--append-mib`; the poll reads only the newest
  progress.max_read_bytes (4 MiB) of them;
- steady: the next poll, a few KiB new.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
MiB = 1 << 20


def write_config(tmp: Path, log: Path, progress: bool) -> Path:
    rows = tmp / "rows.json"
    rows.write_text(json.dumps([{"id": "big-1", "name": "sft-huge-log", "status": "RUNNING",
                                 "log": str(log), "started": time.time() - 3600}]))  # fmt: skip
    cfg = tmp / ("config.toml" if progress else "config-off.toml")
    cfg.write_text(
        f"[progress]\nenabled = {'true' if progress else 'false'}\nwandb_files = false\n"
        "[[clusters]]\n"
        'name = "bench"\nscheduler = "command"\n'
        f'command = "cat {rows}"\n'
        'fields = { job_id = "id", state = "status", stdout = "log", start_time = "started" }\n'
        'states = { RUNNING = "running" }\n'
    )
    return cfg


def run_poll(config: Path, state: Path) -> tuple[dict[str, object], float, float]:
    env = {**os.environ, "LABCTL_STATE_DIR": str(state), "LABCTL_FORMAT": "jsonl"}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "labctl", "poll", "--config", str(config)],
        stdout=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, _status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    job = next(json.loads(line) for line in out.splitlines() if b'"kind":"job"' in line)
    return job, seconds, usage.ru_maxrss / 1024


def append(path: Path, mib: int, step: int) -> int:
    """Training goes on: tqdm frames (and a metric dict every 50) from `step` on."""
    from progress_log import BARS, TOTAL_STEPS

    written = 0
    with path.open("ab", buffering=8 * MiB) as out:
        while written < mib * MiB:
            lines = []
            for _ in range(50):
                step += 1
                pct = step * 100 // TOTAL_STEPS
                lines.append(f"\r{pct:3d}%|{BARS[pct]}| {step}/{TOTAL_STEPS} "
                             "[01:00:00<99:00:00,  3.01it/s]")  # fmt: skip
            lines.append(f"\r{{'loss': 0.5, 'grad_norm': 0.97, 'epoch': {step / 2e7:.2f}}}\n")
            data = "".join(lines).encode()
            out.write(data)
            written += len(data)
    return step


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-gib", type=float, default=2.0)
    parser.add_argument("--append-mib", type=int, default=256)
    args = parser.parse_args()
    from progress_log import generate

    with tempfile.TemporaryDirectory(prefix="labctl-poll-progress-") as tmp_s:
        tmp = Path(tmp_s)
        log = tmp / "train.log"
        t = time.perf_counter()
        generate(log, int(args.size_gib * (1 << 30)))
        took = time.perf_counter() - t
        print(f"log: {log.stat().st_size / MiB:,.0f} MiB, written in {took:.0f} s")
        off = write_config(tmp, log, progress=False)
        on = write_config(tmp, log, progress=True)
        print(f"{'case':26} {'seconds':>8} {'peak RSS MiB':>13}  verdict, progress")
        rows = [("baseline (progress off)", off, None), ("first sight", on, None),
                (f"after +{args.append_mib} MiB", on, args.append_mib),
                ("steady (+1 MiB)", on, 1)]  # fmt: skip
        step = 0
        for label, config, grow in rows:
            if grow:
                step = append(log, grow, step)
            job, secs, rss = run_poll(config, tmp / "state")
            p = job.get("progress") or {}
            step = int(p.get("value") or step) if not grow else step
            detail = f"{job['verdict']}, {p.get('counter')} {p.get('value')}"
            detail += f", read {p.get('log_bytes_read')} B" if p else ""
            print(f"{label:26} {secs:8.2f} {rss:13.1f}  {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
