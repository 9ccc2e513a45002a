#!/usr/bin/env python3
"""Start-up time of labctl against `python -c "import typer"`, in the same run.

    .venv/bin/python benchmarks/startup.py [--runs 40]

Runs each command many times (interleaved, so machine noise hits all alike), prints the
median wall time and the ratio to the typer import. Goals (issue 2): `labctl --version`
<= 1.3x and `labctl table --help` <= 1.6x.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

GOALS = {"labctl --version": 1.3, "labctl table --help": 1.6}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    py = sys.executable
    labctl = shutil.which("labctl", path=str(Path(py).parent)) or "labctl"
    cases = {
        'python -c "import typer"': [py, "-c", "import typer"],
        "labctl --version": [labctl, "--version"],
        "labctl --help": [labctl, "--help"],
        "labctl table --help": [labctl, "table", "--help"],
        "labctl schema table": [labctl, "schema", "table"],
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(3):  # warm the page cache
        for cmd in cases.values():
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    for _ in range(args.runs):
        for name, cmd in cases.items():
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times['python -c "import typer"'])
    failed = False
    print(f"{'command':28} {'median ms':>10} {'ratio':>7}  goal")
    for name, samples in times.items():
        med = statistics.median(samples)
        ratio = med / base
        goal = GOALS.get(name)
        verdict = ""
        if goal:
            verdict = f"<= {goal}x {'ok' if ratio <= goal else 'MISSED'}"
            failed |= ratio > goal
        print(f"{name:28} {med * 1000:10.1f} {ratio:7.2f}  {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
