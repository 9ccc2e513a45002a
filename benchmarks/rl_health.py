#!/usr/bin/env python3
"""`labctl rl-health` on a huge RL log: bytes read, wall time and peak RSS stay bounded.

    .venv/bin/python benchmarks/rl_health.py [--size-gib 2] [--runs 3]

Writes a synthetic verl log of the given size into a temporary directory (deleted after):
one `(TaskRunner pid=N) step:N - key:value - ...` line per step (~1.9 KB, 60 metrics), with
Ray worker chatter between steps, a healthy run whose entropy collapses and whose reward
variance vanishes in the last 2% of steps (so the answer is KILL, found in the tail).

Then, each in a fresh child process (its peak RSS is its own: VmHWM of the child):

- baseline: the interpreter importing labctl.cli (the floor);
- rl-health: `labctl rl-health FILE` through the real CLI (default `[rl_health]` reads:
  1 MiB head, 8 samples x 256 KiB, 8 MiB tail, at most 16 MiB); bytes read = the child's
  `rchar` from /proc/self/io (every read syscall, imports included) and the record's own
  count of log bytes;
- the same with `max_read_bytes` 4 MiB.

It ends with the goal line: rl-health's worst peak RSS against the issue's 100 MB (meets /
MISSES).

Reference tools in the same run: `LC_ALL=C grep -c 'step:' FILE` (reads the whole file, as a
person checking the history by hand would) and `tail -c 16777216 FILE | grep -c 'step:'`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from progress_log import shell_time  # noqa: E402  (benchmarks/ is the script's directory)

MiB = 1 << 20
GOAL_RSS_BYTES = 100_000_000  # issue 20: "RSS < 100 MB" on a 2 GB log
KEYS = [f"perf/extra_{i}" for i in range(44)]


def generate(path: Path, size: int) -> int:
    """Write about `size` bytes of verl console output; returns the last step."""
    rng = random.Random(20)
    est_steps = size // 2000
    collapse_at = int(est_steps * 0.98)
    step = written = 0
    with path.open("wb", buffering=8 * MiB) as fh:
        while written < size:
            lines = []
            for _ in range(500):
                step += 1
                late = step >= collapse_at
                entropy = 0.004 + rng.random() * 0.004 if late else 0.45 + rng.random() * 0.1
                adv = 0.0 if late else 2.5
                extra = " - ".join(f"{k}:{rng.random():.3f}" for k in KEYS)
                lines.append(
                    f"(TaskRunner pid=4242) step:{step} - actor/entropy:{entropy:.4f} - "
                    f"actor/grad_norm:{0.2 + rng.random() * 0.2:.3f} - actor/kl_loss:0.004 - "
                    f"critic/score/mean:{0.6 + rng.random() * 0.05:.3f} - "
                    f"critic/advantages/max:{adv:.3f} - critic/advantages/min:{-adv:.3f} - "
                    f"response_length/mean:{400 + rng.random() * 40:.1f} - "
                    f"response_length/clip_ratio:0.010 - timing_s/step:{90 + rng.random() * 9:.2f}"
                    f" - {extra}\n"
                )
                if step % 3 == 0:
                    lines.append(f"(WorkerDict pid=5151) INFO: rank {step % 8} vllm step {step}\n")
            data = "".join(lines).encode()
            fh.write(data)
            written += len(data)
    return step


def proc_stats() -> dict[str, int]:
    out: dict[str, int] = {}
    with open("/proc/self/io") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            out[key] = int(value)
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                out["vmhwm_kib"] = int(line.split()[1])
    return out


def child(mode: str, path: str) -> None:
    if mode == "generate":
        start = time.perf_counter()
        last = generate(Path(path), int(os.environ["BENCH_SIZE"]))
        print(json.dumps({"seconds": time.perf_counter() - start, "last": last}))
        return
    import labctl.cli

    record: dict[str, object] = {}
    start = time.perf_counter()
    if mode != "baseline":
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = labctl.cli.main(["rl-health", path, "--format", "jsonl"])
        record = json.loads(buf.getvalue().splitlines()[0]) | {"rc": rc}
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "record": record, **proc_stats()}))


def run_child(mode: str, path: Path, env: dict[str, str]) -> dict[str, object]:
    cmd = [sys.executable, __file__, "--child", mode, str(path)]
    out = subprocess.run(cmd, capture_output=True, env=os.environ | env, check=False)
    if out.returncode:
        raise SystemExit(f"child {mode} failed: {out.stderr.decode()[-2000:]}")
    return json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-gib", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "FILE"))
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    with tempfile.TemporaryDirectory(prefix="labctl-rl-health-bench-") as tmp:
        path = Path(tmp) / "verl.log"
        gen = run_child("generate", path, {"BENCH_SIZE": str(int(args.size_gib * (1 << 30)))})
        size = path.stat().st_size
        print(f"log: {size / MiB:,.0f} MiB, {gen['last']:,} steps, generated in "
              f"{gen['seconds']:.1f} s")  # fmt: skip
        small = Path(tmp) / "small.toml"
        small.write_text("[rl_health]\nmax_read_bytes = 4194304\ntail_bytes = 2097152\n")
        cases = [("baseline (import labctl.cli)", "baseline", {}),
                 ("rl-health (defaults)", "rl-health", {}),
                 ("rl-health (max_read_bytes 4 MiB)", "rl-health",
                  {"LABCTL_CONFIG": str(small)})]  # fmt: skip
        print(f"{'case':34} {'wall s':>7} {'log MiB':>8} {'rchar MiB':>10} {'RSS MiB':>8}  result")
        worst_kib = 0
        for label, mode, env in cases:
            best = min((run_child(mode, path, env) for _ in range(args.runs)),
                       key=lambda r: r["seconds"])  # type: ignore[arg-type,return-value]  # fmt: skip
            rec = best["record"]
            read = (rec.get("bytes_read") or 0) / MiB  # type: ignore[union-attr]
            result = (f"{rec.get('recommendation')} {rec.get('reason')} "  # type: ignore[union-attr]
                      f"steps {rec.get('steps')}") if rec else ""  # fmt: skip
            rchar, rss = best["rchar"] / MiB, best["vmhwm_kib"] / 1024  # type: ignore[operator]
            if mode != "baseline":
                worst_kib = max(worst_kib, int(best["vmhwm_kib"]))  # type: ignore[call-overload]
            print(
                f"{label:34} {best['seconds']:7.3f} {read:8.2f} {rchar:10.2f} {rss:8.1f}  {result}"
            )
        for cmd in (f"LC_ALL=C grep -c 'step:' {path}",
                    f"tail -c 16777216 {path} | LC_ALL=C grep -c 'step:'"):  # fmt: skip
            secs = min(shell_time(cmd)[0] for _ in range(args.runs))
            label = cmd.replace(str(path), "FILE")
            read = size if cmd.startswith("LC_ALL") else 16 * MiB
            print(f"{label:34} {secs:7.3f} {read / MiB:8.2f}")
    print(goal_line(worst_kib))
    return 0


def goal_line(peak_kib: int) -> str:
    """The issue's memory goal against rl-health's worst peak RSS (decimal MB, as it says)."""
    mb = peak_kib * 1024 / 1e6
    verdict = "meets" if peak_kib * 1024 < GOAL_RSS_BYTES else "MISSES"
    return (
        f"goal: peak RSS < 100 MB -- rl-health's worst {mb:.1f} MB ({peak_kib / 1024:.1f} MiB): "
        f"{verdict}"
    )


if __name__ == "__main__":
    sys.exit(main())
