"""Benchmark `labctl.yamlstrip` against a ruamel.yaml round trip on a ~5 MB config.

    .venv/bin/python benchmarks/strip_yaml.py [--size-mb 5] [--repeat 3]

Generates a deterministic, config-like YAML (nested mappings, block and flow sequences,
quoted strings, block scalars, anchors, URLs with `#fragments`, whole-line and inline
comments) and times, in the same run:

- labctl: `analyze` (scan + strip + verify: two full PyYAML loads) and `apply` to a
  temporary copy;
- ruamel.yaml 0.18+ round trip: `YAML().load` + `dump` of the same text (what yq-style
  tools do; it does not even remove the comments, and it does not keep the bytes).

It reports median wall times, the ratio, whether ruamel kept the bytes, and peak memory:
`tracemalloc` peak (one extra traced run each) and `ru_maxrss` of a fresh child process
per tool (the child's own maximum resident set, minus its size after imports).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from labctl.yamlstrip import analyze, apply  # noqa: E402

WORDS = (
    "warmup cosine decay tuned baseline ablation seed shard rollout reward kl critic actor "
    "buffer epoch batch token context gradient clip norm checkpoint eval sweep node gpu"
).split()


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
            f"    lr: {rng.choice(['1e-5', '3.0e-4', '0.001', '.nan', '.inf'])}  # {_words(rng, 4)}\n",
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


def run_labctl(data: bytes, tmp: Path) -> bytes:
    result = analyze(data, source=str(tmp))
    assert result.verified, result.message
    tmp.write_bytes(data)
    apply(tmp, result)
    return result.new_data


def run_ruamel(data: bytes, tmp: Path) -> bytes:
    from ruamel.yaml import YAML

    yaml = YAML()  # round trip
    yaml.preserve_quotes = True
    doc = yaml.load(data.decode("utf-8"))
    buf = io.StringIO()
    yaml.dump(doc, buf)
    return buf.getvalue().encode("utf-8")


def median_time(fn: Callable[[], object], repeat: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def traced_peak(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def child_rss(tool: str, path: Path) -> dict[str, int]:
    """Run one tool once in a fresh interpreter; its max RSS and its RSS after imports."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", tool, str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def child_main(tool: str, path: Path) -> None:
    import ruamel.yaml  # noqa: F401  (both children import the same modules)

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    data = path.read_bytes()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d, "c.yaml")
        if tool == "labctl":
            run_labctl(data, tmp)
        else:
            run_ruamel(data, tmp)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"base_kib": base, "peak_kib": peak}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=5.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-memory", action="store_true", help="skip the memory measurements")
    ap.add_argument("--child", nargs=2, metavar=("TOOL", "FILE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child_main(args.child[0], Path(args.child[1]))
        return

    data = make_config(int(args.size_mb * 1_000_000))
    probe = analyze(data, source="bench")
    lines = data.count(b"\n")
    print(
        f"input: {len(data):,} bytes, {lines:,} lines, "
        f"{len(probe.comments):,} comments; stripped: {probe.bytes_after:,} bytes, "
        f"verified={probe.verified}"
    )
    with tempfile.TemporaryDirectory() as d:
        src = Path(d, "config.yaml")
        src.write_bytes(data)
        tmp = Path(d, "target.yaml")
        t_lab, lab_all = median_time(lambda: run_labctl(data, tmp), args.repeat)
        t_rua, rua_all = median_time(lambda: run_ruamel(data, tmp), args.repeat)
        ruamel_out = run_ruamel(data, tmp)
        print(f"labctl analyze+apply: median {t_lab:.2f} s  ({', '.join(f'{t:.2f}' for t in lab_all)})")
        print(f"ruamel round trip:    median {t_rua:.2f} s  ({', '.join(f'{t:.2f}' for t in rua_all)})")
        print(f"ratio ruamel/labctl: {t_rua / t_lab:.2f}x  (labctl is {'faster' if t_lab < t_rua else 'SLOWER'})")
        print(
            f"ruamel kept the bytes: {ruamel_out == data}  "
            f"(output {len(ruamel_out):,} bytes; it keeps the comments by design and "
            f"{'equals' if ruamel_out == probe.new_data else 'differs from'} the labctl output)"
        )
        if args.no_memory:
            return
        lab_peak = traced_peak(lambda: run_labctl(data, tmp))
        rua_peak = traced_peak(lambda: run_ruamel(data, tmp))
        print(
            f"tracemalloc peak: labctl {lab_peak / 2**20:.0f} MiB, ruamel {rua_peak / 2**20:.0f} MiB"
        )
        for tool in ("labctl", "ruamel"):
            rss = child_rss(tool, src)
            print(
                f"child ru_maxrss {tool}: {rss['peak_kib'] / 1024:.0f} MiB "
                f"(+{(rss['peak_kib'] - rss['base_kib']) / 1024:.0f} MiB over imports)"
            )


if __name__ == "__main__":
    main()
