"""Benchmark `labctl supervise`: the overhead on a child printing lines as fast as it can.

    .venv/bin/python benchmarks/supervise.py [--lines 100000] [--runs 5]

In the same run, interleaved (min wall and min CPU seconds of the process tree over N runs,
each in a fresh process; on a shared machine CPU seconds are the steadier measure):
1. direct        the child alone, its stdout to a file (how it runs without labctl);
   tee           `child 2>&1 | tee log` (the usual way to watch and keep a job's output);
2. supervise     `labctl supervise -- <child>` (events to /dev/null, stderr not a
                 terminal: the output goes, redacted, to the attempt log only), with the peak
                 RSS (VmHWM) of the labctl process;
3. stream only   the same child through labctl.backends.child (select loop, sink, log
                 file) with redaction switched off, to separate the streaming machinery
                 from the redactor;
4. fixed cost    `labctl supervise -- true` against `true`.
Then, in this process: the redactor over the child's output as supervise runs it (complete
lines of each 64 KiB read in one call) and one call per line, to show what batching buys.
Goal (issue 10): supervise <= 1.2x the direct run's wall time, RSS < 60 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHILD = """
import random, sys
w = sys.stdout.write
for step in range({lines}):
    w(f"{{{{'loss': {{random.random() * 3:.4f}}, 'grad_norm': {{random.random() * 2:.4f}}, "
      f"'learning_rate': {{random.random() * 1e-4:.4e}}, 'epoch': {{step / 5000:.2f}}}}}}\\n")
"""

SUPERVISE = """
import sys
from labctl.cli import main
rc = main(sys.argv[1:])
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print(int(line.split()[1]), file=sys.stderr)
sys.exit(rc)
"""

STREAM = """
import os, sys, time
from pathlib import Path
from labctl.backends.child import Child, ChildSpec, Signals
spec = ChildSpec(sys.argv[2:], dict(os.environ), None, Path(sys.argv[1]), 3600.0, 5.0,
                 lambda text: text)
t = time.perf_counter()
with Signals() as signals:
    res = Child(spec).wait(signals)
print(time.perf_counter() - t, res.exit_code, file=sys.stderr)
"""


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def timed(argv: list[str], *, to: Path | None = None, env: dict | None = None):
    """(wall seconds, CPU seconds of the whole process tree, stderr) of one run."""
    with open(to or os.devnull, "wb") as out:
        t, c = time.perf_counter(), _cpu()
        proc = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, env=env, check=False)
        wall, cpu = time.perf_counter() - t, _cpu() - c
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:4]} failed ({proc.returncode}): {proc.stderr[-500:]!r}")
    return wall, cpu, proc.stderr.decode()


def redaction_cost(data: bytes) -> tuple[float, float]:
    """Seconds for the sink's batched redaction (64 KiB reads) and for one call per line."""
    import io

    from labctl.backends.sink import Sink
    from labctl.redact import Redactor

    red = Redactor.from_environ(os.environ)
    t = time.perf_counter()
    sink = Sink(io.BytesIO(), None, red.text)
    for i in range(0, len(data), 1 << 16):
        sink.feed(data[i : i + (1 << 16)])
    sink.close()
    batched = time.perf_counter() - t
    lines = data.decode().splitlines(keepends=True)
    t = time.perf_counter()
    for line in lines:
        red.text(line)
    return batched, time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    py = sys.executable
    work = Path(tempfile.mkdtemp(prefix="labctl-bench-supervise-"))
    child = work / "child.py"
    child.write_text(CHILD.format(lines=args.lines))
    env = dict(os.environ, LABCTL_STATE_DIR=str(work / "state"))
    cases = {
        "direct": lambda: timed([py, str(child)], to=work / "direct.log"),
        "supervise": lambda: timed(
            [py, "-c", SUPERVISE, "supervise", "-q", "--", py, str(child)], env=env
        ),
        "tee": lambda: timed(
            ["sh", "-c", f"{py} {child} 2>&1 | tee {work / 'tee.log'} >/dev/null"]
        ),
        "stream only": lambda: timed([py, "-c", STREAM, str(work / "s.log"), py, str(child)]),
        "true": lambda: timed(["true"]),
        "supervise true": lambda: timed(
            [py, "-c", SUPERVISE, "supervise", "-q", "--", "true"], env=env
        ),
    }
    walls: dict[str, list[float]] = {k: [] for k in cases}
    cpus: dict[str, list[float]] = {k: [] for k in cases}
    rss: list[int] = []
    for _ in range(args.runs):
        for name, run in cases.items():
            wall, cpu, err = run()
            walls[name].append(wall)
            cpus[name].append(cpu)
            if name == "supervise":
                rss.append(int(err.strip().splitlines()[-1]))
    best = {k: min(v) for k, v in walls.items()}
    cpu_best = {k: min(v) for k, v in cpus.items()}
    data = (work / "direct.log").read_bytes()
    batched, per_line = redaction_cost(data)
    out = {
        "lines": args.lines,
        "bytes": len(data),
        "runs": args.runs,
        "wall_s": {k: round(v, 3) for k, v in best.items()},
        "cpu_s": {k: round(v, 3) for k, v in cpu_best.items()},
        "cpu_ratio_supervise_vs_direct": round(cpu_best["supervise"] / cpu_best["direct"], 2),
        "ratio_supervise_vs_direct": round(best["supervise"] / best["direct"], 2),
        "ratio_stream_only_vs_direct": round(best["stream only"] / best["direct"], 2),
        "ratio_supervise_vs_tee": round(best["supervise"] / best["tee"], 2),
        "ratio_supervise_minus_fixed_vs_direct": round(
            (best["supervise"] - (best["supervise true"] - best["true"])) / best["direct"], 2
        ),
        "fixed_cost_s": round(best["supervise true"] - best["true"], 3),
        "redaction_s": {"batched_64k": round(batched, 3), "per_line": round(per_line, 3)},
        "supervise_peak_rss_mb": round(max(rss) / 1024, 1),
        "goal": {"ratio": 1.2, "rss_mb": 60},
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
