"""Benchmark prune-disk's disk usage walker against `du -sxB1` on a 200,000-file tree.

    .venv/bin/python benchmarks/prune_disk.py [--files 200000] [--repeat 7] [--dir DIR]

Builds (once, kept in DIR between runs) a deterministic tree: ~2,000 folders of 100
files of 0 B to 64 kB, every 50th file hard-linked into another folder, every 100th
folder holding a symlink out of the tree. Then, after one warm-up `du`, it alternates in
the same process tree, `--repeat` times:

- `du -sxB1 TREE` (GNU du: allocated blocks, hard links once, one file system);
- `labctl.disk.usage.disk_usage(TREE)` in a fresh Python child, once with one process
  and once split across the CPUs (`--workers`, default: one per CPU, at most 4).

Every run's byte count must equal du's (the script fails otherwise). It prints median
wall times (the walk alone, measured inside the child, and the child's whole life with
Python start-up), the ratio to du, and peak RSS: `ru_maxrss` of each child from wait4
and, for the walker, VmHWM from its /proc status. The page cache is warm (dropping it
would disturb everything else on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHILD = """
import json, sys, time
from labctl.disk.usage import disk_usage
t = time.perf_counter()
u = disk_usage(sys.argv[1], workers=int(sys.argv[2]))
walk = time.perf_counter() - t
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"bytes": u.bytes, "files": u.files, "dirs": u.dirs, "walk": walk,
                  "hwm_kb": hwm, "errors": u.error_count}))
"""


def build(tree: Path, files: int) -> None:
    """A deterministic tree of `files` files (kept: building takes longer than walking)."""
    marker = tree / ".complete"
    if marker.exists() and marker.read_text() == str(files):
        return
    if tree.exists():
        shutil.rmtree(tree)
    rng = random.Random(13)
    sizes = [0, 100, 700, 3000, 4096, 5000, 12_000, 20_000, 65_536]
    made = 0
    folder = 0
    while made < files:
        d = tree / f"run{folder // 40:03d}" / f"step{folder % 40:02d}"
        d.mkdir(parents=True, exist_ok=True)
        for i in range(100):
            if made >= files:
                break
            p = d / f"shard{i:03d}.jsonl"
            with open(p, "wb") as fh:
                fh.write(b"r" * rng.choice(sizes))
            if made % 50 == 49:
                os.link(p, tree / f"run{folder // 80:03d}" / f"link{made}.jsonl")
                made += 1  # a link is a directory entry du and labctl both see
            made += 1
        if folder % 100 == 0:
            (d / "outside").symlink_to("/usr/share")
        folder += 1
    marker.write_text(str(files))


def run_child(argv: list[str]) -> tuple[float, str, int, float]:
    """Wall time, stdout, peak RSS (kB) and CPU seconds (user + system, its waited-for
    helpers included) of one child process, from wait4."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t
    return wall, out, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "labctl-bench-prune"))
    ap.add_argument("--workers", type=int, default=min(4, len(os.sched_getaffinity(0))))
    args = ap.parse_args()
    tree = Path(args.dir) / "tree"
    t = time.perf_counter()
    build(tree, args.files)
    print(f"tree: {tree} ({args.files:,} files, built/checked in {time.perf_counter() - t:.1f} s)")
    du_cmd = ["du", "-sxB1", str(tree)]
    run_child(du_cmd)  # warm the page cache
    times: dict[str, list[float]] = {"du": [], "labctl-1": [], "labctl-N": []}
    cpu: dict[str, list[float]] = {"du": [], "labctl-1": [], "labctl-N": []}
    walks: dict[str, list[float]] = {"labctl-1": [], "labctl-N": []}
    rss: dict[str, int] = {}
    hwm: dict[str, int] = {}
    for _ in range(args.repeat):
        wall, out, maxrss, secs = run_child(du_cmd)
        du_bytes = int(out.split()[0])
        times["du"].append(wall)
        cpu["du"].append(secs)
        rss["du"] = max(rss.get("du", 0), maxrss)
        for name, workers in (("labctl-1", 1), ("labctl-N", args.workers)):
            wall, out, maxrss, secs = run_child(
                [sys.executable, "-c", CHILD, str(tree), str(workers)]
            )
            got = json.loads(out)
            if got["bytes"] != du_bytes:
                print(f"MISMATCH {name}: labctl {got['bytes']} != du {du_bytes}")
                return 1
            times[name].append(wall)
            cpu[name].append(secs)
            walks[name].append(got["walk"])
            rss[name] = max(rss.get(name, 0), maxrss)
            hwm[name] = max(hwm.get(name, 0), got["hwm_kb"])
    du_med = statistics.median(times["du"])
    print(f"bytes: {du_bytes:,} (du -sxB1 and labctl equal on every run: "
          f"{args.repeat * 2} comparisons)")  # fmt: skip
    print(f"load average at the end: {Path('/proc/loadavg').read_text().split()[:3]}")
    du_cpu = statistics.median(cpu["du"])
    head = f"{'':10} {'walk (s)':>9} {'ratio':>6} {'process (s)':>12} {'ratio':>6}"
    print(f"{head} {'CPU (s)':>8} {'ratio':>6} {'peak RSS':>10}")
    print(f"{'du':10} {'':>9} {'':>6} {du_med:12.3f} {1:6.2f} {du_cpu:8.3f} {1:6.2f} "
          f"{rss['du'] / 1024:8.1f}MB")  # fmt: skip
    for name in ("labctl-1", "labctl-N"):
        w, p = statistics.median(walks[name]), statistics.median(times[name])
        c = statistics.median(cpu[name])
        label = name if name == "labctl-1" else f"labctl-{args.workers}"
        print(f"{label:10} {w:9.3f} {w / du_med:6.2f} {p:12.3f} {p / du_med:6.2f} "
              f"{c:8.3f} {c / du_cpu:6.2f} {hwm[name] / 1024:8.1f}MB")  # fmt: skip
    print("ratio = median time / median du wall time; walk = disk_usage() alone; process =")
    print("the child's whole life (Python start-up and imports included); CPU = user + system")
    print("time of the child and its helpers; peak RSS = VmHWM of the walker (its forked")
    print("helpers are smaller) and ru_maxrss of du. Wall ratios need idle CPUs: on a loaded")
    print("machine the split cannot run in parallel; compare the CPU column there.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
