"""Benchmark `labctl diagnose`: full scan vs `LC_ALL=C grep -E -c`, tail-first on 4 GB, RSS.

    .venv/bin/python benchmarks/diagnose.py [--dir DIR] [--size-mb 400] [--big-gb 4] [--runs 3]

1. Generates a ~400 MB synthetic training log (HF-trainer loss dicts, tqdm frames with `\\r`,
   rank-prefixed warnings, NCCL INFO lines) with a CUDA OOM traceback at the END, and a
   second file with it in the MIDDLE (followed by 200 MB of healthy lines).
2. Times `diagnose_path(full=True)` on both against `LC_ALL=C grep -E -c -f <patterns>` with
   the catalog's prefilter patterns converted to POSIX ERE, in the same run (min of N runs,
   wall and CPU seconds, each in a fresh child process).
3. Times the default tail-first mode on a 4 GB log (the 400 MB body repeated through a
   sparse-free copy is slow to make, so the 4 GB file is a sparse hole followed by the real
   400 MB log: tail-first never reads the hole, a full scan would).
4. Reports the peak RSS (VmHWM) of the child process for each run.
5. With an SSH host (default: the test sshd of scripts/sshd-up when it is up), `--full` on
   a cluster's log: the middle-failure log streamed through the transport, against
   `ssh host cat log | grep -E -c` over the same connection settings.

Differences between the two counts are expected and explained in the output: grep splits
lines on `\\n` only (tqdm `\\r` frames are one line for grep, several for labctl), and the
ERE conversion expands `(?i)` into bracket pairs and drops non-greedy markers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FAILURE = (
    "Traceback (most recent call last):\n"
    '  File "/home/user/train.py", line 212, in <module>\n'
    "    trainer.train()\n"
    '  File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1553,'
    " in _wrapped_call_impl\n"
    "    return self._call_impl(*args, **kwargs)\n"
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 3 has"
    " a total capacity of 79.15 GiB of which 1.25 MiB is free.\n"
)


# -- synthetic log ------------------------------------------------------------------------------
def _healthy_lines(rng: random.Random, step: int, early: bool) -> str:
    if early and step % 200_000 == 0:  # a retried Hub hiccup early on: a catalog hit, not fatal
        return (
            "WARNING:huggingface_hub.utils._http:'(ReadTimeoutError(\"HTTPSConnectionPool("
            "host='huggingface.co', port=443): Read timed out.\"))' Retrying in 1s [Retry 1/5].\n"
        )
    r = rng.random()
    if r < 0.45:
        return (
            f"{{'loss': {rng.random() * 3:.4f}, 'grad_norm': {rng.random() * 2:.4f}, "
            f"'learning_rate': {rng.random() * 1e-4:.4e}, 'epoch': {step / 5000:.2f}}}\n"
        )
    if r < 0.85:
        frames = "".join(
            f"\r {p}%|{'█' * (p // 10):<10}| {step}/200000 [01:23<02:34, 3.21it/s, loss=2.31]"
            for p in range(rng.randint(1, 4))
        )
        return frames.lstrip("\r") + "\n"
    if r < 0.95:
        return (
            f"[rank{step % 8}]:[W{step % 1000:04d} 12:00:00.000] Warning: the default value of "
            f"use_reentrant will change (step {step})\n"
        )
    return (
        f"gpu-a{step % 97}:{1000 + step % 8}:{2000 + step % 13} [0] NCCL INFO Channel 00/0 : "
        "0[0] -> 1[1] via P2P/IPC\n"
    )


def make_log(path: Path, size: int, failure_at: str) -> None:
    rng = random.Random(7)
    written, step, buf = 0, 0, []
    half_done = False
    with path.open("w", encoding="utf-8", newline="") as f:
        while written < size:
            step += 1
            line = _healthy_lines(rng, step, written < size * 0.4)
            buf.append(line)
            written += len(line.encode("utf-8"))
            if failure_at == "middle" and not half_done and written >= size // 2:
                buf.append(FAILURE)
                half_done = True
            if len(buf) >= 20000:
                f.write("".join(buf))
                buf = []
        if failure_at == "end":
            buf.append(FAILURE)
        f.write("".join(buf))


def make_big(path: Path, body: Path, size: int) -> None:
    """A sparse file of `size` bytes whose last len(body) bytes are the real log."""
    n = body.stat().st_size
    with path.open("wb") as f:
        f.truncate(size - n)
        f.seek(size - n)
        with body.open("rb") as src:
            while chunk := src.read(8 << 20):
                f.write(chunk)


# -- RE2 / Python regex -> POSIX ERE --------------------------------------------------------------
_CLASS_ESC = {"d": "0-9", "s": "[:space:]", "w": "_[:alnum:]", "n": "", "t": "\t"}
_GNU_ESC = set("bBwWsS<>")
_ERE_SPECIAL = set(".[]()*+?{}|^$\\")


def to_ere(pattern: str) -> str:
    """Convert one catalog pattern (RE2/Python dialect) to a GNU `grep -E` pattern.

    `(?i)` becomes [aA] pairs, `(?:`/`(?P<name>` become plain groups, `\\d` becomes [0-9],
    non-greedy quantifiers become greedy (same set of matching lines).
    """
    fold = pattern.startswith("(?i)")
    if fold:
        pattern = pattern[4:]
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            e = pattern[i + 1]
            if e == "d":
                out.append("[0-9]")
            elif e == "D":
                out.append("[^0-9]")
            elif e in _GNU_ESC or e in _ERE_SPECIAL:
                out.append("\\" + e)
            else:
                out.append({"t": "\t", "n": "\n"}.get(e, e))
            i += 2
        elif c == "[":
            i, items = _read_class(pattern, i + 1)
            out.append(_class(items, fold))
        elif pattern.startswith("(?:", i):
            out.append("(")
            i += 3
        elif pattern.startswith("(?P<", i):
            out.append("(")
            i = pattern.index(">", i) + 1
        elif c in "*+?}" and i + 1 < n and pattern[i + 1] == "?":
            out.append(c)
            i += 2
        elif fold and c.isalpha():
            out.append(f"[{c.lower()}{c.upper()}]")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _read_class(p: str, i: int) -> tuple[int, list[str]]:
    items: list[str] = []
    if p[i] == "^":
        items.append("^")
        i += 1
    first = True
    while first or p[i] != "]":
        first = False
        if p[i] == "\\":
            items.append(p[i : i + 2])
            i += 2
        else:
            items.append(p[i])
            i += 1
    return i + 1, items


def _class(items: list[str], fold: bool) -> str:
    neg = items[:1] == ["^"]
    body = items[1:] if neg else items
    parts: list[str] = []
    bracket = dash = caret = False
    k = 0
    while k < len(body):
        it = body[k]
        if k + 2 < len(body) and body[k + 1] == "-" and len(it) == 1 and len(body[k + 2]) == 1:
            lo, hi = it, body[k + 2]
            parts.append(f"{lo}-{hi}")
            if fold and lo.isalpha() and hi.isalpha():
                parts.append(f"{lo.swapcase()}-{hi.swapcase()}")
            k += 3
            continue
        ch = it[1] if it.startswith("\\") else it
        if it.startswith("\\") and ch in _CLASS_ESC:
            parts.append(_CLASS_ESC[ch])
        elif ch == "]":
            bracket = True
        elif ch == "-":
            dash = True
        elif ch == "^":
            caret = True
        else:
            parts.append(ch)
            if fold and ch.isalpha():
                parts.append(ch.swapcase())
        k += 1
    if not ("".join(parts) or bracket or dash or caret):
        # `[^\n]`: grep's lines hold no newline, so "any character but \n" is any character
        return "." if neg else "[^[:print:][:cntrl:][:space:]]"
    head = ("^" if neg else "") + ("]" if bracket else "")
    return "[" + head + "".join(parts) + ("^" if caret else "") + ("-" if dash else "") + "]"


# -- measurement --------------------------------------------------------------------------------
_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
def hwm():  # peak RSS of THIS process image (ru_maxrss would include the forked parent's)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
from labctl.diagnose import default_catalog, diagnose_path
default_catalog()
t0, c0 = time.perf_counter(), time.process_time()
d = diagnose_path({path!r}, full={full})
t1, c1 = time.perf_counter(), time.process_time()
print(json.dumps({{"wall": t1 - t0, "cpu": c1 - c0, "category": d["category"],
  "line": d["evidence"][0]["line"] if d["evidence"] else None, "bytes_read": d["bytes_read"],
  "rss_kb": hwm()}}))
"""


_REMOTE_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
from labctl.backends.transport import Transport
from labctl.diagnose import default_catalog, diagnose_chunks
from labctl.diagnose.jobs import Reach, remote_read
default_catalog()
t = Transport(host={host!r}, ssh_options={opts!r})
t.run(["true"], timeout=30)  # the ControlMaster is up, as in a poll | diagnose sweep
t0 = time.perf_counter()
d = diagnose_chunks(remote_read(Reach(t, 60.0), {path!r}, None), source={path!r})
t1 = time.perf_counter()
print(json.dumps({{"wall": t1 - t0, "category": d["category"], "bytes_read": d["bytes_read"],
  "rss_kb": hwm()}}))
"""


def run_remote(path: Path, host: str, opts: list[str]) -> dict[str, object]:
    code = _REMOTE_CHILD.format(root=str(ROOT), path=str(path), host=host, opts=opts)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def _grep_count(out: subprocess.CompletedProcess[str]) -> int:
    """grep -c's count; a pattern grep refused means the reference did not run: say so."""
    if out.returncode > 1:
        raise SystemExit(f"grep failed (exit {out.returncode}): {out.stderr.strip()}")
    return int(out.stdout.strip() or 0)


def run_remote_grep(path: Path, patterns: Path, host: str, opts: list[str]) -> dict[str, object]:
    ssh = ["ssh", *opts, host, "cat", "--", str(path)]
    t0 = time.perf_counter()
    cat = subprocess.Popen(ssh, stdout=subprocess.PIPE)
    out = subprocess.run(
        ["grep", "-E", "-c", "-f", str(patterns)],
        stdin=cat.stdout,
        capture_output=True,
        text=True,
        env=dict(os.environ, LC_ALL="C"),
        check=False,
    )
    cat.wait()
    return {"wall": time.perf_counter() - t0, "count": _grep_count(out)}


def run_labctl(path: Path, full: bool) -> dict[str, object]:
    code = _CHILD.format(root=str(ROOT), path=str(path), full=full)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def run_grep(path: Path, patterns: Path) -> dict[str, object]:
    env = dict(os.environ, LC_ALL="C")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(
        ["grep", "-E", "-c", "-f", str(patterns), str(path)],
        check=False,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "count": _grep_count(out)}


def best(fn, runs: int) -> dict[str, object]:  # type: ignore[no-untyped-def]
    results = [fn() for _ in range(runs)]
    return min(results, key=lambda r: r["wall"])


def prefilter_count(path: Path) -> int:
    """Lines (split like labctl: \\r, \\n) the catalog prefilter matches: labctl's candidates."""
    from labctl.diagnose import default_catalog
    from labctl.diagnose.lines import find_candidates

    cat = default_catalog()
    total = 0
    with path.open("rb") as f:
        carry = b""
        while True:
            chunk = f.read(8 << 20)
            data = carry + chunk
            cut = data.rfind(b"\n") + 1 if chunk else len(data)
            block = data[:cut].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            total += len(find_candidates(cat, block, 0, len(block)))
            carry = data[cut:]
            if not chunk:
                return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", default=None, help="where to write the logs (default: a temp dir)")
    ap.add_argument("--size-mb", type=int, default=400)
    ap.add_argument("--big-gb", type=float, default=4.0)
    ap.add_argument("--runs", type=int, default=3)
    default_cfg = "/run/labctl-sshd/ssh_config"
    ap.add_argument(
        "--ssh-host",
        default="labctl-test" if Path(default_cfg).exists() else None,
        help="also stream the log through this SSH alias (default: the test sshd if up)",
    )
    ap.add_argument("--ssh-config", default=default_cfg if Path(default_cfg).exists() else None)
    args = ap.parse_args()
    from labctl.diagnose import default_catalog

    cat = default_catalog()
    workdir = Path(args.dir or tempfile.mkdtemp(prefix="labctl-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    size = args.size_mb << 20
    end_log, mid_log, big_log = workdir / "end.log", workdir / "middle.log", workdir / "big.log"
    for path, where in ((end_log, "end"), (mid_log, "middle")):
        if not path.exists() or abs(path.stat().st_size - size) > (1 << 20):
            print(f"generating {path} ({args.size_mb} MB, failure at the {where}) ...", flush=True)
            make_log(path, size, where)
    big_size = int(args.big_gb * (1 << 30))
    if not big_log.exists() or big_log.stat().st_size != big_size:
        make_big(big_log, end_log, big_size)
    ere = workdir / "patterns.ere"
    ere.write_text("\n".join(to_ere(p) for p in cat.prefilter_patterns) + "\n")
    print(f"catalog: {len(cat.entries)} entries, {len(cat.prefilter_patterns)} prefilter patterns")
    print(
        f"engine: {'RE2' if cat.use_re2 else 'python re'}, cores: {os.cpu_count()}, "
        f"load: {os.getloadavg()[0]:.2f}"
    )
    print()
    for label, path in (("failure at end", end_log), ("failure in middle", mid_log)):
        ours = best(lambda p=path: run_labctl(p, True), args.runs)
        grep = best(lambda p=path: run_grep(p, ere), args.runs)
        ratio_w = ours["wall"] / grep["wall"]  # type: ignore[operator]
        ratio_c = ours["cpu"] / grep["cpu"] if grep["cpu"] else float("nan")  # type: ignore[operator]
        print(f"full scan, {label} ({path.stat().st_size / 1e6:.0f} MB):")
        print(
            f"  labctl  wall {ours['wall']:.3f} s  cpu {ours['cpu']:.3f} s  -> "
            f"{ours['category']} at line {ours['line']}, peak RSS {ours['rss_kb'] / 1024:.1f} MB"
        )
        print(
            f"  grep -E wall {grep['wall']:.3f} s  cpu {grep['cpu']:.3f} s  -> "
            f"{grep['count']} matching lines"
        )
        print(f"  ratio labctl/grep: wall {ratio_w:.2f}x, cpu {ratio_c:.2f}x")
        print(
            f"  labctl prefilter candidate lines: {prefilter_count(path)} "
            "(lines split on \\r too; see docstring for why counts differ)"
        )
        print()
    tail = best(lambda: run_labctl(big_log, False), args.runs)
    print(f"tail-first, {big_size / 2**30:.1f} GiB log (failure at the end):")
    print(
        f"  labctl  wall {tail['wall'] * 1000:.1f} ms  cpu {tail['cpu'] * 1000:.1f} ms  "
        f"read {tail['bytes_read'] / 2**20:.1f} MiB -> {tail['category']}, "
        f"peak RSS {tail['rss_kb'] / 1024:.1f} MB"
    )
    print()
    if args.ssh_host:
        opts = ["-F", args.ssh_config] if args.ssh_config else []
        ours = best(lambda: run_remote(mid_log, args.ssh_host, opts), args.runs)
        ref = best(lambda: run_remote_grep(mid_log, ere, args.ssh_host, opts), args.runs)
        print(f"--full on the cluster over ssh ({args.ssh_host}), failure in middle:")
        print(
            f"  labctl       wall {ours['wall']:.3f} s  streamed "
            f"{ours['bytes_read'] / 2**20:.0f} MiB -> {ours['category']}, "
            f"peak RSS {ours['rss_kb'] / 1024:.1f} MB"
        )
        print(f"  ssh cat|grep wall {ref['wall']:.3f} s  -> {ref['count']} matching lines")
        print(f"  ratio labctl/(ssh cat | grep): {ours['wall'] / ref['wall']:.2f}x")  # type: ignore[operator]
        print()
    print("goals: full scan <= 1.5x grep; tail-first on 4 GB well under 1 s; peak RSS < 100 MB")


if __name__ == "__main__":
    main()
