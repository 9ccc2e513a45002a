"""The rl-health evaluation corpus and its tune/test split (seed committed before tuning).

Real logs: tests/fixtures/rl_health/real/MANIFEST.toml (each with its source and label).
Generated traces: tests/helpers/rl_traces.py (scenario x framework x seed).
The split is stratified by expected outcome (and, for generated traces, by scenario and
framework): within each stratum the names are sorted, shuffled with `SPLIT_SEED` and dealt
alternately to test and tune. Thresholds may be tuned on `tune` only; accuracy is reported
on `test`.
"""

from __future__ import annotations

import random
import tomllib
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from helpers import rl_traces

SPLIT_SEED = 2020  # committed with the corpus, before any threshold was tuned
REAL = Path(__file__).resolve().parent.parent / "fixtures" / "rl_health" / "real"


def split(items: Iterable[tuple[str, str]], seed: int = SPLIT_SEED) -> dict[str, str]:
    """{name: "tune" | "test"} for (name, stratum) pairs."""
    strata: dict[str, list[str]] = defaultdict(list)
    for name, stratum in items:
        strata[stratum].append(name)
    out: dict[str, str] = {}
    rng = random.Random(seed)
    for stratum in sorted(strata):
        names = sorted(strata[stratum])
        rng.shuffle(names)
        for i, name in enumerate(names):
            out[name] = "test" if i % 2 == 0 else "tune"
    return out


def real_cases() -> list[dict[str, Any]]:
    cases = tomllib.loads((REAL / "MANIFEST.toml").read_text())["case"]
    halves = split((c["file"], c["expected"]) for c in cases)
    return [c | {"split": halves[c["file"]], "path": REAL / c["file"]} for c in cases]


def generated_traces(seeds: int = 2) -> list[tuple[rl_traces.Trace, str]]:
    traces = rl_traces.corpus(seeds)
    halves = split((t.name, f"{t.scenario}/{t.framework}/{t.expected}") for t in traces)
    return [(t, halves[t.name]) for t in traces]
