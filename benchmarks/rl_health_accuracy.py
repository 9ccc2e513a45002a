#!/usr/bin/env python3
"""`labctl rl-health` accuracy on its corpus, per half, with every real case present.

    .venv/bin/python benchmarks/rl_health_accuracy.py [--half test|tune|both] [--corpora DIR]

The corpus and its split (seed committed before any threshold was tuned) are those of
tests/test_rl_health_corpus.py: generated traces with known outcomes (tests/helpers/
rl_traces.py) and the real logs of tests/fixtures/rl_health/real/MANIFEST.toml. The real
issue-thread excerpts are committed; the repository files are scored when the git-ignored
corpora/rl_health/real/ holds copies that verify against the manifest's sha256
(scripts/corpus-fetch downloads them). Every real case is listed with its label and the
recommendation it got; the cases without a verified copy are named, not scored.

Thresholds are tuned on `tune` only; the figure to quote is the `test` half's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from helpers import rl_corpus, rl_eval  # noqa: E402  (tests/ holds the corpus helpers)


def fraction(fig: dict[str, Any]) -> str:
    return f"{fig['correct']}/{fig['total']} = {fig['accuracy']:.1%}" if fig["total"] else "0/0"


def report(half: str, res: dict[str, Any]) -> None:
    gen, real = res["generated"], res["real"]
    wrong = gen["wrong_kill_on_healthy"] + real["wrong_kill_on_healthy"]
    print(f"{half} half: generated {fraction(gen)}, real {fraction(real)}; "
          f"{wrong or 'zero'} KILL on healthy  ({res['seconds']} s)")  # fmt: skip
    for name, fig in (("generated", gen), ("real", real)):
        print(f"  {name:9} KILLs naming an expected family {fig['kill_named']}; "
              f"{fig['confusion']}")  # fmt: skip
    for case, rec in res["real_cases"]:
        mark = "ok " if rec["recommendation"] == case["expected"] else "BAD"
        where = "committed" if case["committed"] else "corpora"
        fams = ",".join(rec.get("families") or []) or "-"
        got = f"{rec['recommendation']:7} {rec['reason'] or '':22}"
        print(f"  {mark} {case['file']:40} {where:9} expected {case['expected']:7} got {got} "
              f"families {fams}")  # fmt: skip
    for name in res["missing"]:
        print(f"  --- {name:40} not scored: no verified copy in corpora/")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--half", choices=("test", "tune", "both"), default="both")
    parser.add_argument("--corpora", type=Path, default=rl_corpus.CORPORA)
    args = parser.parse_args()
    halves = ("test", "tune") if args.half == "both" else (args.half,)
    with tempfile.TemporaryDirectory(prefix="labctl-rl-accuracy-") as tmp:
        for half in halves:
            report(half, rl_eval.evaluate(half, Path(tmp), corpora=args.corpora))
    return 0


if __name__ == "__main__":
    sys.exit(main())
