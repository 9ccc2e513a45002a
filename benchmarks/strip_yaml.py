"""Benchmark `strip-yaml-comments` against the code before issue 16 and against libyaml.

    .venv/bin/python benchmarks/strip_yaml.py [--size-mb 5] [--files 10000] [--repeat 3]
                                              [--baseline REV] [--no-baseline-tree]

Two workloads, every figure from child processes started by this one, in the same run:

1. One config-like YAML of `--size-mb` MB, deterministic, with many comments, anchors,
   flow collections, block scalars, URLs with `#fragments` (`make_config`). For today's
   code and for the code at `--baseline` (checked out with `git archive` into a temporary
   directory): `analyze` + `apply` to a copy, timed inside a fresh interpreter (median of
   `--repeat`), its peak RSS (`VmHWM` of that child), and the whole CLI
   (`labctl strip-yaml-comments --apply FILE`). Goals: today's code at least 10x faster
   than the baseline, peak RSS at most 15x the file size.
2. A tree of `--files` YAML files made from the real samples in
   tests/fixtures/yamlstrip/samples (numbers and words varied, a comment per file), in
   nested directories, with a `.gitignore`d build directory and a hidden `.github/`.
   `labctl strip-yaml-comments --check TREE` against the reference
   `python -c 'yaml.compose_all(..., Loader=yaml.CLoader)'` over the same files (the ones
   labctl reads). Goal: within 3x of the reference. Also shown: `--jobs 1`, and the
   baseline's `--check` (slow: about a minute for 10,000 files).

Wall times are medians (the reference's too, of as many runs); CPU seconds (user + system of
the child and its workers) are given too, since other work on the machine inflates wall time.
The runs are interleaved in rounds (today, baseline; reference, --check, --check --jobs 1), and
each goal is judged on the median of the rounds' ratios: this machine's speed drifts by a third
over minutes, and a ratio between runs taken together is what that drift leaves alone. The
ratio of the medians is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "tests" / "fixtures" / "yamlstrip" / "samples"
BASELINE = "713fc8ca6123077d0555529eaa95b396b2a0410b"  # main before issue 16

_WORDS = """warmup cosine decay tuned baseline ablation seed shard rollout reward kl critic
actor buffer epoch batch token context gradient clip norm checkpoint eval sweep node gpu"""
WORDS = _WORDS.split()
LRS = ["1e-5", "3.0e-4", "0.001", ".nan", ".inf"]


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def make_config(target_bytes: int, seed: int = 1234) -> bytes:
    """A deterministic config-like YAML of about `target_bytes` with many comments."""
    rng = random.Random(seed)
    out: list[str] = [
        "# Launch configs for the lab's RL and SFT runs.\n",
        "# Every comment below is knowledge that should live elsewhere.\n",
        "defaults: &defaults  # shared by every run\n",
        "  optimizer: adamw\n",
        "  lr: 3.0e-4  # tuned on 8 GPUs\n",
        "  betas: [0.9, 0.95]\n",
        "runs:\n",
    ]
    size = sum(len(s) for s in out)
    i = 0
    while size < target_bytes:
        block = [
            f"  # ---- run {i}: {_words(rng, 6)} ----\n",
            f"  - name: run-{i:06d}  # {_words(rng, 3)}\n",
            "    <<: *defaults\n",
            f"    seed: {rng.randint(0, 2**31)}\n",
            f"    lr: {rng.choice(LRS)}  # {_words(rng, 4)}\n",
            f"    batch_size: {rng.choice([8, 16, 32, 64, 128])}\n",
            f"    tags: [{', '.join(rng.sample(WORDS, 3))}]  # flow list\n",
            "    data:\n",
            "      # where the shards live\n",
            f"      url: 'https://data.lab.example/shards/{i}#part-{rng.randint(1, 9)}'\n",
            f"      mix: {{web: {rng.random():.3f}, code: {rng.random():.3f}}}\n",
            f'      filter: "len > {rng.randint(10, 999)} # not a comment"\n',
            f"      plain: a#b{i}\n",
            "    schedule:\n",
            f"      - {{step: 0, lr: {rng.random():.4f}}}  # warmup\n",
            f"      - {{step: {rng.randint(100, 9000)}, lr: {rng.random():.4f}}}\n",
            "    notes: |  # header comment\n",
            f"      {_words(rng, 8)}\n",
            "      # this line is content, not a comment\n",
            f"      {_words(rng, 5)}\n",
            f"    enabled: {rng.choice(['true', 'false', 'yes', 'no'])}\n",
            "\n",
        ]
        out.extend(block)
        size += sum(len(s) for s in block)
        i += 1
    return "".join(out).encode("utf-8")


def make_tree(top: Path, count: int, seed: int = 7) -> None:
    """`count` YAML files varied from the real samples, 100 per directory, plus what a
    walk must skip: a `.gitignore`d build/ and a hidden .github/."""
    rng = random.Random(seed)
    samples = [p.read_text(encoding="utf-8") for p in sorted(SAMPLES.iterdir())]
    digits = re.compile(r"(?<![\w.])\d{1,4}(?![\w.])")
    for i in range(count):
        text = samples[i % len(samples)]
        text = digits.sub(lambda m: str(rng.randint(0, 10 ** len(m.group()) - 1)), text)
        directory = top / f"group{i // 1000:02d}" / f"set{i // 100 % 10}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"f{i:05d}.yaml").write_text(f"# file {i}: {_words(rng, 4)}\n{text}")
    (top / ".gitignore").write_text("build/\n")
    for name in ("build", ".github/workflows"):
        (top / name).mkdir(parents=True, exist_ok=True)
        for i in range(20):
            (top / name / f"x{i}.yaml").write_text(samples[i % len(samples)])
    subprocess.run(["git", "init", "-q", str(top)], check=True)


# -- children -------------------------------------------------------------------------


def _vm_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child_analyze(code_root: str, path: str) -> None:
    """analyze + apply once, in this fresh interpreter; prints seconds and peak RSS."""
    sys.path.insert(0, code_root)
    from labctl.yamlstrip import analyze, apply

    base = _vm_kib("VmRSS")
    data = Path(path).read_bytes()
    with tempfile.TemporaryDirectory() as d:
        target = Path(d, "c.yaml")
        target.write_bytes(data)
        t0, c0 = time.perf_counter(), time.process_time()
        result = analyze(data, source=str(target))
        apply(target, result)
        took, cpu = time.perf_counter() - t0, time.process_time() - c0
        ok = result.verified and target.read_bytes() == result.new_data
    peak = _vm_kib("VmHWM")
    print(json.dumps({"s": took, "cpu": cpu, "peak_kib": peak, "base_kib": base, "ok": ok}))


def child_cli(code_root: str, out_json: str, *args: str) -> None:
    """The labctl CLI in this interpreter (stdout to /dev/null); peak RSS to `out_json`."""
    sys.path.insert(0, code_root)
    from labctl.cli import main

    with open(os.devnull, "w") as devnull:
        sys.stdout = devnull
        code = main(list(args))
    sys.stdout = sys.__stdout__
    Path(out_json).write_text(json.dumps({"peak_kib": _vm_kib("VmHWM"), "code": code}))


def child_reference(list_file: str) -> None:
    """What the goal compares with: compose_all over each file, with libyaml."""
    import yaml

    for name in Path(list_file).read_text().splitlines():
        try:
            with open(name, "rb") as fh:
                list(yaml.compose_all(fh.read(), Loader=yaml.CLoader))
        except yaml.YAMLError:
            pass


def _run(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child and its children, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(args, check=True, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def _me(*args: str) -> list[str]:
    return [sys.executable, __file__, "--child", *args]


# -- the workloads ------------------------------------------------------------------------


def checkout(rev: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "labctl"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def big_file(args: argparse.Namespace, codes: dict[str, Path], work: Path) -> None:
    data = make_config(int(args.size_mb * 1_000_000))
    path = work / "config.yaml"
    path.write_bytes(data)
    mib = len(data) / 2**20
    print(f"\n== one file: {len(data):,} bytes ({mib:.2f} MiB), {data.count(b'#'):,} '#'")
    medians: dict[str, float] = {}
    cpus: dict[str, float] = {}
    # interleaved (today, baseline, today, ...): both see the same drift of the machine
    rounds = [
        {
            name: json.loads(_run(_me("analyze", str(code), str(path)))[2])
            for name, code in codes.items()
        }
        for _ in range(args.repeat)
    ]
    for name, code in codes.items():
        runs = [r[name] for r in rounds]
        assert all(r["ok"] for r in runs), f"{name}: not verified"
        medians[name] = statistics.median(r["s"] for r in runs)
        cpus[name] = statistics.median(r["cpu"] for r in runs)
        peak = max(r["peak_kib"] for r in runs) / 1024
        times = ", ".join(f"{r['s']:.2f}" for r in runs)
        print(
            f"{name:>8} analyze+apply: median {medians[name]:.2f} s ({times}), "
            f"{cpus[name]:.2f} s CPU; "
            f"peak RSS {peak:.0f} MiB = {peak / mib:.1f}x the file"
        )
        out = work / "cli.json"
        copy = work / f"cli-{name}.yaml"
        copy.write_bytes(data)
        wall, cpu, _ = _run(
            _me("cli", str(code), str(out), "strip-yaml-comments", "--apply", str(copy))
        )
        cli = json.loads(out.read_text())
        print(
            f"{name:>8} CLI --apply:   {wall:.2f} s wall, {cpu:.2f} s CPU; "
            f"peak RSS {cli['peak_kib'] / 1024:.0f} MiB = {cli['peak_kib'] / 1024 / mib:.1f}x"
        )
    if "baseline" in medians:
        ratio = medians["baseline"] / medians["today"]
        by_cpu = cpus["baseline"] / cpus["today"]
        paired = statistics.median(r["baseline"]["s"] / r["today"]["s"] for r in rounds)
        verdict = "meets" if paired >= 10 else "MISSES"
        print(
            f"speed-up analyze+apply, baseline/today: {paired:.1f}x wall, the median of the "
            f"{len(rounds)} rounds' ratios ({verdict} the 10x goal); {ratio:.1f}x the medians' "
            f"ratio, {by_cpu:.1f}x CPU"
        )


def tree(args: argparse.Namespace, codes: dict[str, Path], work: Path) -> None:
    top = work / "tree"
    make_tree(top, args.files)
    sys.path.insert(0, str(ROOT))
    from labctl.yamlstrip.walk import iter_yaml_files

    files = [str(p) for p in iter_yaml_files([top])]
    listing = work / "files.txt"
    listing.write_text("\n".join(files) + "\n")
    size = sum(os.path.getsize(f) for f in files)
    print(f"\n== a tree: {len(files):,} files read, {size / 2**20:.1f} MiB (+ 40 skipped)")
    out = work / "tree.json"
    today = str(codes["today"])
    variants = (("", []), (" --jobs 1", ["--jobs", "1"]))
    # interleaved rounds (reference, --check, --check --jobs 1): each ratio is taken between
    # runs minutes apart at most, whatever the machine's speed does over the whole benchmark
    refs: list[tuple[float, float]] = []
    runs: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in variants}
    for _ in range(args.repeat):
        refs.append(_run(_me("reference", str(listing)))[:2])
        for label, extra in variants:
            cmd = _me("cli", today, str(out), "strip-yaml-comments", "--check", *extra, str(top))
            runs[label].append(_run(cmd)[:2])
    ref_wall = statistics.median(w for w, _ in refs)
    ref_cpu = statistics.median(c for _, c in refs)
    print(
        f"reference compose_all (CLoader): {ref_wall:.2f} s wall, {ref_cpu:.2f} s CPU "
        f"(median of {args.repeat}; {min(w for w, _ in refs):.2f}-{max(w for w, _ in refs):.2f} s)"
    )
    for label, extra in variants:
        wall = statistics.median(w for w, _ in runs[label])
        cpu = statistics.median(c for _, c in runs[label])
        paired = statistics.median(w / r for (w, _), (r, _) in zip(runs[label], refs, strict=True))
        goal = "" if extra else f" ({'meets' if paired <= 3 else 'MISSES'} the 3x goal)"
        print(
            f"labctl --check{label}: {wall:.2f} s wall, {paired:.2f}x the reference (the median "
            f"of the rounds' ratios){goal}; {wall / ref_wall:.2f}x the medians' ratio, "
            f"{cpu:.2f} s CPU ({cpu / ref_cpu:.2f}x)"
        )
    if "baseline" in codes and not args.no_baseline_tree:
        wall, cpu, _ = _run(
            _me("cli", str(codes["baseline"]), str(out), "strip-yaml-comments", "--check", str(top))
        )
        print(f"baseline --check: {wall:.2f} s wall, {cpu:.2f} s CPU")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=5.0)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", default=BASELINE, help="git revision ('' for none)")
    ap.add_argument("--no-baseline-tree", action="store_true", help="skip the slow baseline tree")
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, *rest = args.child
        {"analyze": child_analyze, "cli": child_cli, "reference": child_reference}[kind](*rest)
        return
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        codes = {"today": ROOT}
        if args.baseline:
            (work / "baseline").mkdir()
            codes["baseline"] = checkout(args.baseline, work / "baseline")
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; baseline {args.baseline}")
        big_file(args, codes, work)
        tree(args, codes, work)


if __name__ == "__main__":
    main()
