"""The rl-health evaluation corpus and its tune/test split (seed committed before tuning).

Real logs: tests/fixtures/rl_health/real/MANIFEST.toml (each with its source and label).
Issue-thread excerpts are committed next to it; files from public repositories are not: they
live in the git-ignored corpora/rl_health/real/ (scripts/corpus-fetch downloads them) and a
case is scored only when its local copy is there and verifies against the manifest's sha256.
Generated traces: tests/helpers/rl_traces.py (scenario x framework x seed).
The split is stratified by expected outcome (and, for generated traces, by scenario and
framework): within each stratum the names are sorted, shuffled with `SPLIT_SEED` and dealt
alternately to test and tune. Thresholds may be tuned on `tune` only; accuracy is reported
on `test`.
"""

from __future__ import annotations

import importlib.util
import random
import sys
import tomllib
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from helpers import rl_traces

SPLIT_SEED = 2020  # committed with the corpus, before any threshold was tuned
ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "fixtures" / "rl_health" / "real"
CORPORA = ROOT / "corpora" / "rl_health" / "real"


def _load_fetcher() -> Any:
    """scripts/rl_corpus_fetch.py (a script, not a package): its manifest reading and checks."""
    name = "rl_corpus_fetch"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


fetcher = _load_fetcher()


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


def real_cases(corpora: Path = CORPORA) -> list[dict[str, Any]]:
    """Every manifest case with its half, its `local` path and whether it can be scored here:
    `committed` (an issue excerpt next to the manifest) or `present` (a repository file whose
    local copy under `corpora` verifies)."""
    cases = tomllib.loads((REAL / "MANIFEST.toml").read_text())["case"]
    halves = split((c["file"], c["expected"]) for c in cases)
    copied = {f.file: f for f in fetcher.repo_files(REAL / "MANIFEST.toml")}
    out = []
    for c in cases:
        spec = copied.get(c["file"])
        local = (REAL if spec is None else corpora) / c["file"]
        present = spec is None or fetcher.present(spec, corpora)
        out.append(c | {"split": halves[c["file"]], "local": local, "committed": spec is None,
                        "present": present})  # fmt: skip
    return out


def generated_traces(seeds: int = 2) -> list[tuple[rl_traces.Trace, str]]:
    traces = rl_traces.corpus(seeds)
    halves = split((t.name, f"{t.scenario}/{t.framework}/{t.expected}") for t in traces)
    return [(t, halves[t.name]) for t in traces]
