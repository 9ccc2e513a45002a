"""Benchmark `labctl migrate-experiment --apply` across file systems against `cp -a` +
`sha256sum -c` + `rm -rf` (the hand-made safe move), on the same tree, same machine.

    sudo .venv/bin/python benchmarks/migrate_experiment.py [--mb 512] [--files 400] [--runs 3]

The experiment folder (on the root file system) holds one big checkpoint (half of --mb)
and --files small result files sharing the other half; the destination `complete/` is a
tmpfs mount, so the move is a copy. labctl copies, fsyncs, hashes source and copy
(sha256), renames into place and deletes the source; the reference copies with `cp -a`,
hashes both sides with `sha256sum` and deletes with `rm -rf` (no fsync: it is faster than
what labctl promises). Times are the minimum of --runs, each in a fresh child; peak RSS
is the child tree's largest resident set (wait4's ru_maxrss, which is VmHWM's value).
Needs root (the tmpfs mount); the page cache is warm for both (same files, rebuilt).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LABCTL = [sys.executable, "-m", "labctl"]


def make_tree(exp: Path, mb: int, files: int) -> None:
    (exp / "runs").mkdir(parents=True)
    half = mb * (1 << 20) // 2
    with open(exp / "ckpt.bin", "wb") as fh:
        for _ in range(half // (1 << 20)):
            fh.write(os.urandom(1 << 20))
    each = max(1, half // files)
    for i in range(files):
        (exp / "runs" / f"trial-{i:04d}.jsonl").write_bytes(os.urandom(each))


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    """(wall seconds, peak RSS KiB of the child tree) of one run."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(
            f"{argv[:3]} failed: {proc.stderr.read().decode()[-500:] if proc.stderr else ''}"
        )
    return wall, usage.ru_maxrss


REFERENCE = r"""set -e
cp -a "$1" "$2"
(cd "$1" && find . -type f -print0 | xargs -0 sha256sum) > "$3"
(cd "$2" && sha256sum --quiet -c "$3")
rm -rf "$1"
"""


def one_run(base: Path, tool: str, args: argparse.Namespace) -> tuple[float, int]:
    root = base / tool / "experiments"
    exp = root / "active" / "exp1"
    make_tree(exp, args.mb, args.files)
    (root / "complete").mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={args.mb * 2}m", "tmpfs",
                    str(root / "complete")], check=True)  # fmt: skip
    try:
        env = dict(os.environ)
        if tool == "labctl":
            (base / tool / "jobs.jsonl").write_text("")
            env.update(
                LABCTL_STATE_DIR=str(base / tool / "state"), LABCTL_CONFIG=str(base / "c.toml")
            )
            (base / "c.toml").write_text("[experiments]\nuser_crontab = false\n")
            argv = [*LABCTL, "migrate-experiment", "exp1", "--root", str(root), "--apply",
                    "--reason", "bench", "--jobs", str(base / tool / "jobs.jsonl")]  # fmt: skip
        else:
            argv = ["bash", "-c", REFERENCE, "ref", str(exp), str(root / "complete" / "exp1"),
                    str(base / "sums.txt")]  # fmt: skip
        return timed(argv, env)
    finally:
        subprocess.run(["umount", "-l", str(root / "complete")], check=False)
        shutil.rmtree(base / tool)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=512)
    ap.add_argument("--files", type=int, default=400)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (mounts a tmpfs)")
    results: dict[str, list[tuple[float, int]]] = {"labctl": [], "cp+sha256sum": []}
    with tempfile.TemporaryDirectory(dir=ROOT) as d:
        for _ in range(args.runs):
            for tool, runs in results.items():
                runs.append(one_run(Path(d), tool, args))
    print(f"cross-fs move of {args.mb} MiB ({args.files} small files + one checkpoint), "
          f"min of {args.runs} runs:")  # fmt: skip
    best = {tool: min(r[0] for r in runs) for tool, runs in results.items()}
    for tool, runs in results.items():
        print(f"  {tool:13s} {best[tool]:6.2f} s  ({args.mb / best[tool]:6.0f} MiB/s)  "
              f"peak RSS {max(r[1] for r in runs) / 1024:6.1f} MiB")  # fmt: skip
    print(f"  ratio labctl / reference: {best['labctl'] / best['cp+sha256sum']:.2f}x")


if __name__ == "__main__":
    main()
