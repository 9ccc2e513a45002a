"""Accuracy of `labctl diagnose` on the second labelled corpus, per split half.

    .venv/bin/python benchmarks/diagnose_accuracy.py [--half tune|holdout|both] [--verbose]
                                                     [--summary] [--first-labels]

Prints, for each half of tests/fixtures/diagnose/corpus2/split.toml (or, with --corpus corpus3,
for the whole verification set): accuracy, the per-category
table, every confusion (label -> answer), the healthy logs flagged as failed, and fingerprint
problems (a labelled group split over several fingerprints, or one fingerprint joining
different causes). The holdout half is the figure to report; the tune half is what the engine
was tuned on.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import corpus_score  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--half", choices=("tune", "holdout", "both"), default="both")
    ap.add_argument(
        "--corpus",
        choices=("corpus2", "corpus3"),
        default="corpus2",
        help="corpus3: the verification set, scored whole",
    )
    ap.add_argument("--verbose", action="store_true", help="print every case's answer")
    ap.add_argument("--summary", action="store_true", help="figures only: no case names")
    ap.add_argument(
        "--first-labels",
        action="store_true",
        help="score against the labels first given (before the corrections in the README)",
    )
    args = ap.parse_args()
    root = corpus_score.CORPUS3 if args.corpus == "corpus3" else corpus_score.CORPUS
    halves: dict[str, list[str] | None] = {"corpus3": None}
    if args.corpus == "corpus2":
        halves = dict(corpus_score.split())
    names = list(halves) if args.half == "both" or args.corpus == "corpus3" else [args.half]
    for name in names:
        rep = corpus_score.score(halves[name], first_labels=args.first_labels, root=root)
        print(f"== {name}: {rep.right}/{rep.total} = {rep.accuracy:.1%}")
        print(rep.table())
        if args.summary:
            print(f"  healthy flagged as failed: {len(rep.healthy_flagged)}")
            continue
        for line in rep.confusions:
            print(f"  miss  {line}")
        print(f"  healthy flagged as failed: {len(rep.healthy_flagged)} {rep.healthy_flagged}")
        for line in corpus_score.fingerprint_problems(rep, root):
            print(f"  fingerprint  {line}")
        if args.verbose:
            for ident, d in sorted(rep.answers.items()):
                print(f"    {ident}: {d['category']} {d.get('catalog_id')} {d.get('fingerprint')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
