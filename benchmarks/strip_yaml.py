"""Benchmark `labctl.yamlstrip` against a ruamel.yaml round trip on a ~5 MB config.

    .venv/bin/python benchmarks/strip_yaml.py [--sizes 5] [--repeat 3] [--tracemalloc]

A full default run takes about 20 minutes, almost all of it in ruamel (its round trip
grows faster than linearly with the file); `--sizes 0.5` takes about a minute.

Generates a deterministic, config-like YAML (nested mappings, block and flow sequences,
quoted strings, block scalars, anchors, URLs with `#fragments`, whole-line and inline
comments) and times, in the same run:

- labctl: `analyze` (scan + strip + verify: two full pure-Python PyYAML loads) and
  `apply` to a temporary copy;
- for reference, one `yaml.safe_load_all` pass (pure Python), the floor for any tool
  whose verifier is `safe_load`;
- ruamel.yaml 0.18+ round trip: `YAML().load` + `dump` of the same text (what yq-style
  tools do; it does not even remove the comments, and it does not keep the bytes).

It reports median wall times, the ratio, whether ruamel kept the bytes, and peak memory:
the peak resident set (`VmHWM`) of a fresh child process per tool, and its growth over
the child's size after imports; with `--tracemalloc` also the `tracemalloc` peak of one
extra traced run each (slow: tracing multiplies ruamel's time).
"""

from __future__ import annotations

import argparse
import io
import json
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

from labctl.yamlstrip import analyze, apply

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


def run_safe_load(data: bytes, tmp: Path) -> bytes:
    import yaml

    list(yaml.safe_load_all(data.decode("utf-8")))
    return data


def timed(fn: Callable[[], bytes], repeat: int) -> tuple[float, list[float], bytes]:
    """Median wall time, all times, and the last output."""
    times = []
    out = b""
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, out


def traced_peak(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _vm_kib(field: str) -> int:
    """A `/proc/self/status` value in KiB (VmHWM: this process's peak RSS since exec)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # may include the parent's


def child_rss(tool: str, path: Path) -> dict[str, int]:
    """Run one tool once in a fresh interpreter; its peak RSS and its RSS after imports."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", tool, str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def child_main(tool: str, path: Path) -> None:
    import ruamel.yaml  # noqa: F401  (both children import the same modules)

    base = _vm_kib("VmRSS")
    data = path.read_bytes()
    with tempfile.TemporaryDirectory() as d:
        {"labctl": run_labctl, "ruamel": run_ruamel}[tool](data, Path(d, "c.yaml"))
    print(json.dumps({"base_kib": base, "peak_kib": _vm_kib("VmHWM")}))


def _times(ts: list[float]) -> str:
    return ", ".join(f"{t:.2f}" for t in ts)


def bench(size_mb: float, args: argparse.Namespace) -> None:
    data = make_config(int(size_mb * 1_000_000))
    probe = analyze(data, source="bench")
    lines = data.count(b"\n")
    print(
        f"\n== {size_mb:g} MB: {len(data):,} bytes, {lines:,} lines, "
        f"{len(probe.comments):,} comments; stripped {probe.bytes_after:,} bytes, "
        f"verified={probe.verified}",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as d:
        src = Path(d, "config.yaml")
        src.write_bytes(data)
        tmp = Path(d, "target.yaml")
        t_ref, ref_all, _ = timed(lambda: run_safe_load(data, tmp), args.repeat)
        print(f"reference, one pure safe_load_all pass: {t_ref:.2f} s ({_times(ref_all)})")
        t_lab, lab_all, lab_out = timed(lambda: run_labctl(data, tmp), args.repeat)
        print(f"labctl analyze+apply: median {t_lab:.2f} s ({_times(lab_all)})", flush=True)
        t_rua, rua_all, rua_out = timed(lambda: run_ruamel(data, tmp), args.ruamel_repeat)
        print(f"ruamel round trip:    median {t_rua:.2f} s ({_times(rua_all)})")
        verdict = "faster" if t_lab < t_rua else "SLOWER"
        print(f"ratio ruamel/labctl: {t_rua / t_lab:.2f}x (labctl is {verdict})")
        print(
            f"bytes kept: labctl={lab_out == probe.new_data and tmp.read_bytes() == lab_out}, "
            f"ruamel={rua_out == data} (ruamel output {len(rua_out):,} bytes; a round trip "
            f"keeps the comments, so this is its best case, and still rewrites the file)",
            flush=True,
        )
        if args.tracemalloc:
            lab_peak = traced_peak(lambda: run_labctl(data, tmp))
            rua_peak = traced_peak(lambda: run_ruamel(data, tmp))
            print(f"tracemalloc peak: labctl {lab_peak / 2**20:.0f} MiB, ", end="")
            print(f"ruamel {rua_peak / 2**20:.0f} MiB")
        if not args.no_memory:
            for tool in ("labctl", "ruamel"):
                rss = child_rss(tool, src)
                grow = (rss["peak_kib"] - rss["base_kib"]) / 1024
                print(
                    f"peak RSS {tool}: {rss['peak_kib'] / 1024:.0f} MiB "
                    f"(+{grow:.0f} MiB over the interpreter after imports)",
                    flush=True,
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sizes", default="5", help="comma-separated sizes in MB (default 5)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ruamel-repeat", type=int, default=None, help="default: --repeat")
    ap.add_argument("--no-memory", action="store_true", help="skip the child-process RSS")
    ap.add_argument("--tracemalloc", action="store_true", help="also a traced run of each")
    ap.add_argument("--child", nargs=2, metavar=("TOOL", "FILE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child_main(args.child[0], Path(args.child[1]))
        return
    if args.ruamel_repeat is None:
        args.ruamel_repeat = args.repeat
    for size in args.sizes.split(","):
        bench(float(size), args)


if __name__ == "__main__":
    main()
