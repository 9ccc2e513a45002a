#!/usr/bin/env python3
"""Progress scanning of a huge training log: time and memory stay bounded.

    .venv/bin/python benchmarks/progress_log.py [--size-gib 2] [--max-read-mib 4]

Writes a synthetic HF-Trainer-style log (tqdm `\\r` frames, metric dict lines, checkpoint
messages) of the given size into a temporary directory (deleted afterwards), then, each in its
own child process so its peak RSS (ru_maxrss from wait4) is its own:

- incremental: the whole file in bounded chunks, as successive polls would read it;
- first sight: the 256 KiB tail read a poll does the first time it sees a log;
- capped poll: a stored offset at 0 and the whole file new, so the cap reads the newest bytes;
- baseline: the bare interpreter importing labctl.progress.logscan.

For reference, in the same run: `tail -c 262144 FILE | wc -l` and `LC_ALL=C grep -c step FILE`.
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
sys.path.insert(0, str(ROOT))
MiB = 1 << 20
TOTAL_STEPS = 100_000_000
BARS = ["#" * (p // 10) + " " * (10 - p // 10) for p in range(101)]


def generate(path: Path, size: int) -> int:
    """Write about `size` bytes; returns the last step written."""
    step = 0
    written = 0
    with path.open("wb", buffering=8 * MiB) as fh:
        fh.write(b"[INFO|trainer.py:2128] >> ***** Running training *****\n")
        while written < size:
            lines = []
            for _ in range(1000):
                for _ in range(50):
                    step += 1
                    pct = step * 100 // TOTAL_STEPS
                    el = step // 3
                    lines.append(
                        f"\r{pct:3d}%|{BARS[pct]}| {step}/{TOTAL_STEPS} "
                        f"[{el // 3600:02d}:{el // 60 % 60:02d}:{el % 60:02d}<99:00:00,  3.01it/s]"
                    )
                lines.append(
                    f"\r{' ' * 60}\r{{'loss': {1 / (1 + step / 1e6):.4f}, 'grad_norm': 0.97, "
                    f"'learning_rate': 5e-06, 'epoch': {step / 2e7:.2f}}}\n"
                )
            if step % 500_000 < 50_000:
                lines.append(f"\nSaving model checkpoint to out/checkpoint-{step}\n")
            data = "".join(lines).encode()
            fh.write(data)
            written += len(data)
    return step


def child(mode: str, path: str, max_read: int) -> None:
    if mode == "generate":
        start = time.perf_counter()
        last = generate(Path(path), max_read)  # here max_read carries the size
        print(json.dumps({"seconds": time.perf_counter() - start, "last": last}))
        return
    from labctl.progress.logscan import ScanConfig, ScanState, scan_chunk, scan_file

    cfg = ScanConfig(max_read=max_read)
    size = os.path.getsize(path)
    start = time.perf_counter()
    chunks = total = 0
    if mode == "incremental":
        state: ScanState | None = ScanState()
        with open(path, "rb") as fh:
            offset = 0
            while offset < size:
                data = fh.read(max_read)
                r = scan_chunk(data, state, start=offset, size=size, config=cfg)
                state, offset, chunks = r.state, r.offset, chunks + 1
                total += r.bytes_read
    elif mode == "first-sight":
        r = scan_file(path, None, cfg)
        chunks = 1
    elif mode == "capped":
        r = scan_file(path, ScanState(offset=0, size=0), cfg)
        chunks = 1
    else:  # baseline
        print(json.dumps({"seconds": 0.0}))
        return
    seconds = time.perf_counter() - start
    out = {"seconds": seconds, "chunks": chunks, "value": r.value}
    out["bytes_read"] = total or r.bytes_read
    out |= {"phase": r.phase, "loss": r.metrics.get("loss")}
    print(json.dumps(out))


def run_child(mode: str, path: Path, max_read: int) -> tuple[dict[str, object], float]:
    """Run one case in a fresh interpreter; its own peak RSS comes back from wait4.

    Linux carries the parent's peak RSS into a child across fork+exec, so this process stays
    small (the log is generated in a child too) and the `baseline` row shows the floor.
    """
    cmd = [sys.executable, __file__, "--child", mode, str(path), "--max-read-mib", "0"]
    cmd[-1] = repr(max_read / MiB)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"child {mode} failed ({proc.returncode})")
    return json.loads(out), usage.ru_maxrss / 1024  # KiB -> MiB on Linux


def shell_time(cmd: str) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run(["sh", "-c", cmd], capture_output=True, check=False).stdout
    return time.perf_counter() - start, out.decode().strip()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-gib", type=float, default=2.0)
    parser.add_argument("--max-read-mib", type=float, default=4.0)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "FILE"))
    args = parser.parse_args()
    max_read = int(args.max_read_mib * MiB)
    if args.child:
        child(args.child[0], args.child[1], max_read)
        return 0
    with tempfile.TemporaryDirectory(prefix="labctl-progress-bench-") as tmp:
        path = Path(tmp) / "train.log"
        res, _ = run_child("generate", path, int(args.size_gib * (1 << 30)))
        gen, last = res["seconds"], res["last"]
        size = path.stat().st_size
        print(f"log: {size / MiB:,.0f} MiB, last step {last:,}, generated in {gen:.1f} s")
        print(f"scanner chunk cap (max_read): {max_read / MiB:g} MiB")
        print(f"{'case':34} {'seconds':>9} {'MiB/s':>8} {'peak RSS MiB':>13}  result")
        for mode in ("baseline", "first-sight", "capped", "incremental"):
            res, rss = run_child(mode, path, max_read)
            secs = float(res["seconds"])  # type: ignore[arg-type]
            nbytes = int(res.get("bytes_read", 0))  # type: ignore[call-overload]
            rate = f"{nbytes / MiB / secs:8.1f}" if secs else " " * 8
            detail = {k: v for k, v in res.items() if k != "seconds"}
            print(f"{mode:34} {secs:9.3f} {rate} {rss:13.1f}  {detail}")
        for cmd in (f"tail -c 262144 {path} | wc -l", f"LC_ALL=C grep -c step {path}"):
            secs, out = shell_time(cmd)
            label = cmd.replace(str(path), "FILE")
            print(f"{label:34} {secs:9.3f} {size / MiB / secs if 'grep' in cmd else 0:8.1f}"
                  f" {'':13}  {out}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
