"""Accuracy of `labctl diagnose` on the labelled corpora that are present locally.

    .venv/bin/python benchmarks/diagnose_accuracy.py [--corpus corpus2|...|corpus72 ...]
        [--half tune|holdout] [--verbose] [--summary] [--first-labels] [--no-floors]

The copied log files are not committed (tests/fixtures/diagnose/<corpus>/README.md); rebuild
them with `scripts/corpus-fetch diagnose`. This prints which corpora (and cases) are missing,
then, per corpus present -- corpus2 per half of its split.toml, the others whole --: accuracy,
the per-category table, every confusion (label -> answer), the healthy logs flagged as failed,
and fingerprint problems (a labelled group split over several fingerprints, or one fingerprint
joining different causes).

Which figure is honest: corpus2's holdout half was untouched only for its first scoring (69/75),
corpus3 only for its first (26/35), corpus4 only for its first (100/104 against its first
labels; see its README), corpus5 only for its first (62/76 = 81.6 %, recorded in its README
before its misses were fixed), corpus6 only for its first (57/72 = 79.2 %: it was collected,
labelled and committed before any engine was run on it; its README records the figure before
its misses were fixed), corpus7 only for its first (78/83 = 94.0 %, collected, labelled and
committed the same way; its README records the figure before its misses were fixed). corpus8
was collected, labelled and committed the same way (from repositories and trackers no earlier
corpus cites) and is untouched only for its first scoring (67/76 = 88.2 %, recorded in its
README, before its misses were fixed). corpus9 to corpus47 likewise (each README's "First
scoring": 49/55, 29/37, 33/33, 44/45, 40/48, 29/34, ...; corpus22 17/20,
corpus23 27/30, corpus24 23/25, corpus25 23/25, corpus26 23/27,
corpus27 23/25, corpus28 23/24, corpus29 22/23,
corpus30 18/20, corpus31 18/19, corpus32 18/19,
corpus33 15/15, corpus34 19/19, corpus35 16/17; then the pool decided in advance for #15,
scored once as a whole: corpus36 11/11, corpus37 14/14, corpus38 24/25, corpus39 17/20,
corpus40 14/17, corpus41 14/15, corpus42 20/23, corpus43 16/18, corpus44 16/18, corpus46 6/6,
corpus47 12/12 with one healthy log flagged: 164/179 = 91.6 %; then the second pool, likewise:
corpus50 4/4, corpus51 5/5, corpus52 3/4, corpus55 1/1, corpus56 16/19, corpus57 20/20,
corpus58 16/18, corpus59 20/22, corpus60 17/18, corpus61 14/15, corpus62 18/19, corpus63 8/11,
with two healthy logs flagged: 142/156 = 91.0 %; then the third pool, likewise: corpus64 15/15,
corpus65 17/17, corpus66 12/12, corpus67 14/16, corpus68 17/20, corpus69 17/20, corpus70 17/17,
corpus71 11/11, corpus72 22/22, with two healthy logs flagged: 142/150 = 94.7 %; then the
fourth pool, likewise: corpus73 13/16, corpus74 7/7, corpus75 15/15, corpus76 12/14, corpus77
14/14, corpus78 18/18, corpus79 12/14, corpus80 12/14, corpus81 13/13, with one healthy log
flagged: 116/125 = 92.8 %; then the fifth pool, likewise: corpus82 22/24, corpus83 19/22,
corpus84 20/21, corpus85 21/23, corpus86 18/22, corpus87 21/22, corpus88 12/12, with two healthy
logs flagged: 133/146 = 91.1 %; then the sixth pool, likewise: corpus89 24/24, corpus90 22/24,
corpus91 23/25, corpus92 13/13, corpus93 9/10, corpus94 8/8, with no healthy log flagged:
99/104 = 95.2 %, the first pool to meet the rule). Every later
figure is measured on data the engine has been fixed on: a regression guard, not an accuracy.
FLOORS are those guards (the figures reached); the exit code is 1 when a corpus present falls
below its floor or flags a healthy log, so the benchmark doubles as a local regression check.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus_score import Corpus, Report, fingerprint_problems, score  # noqa: E402

CORPORA = (
    "corpus2",
    "corpus3",
    "corpus4",
    "corpus5",
    "corpus6",
    "corpus7",
    "corpus8",
    "corpus9",
    "corpus10",
    "corpus11",
    "corpus12",
    "corpus13",
    "corpus14",
    "corpus15",
    "corpus16",
    "corpus17",
    "corpus18",
    "corpus19",
    "corpus20",
    "corpus21",
    "corpus22",
    "corpus23",
    "corpus24",
    "corpus25",
    "corpus26",
    "corpus27",
    "corpus28",
    "corpus29",
    "corpus30",
    "corpus31",
    "corpus32",
    "corpus33",
    "corpus34",
    "corpus35",
    "corpus36",
    "corpus37",
    "corpus38",
    "corpus39",
    "corpus40",
    "corpus41",
    "corpus42",
    "corpus43",
    "corpus44",
    "corpus46",
    "corpus47",
    "corpus50",
    "corpus51",
    "corpus52",
    "corpus55",
    "corpus56",
    "corpus57",
    "corpus58",
    "corpus59",
    "corpus60",
    "corpus61",
    "corpus62",
    "corpus63",
    "corpus64",
    "corpus65",
    "corpus66",
    "corpus67",
    "corpus68",
    "corpus69",
    "corpus70",
    "corpus71",
    "corpus72",
    "corpus73",
    "corpus74",
    "corpus75",
    "corpus76",
    "corpus77",
    "corpus78",
    "corpus79",
    "corpus80",
    "corpus81",
    "corpus82",
    "corpus83",
    "corpus84",
    "corpus85",
    "corpus86",
    "corpus87",
    "corpus88",
    "corpus89",
    "corpus90",
    "corpus91",
    "corpus92",
    "corpus93",
    "corpus94",
)
# regression guards: right answers per scored set (set at the figures the engine reached)
FLOORS = {
    "corpus2/tune": 75,
    "corpus2/holdout": 74,
    "corpus3": 35,
    "corpus4": 104,
    "corpus5": 76,
    "corpus6": 72,
    "corpus7": 83,
    "corpus8": 76,
    "corpus9": 54,
    "corpus10": 36,
    "corpus11": 33,
    "corpus12": 45,
    "corpus13": 48,
    "corpus14": 33,
    "corpus15": 36,
    "corpus16": 15,
    "corpus17": 24,
    "corpus18": 20,
    "corpus19": 22,
    "corpus20": 14,
    "corpus21": 15,
    "corpus22": 20,
    "corpus23": 30,
    "corpus24": 25,
    "corpus25": 25,
    "corpus26": 27,
    "corpus27": 25,
    "corpus28": 24,
    "corpus29": 23,
    "corpus30": 20,
    "corpus31": 19,
    "corpus32": 19,
    "corpus33": 15,
    "corpus34": 19,
    "corpus35": 17,
    "corpus36": 11,
    "corpus37": 14,
    "corpus38": 25,
    "corpus39": 20,
    "corpus40": 17,
    "corpus41": 15,
    "corpus42": 23,
    "corpus43": 18,
    "corpus44": 18,
    "corpus46": 6,
    "corpus47": 12,
    "corpus50": 4,
    "corpus51": 5,
    "corpus52": 4,
    "corpus55": 1,
    "corpus56": 19,
    "corpus57": 20,
    "corpus58": 18,
    "corpus59": 22,
    "corpus60": 18,
    "corpus61": 15,
    "corpus62": 19,
    "corpus63": 11,
    "corpus64": 15,
    "corpus65": 17,
    "corpus66": 12,
    "corpus67": 16,
    "corpus68": 20,
    "corpus69": 20,
    "corpus70": 17,
    "corpus71": 11,
    "corpus72": 22,
    "corpus73": 16,
    "corpus74": 7,
    "corpus75": 15,
    "corpus76": 13,
    "corpus77": 14,
    "corpus78": 18,
    "corpus79": 14,
    "corpus80": 14,
    "corpus81": 13,
    "corpus82": 24,
    "corpus83": 20,
    "corpus84": 21,
    "corpus85": 23,
    "corpus86": 21,
    "corpus87": 22,
    "corpus88": 12,
    "corpus89": 24,
    "corpus90": 22,
    "corpus91": 24,
    "corpus92": 13,
    "corpus93": 10,
    "corpus94": 8,
}
# healthy logs a set is known to flag, left as they are (each set's README says why): the
# benchmark fails on any other
KNOWN_FLAGGED = {
    "corpus9": {"chgcnn-graph-data-mp-ids-missing-runtimewarnings-done"},
    "corpus60": {"anomalib-1192-loss-nan-then-testing"},
    "corpus83": {"pinkal-scene-text-inference-server-errors-survived"},
}
# the pool the closing note of stop 28 fixed in advance for closing issue #15: the next untouched
# sets, at least 100 cases together, each scored once as a whole; resolved iff the pooled first
# scoring is >= 95 % with no healthy log flagged. Printed as one line when its sets are scored.
# Fixed before any of them was scored: every set of the round that collected them (corpus36 and
# corpus37 in one session; corpus38 to corpus47 in the next, each that is in place by its build
# deadline; corpus45 found no case and does not exist).
POOL = tuple(f"corpus{n}" for n in (36, 37, 38, 39, 40, 41, 42, 43, 44, 46, 47))
POOL_FIRST = "164/179 = 91.6 %, 1 healthy log flagged"  # its first scoring, at 6dcd0ef
# That pool missed the rule (91.6 %). The next one, fixed likewise before any of its sets existed:
# every set of the next collecting round (corpus48 on, each that is in place by its build
# deadline), at least 100 cases together, each scored once as a whole with the engine as it
# stands when they are committed; #15 is resolved iff that first scoring is >= 95 % with no
# healthy log flagged. corpus50, 51, 52 and 55 (14 cases) were collected in one session, when the
# shared search budget ran out (corpus48, 49, 53 and 54 found nothing); corpus56 to corpus63 (142
# cases) in the next, all in place by their deadline. 156 cases, committed (8a93816 .. d0a57f2)
# before this membership and before any of them was scored.
POOL2 = tuple(f"corpus{n}" for n in (50, 51, 52, 55, 56, 57, 58, 59, 60, 61, 62, 63))
POOL2_FIRST = "142/156 = 91.0 %, 2 healthy logs flagged"  # its first scoring, at 2a47e6e
# That pool missed the rule too (91.0 %). The third, fixed likewise before any of its sets existed:
# every set of the collecting rounds from corpus64 on, each that is in place by its build
# deadline, until they hold at least 100 cases together; then each is scored once, as a whole,
# with the engine as it stands; #15 is resolved iff that first scoring is >= 95 % with no healthy
# log flagged. Its sets joined CORPORA and POOL3 only when the pool was complete: corpus64, 65
# and 66 (44 cases), collected as a session's search budget ran out; corpus67 to corpus72 (106
# cases), the next session's round, all six in place by their build deadline. 150 cases,
# committed (144fcbe .. b3676a0) before this membership and before any of them was scored.
POOL3 = tuple(f"corpus{n}" for n in range(64, 73))
POOL3_FIRST = "142/150 = 94.7 %, 2 healthy logs flagged"  # its first scoring, at 228a523
# That pool missed the rule too (94.7 %, two flagged). The fourth, fixed likewise before any of
# its sets existed: every set of the collecting rounds from corpus73 on, each that is in place by
# its build deadline, until they hold at least 100 cases together; then each is scored once, as a
# whole, with the engine as it stands; #15 is resolved iff that first scoring is >= 95 % with no
# healthy log flagged. Its sets joined CORPORA and POOL4 only when the pool was complete:
# corpus73 to corpus76 (52 cases), the round that ran as a session's search budget ran out, and
# corpus77 (14), the last of that budget; corpus78 to corpus81 (59 cases), the next session's
# round, all four in place by their build deadline. 125 cases, committed (9a34016 .. 95a3c96)
# before this membership and before any of them was scored.
POOL4 = tuple(f"corpus{n}" for n in range(73, 82))
POOL4_FIRST = "116/125 = 92.8 %, 1 healthy log flagged"  # its first scoring, at 978041a
# The fifth, fixed likewise before any of its sets existed (written while the fourth's last round
# was still collecting, before the fourth was scored): every set of the collecting rounds from
# corpus82 on, each that is in place by its build deadline, until they hold at least 100 cases
# together; then each is scored once, as a whole, with the engine as it stands; #15 is resolved
# iff that first scoring is >= 95 % with no healthy log flagged (or the fourth pool's first
# scoring already met that rule). Sources are scarcer each round, so from this pool on an issue
# tracker cited before may give new threads (up to three per tracker per round, each a
# different poster's, none cited before); a repository still gives one case ever. Its sets
# joined CORPORA and POOL5 only when the pool was complete: corpus82 to corpus88 (146 cases), one
# round of seven helpers (six by owner initials, one for web pages outside GitHub), all in place
# by their build deadline, committed (87312ec .. 45ddd79) before this membership and before any
# of them was scored. The engine they meet includes the fourth pool's fixes (4818d81) and
# vocabulary written from the tools' own messages (2e8b9a9), none of it from these sets.
POOL5 = tuple(f"corpus{n}" for n in range(82, 89))
POOL5_FIRST = "133/146 = 91.1 %, 2 healthy logs flagged"  # its first scoring, at 6e03dc2
# That pool missed the rule too (91.1 %, two flagged). The sixth, fixed likewise before any of
# its sets existed: every set of the collecting rounds from corpus89 on, each that is in place by
# its build deadline, until they hold at least 100 cases together; then each is scored once, as a
# whole, with the engine as it stands; #15 is resolved iff that first scoring is >= 95 % with no
# healthy log flagged; the tracker rule of the fifth applies. Its sets joined CORPORA and POOL6
# only when the pool was complete: corpus89 to corpus94 (104 cases), one round of six helpers
# (three by owner initials, two late ones for what was left, one last for any owner), all in
# place by their build deadline, committed (4e381e9 .. 4a245e8) before this membership and
# before any of them was scored. The engine they meet includes the fifth pool's fixes (ea283a6).
POOL6 = tuple(f"corpus{n}" for n in range(89, 95))
POOL6_FIRST = "99/104 = 95.2 %, no healthy log flagged"  # its first scoring, at ee9d69e
# each pool's sets and its first scoring once it has one (printed after the pooled figure)
POOLS = {
    "pool": (POOL, POOL_FIRST),
    "pool2": (POOL2, POOL2_FIRST),
    "pool3": (POOL3, POOL3_FIRST),
    "pool4": (POOL4, POOL4_FIRST),
    "pool5": (POOL5, POOL5_FIRST),
    "pool6": (POOL6, POOL6_FIRST),
}


def _sets(corpus: Corpus, half: str | None) -> dict[str, list[str] | None]:
    halves = corpus.split()
    if halves is None:
        return {corpus.name: None}
    names = [half] if half else list(halves)
    return {f"{corpus.name}/{n}": halves[n] for n in names}


def _print(name: str, corpus: Corpus, rep: Report, args: argparse.Namespace) -> bool:
    print(f"== {name}: {rep.right}/{rep.total} = {rep.accuracy:.1%}")
    if rep.missing:
        print(f"  missing locally (not scored): {len(rep.missing)} cases")
    print(rep.table())
    floor = FLOORS.get(name)
    flagged = set(rep.healthy_flagged) - KNOWN_FLAGGED.get(name, set())
    ok = not flagged and (args.no_floors or floor is None or rep.right >= floor)
    if floor is not None and not args.no_floors and not rep.missing:
        print(f"  floor {floor}: {'held' if rep.right >= floor else 'BROKEN'}")
    print(f"  healthy flagged as failed: {len(rep.healthy_flagged)}", end="")
    if args.summary:
        print()
        return ok
    print(f" {rep.healthy_flagged}")
    for line in rep.confusions:
        print(f"  miss  {line}")
    for line in fingerprint_problems(corpus, rep):
        print(f"  fingerprint  {line}")
    if args.verbose:
        for ident, d in sorted(rep.answers.items()):
            print(f"    {ident}: {d['category']} {d.get('catalog_id')} {d.get('fingerprint')}")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", action="append", choices=CORPORA, help="default: all present")
    ap.add_argument("--half", choices=("tune", "holdout"), help="corpus2: one half only")
    ap.add_argument("--verbose", action="store_true", help="print every case's answer")
    ap.add_argument("--summary", action="store_true", help="figures only: no case names")
    ap.add_argument("--no-floors", action="store_true", help="exit 0 whatever the figures")
    ap.add_argument(
        "--first-labels",
        action="store_true",
        help="score against the labels first given (before the corrections in the READMEs)",
    )
    args = ap.parse_args()
    ok = True
    pooled = {name: [0, 0, 0, 0] for name in POOLS}  # right, total, healthy flagged, sets
    for cname in args.corpus or CORPORA:
        corpus = Corpus(cname)
        if not (corpus.committed / "manifest.toml").is_file():
            print(f"== {cname}: no manifest (tests/fixtures/diagnose/{cname}/manifest.toml)")
            continue
        cases = corpus.cases()
        absent = [c["id"] for c in cases if corpus.missing(c)]
        if len(absent) == len(cases):
            print(f"== {cname}: missing ({len(cases)} cases): run scripts/corpus-fetch diagnose")
            continue
        for name, ids in _sets(corpus, args.half).items():
            rep = score(corpus, ids, first_labels=args.first_labels)
            ok = _print(name, corpus, rep, args) and ok
            for pname, (members, _) in POOLS.items():
                if cname in members:
                    for k, v in enumerate((rep.right, rep.total, len(rep.healthy_flagged), 1)):
                        pooled[pname][k] += v
    for pname, (right, total, flagged, sets) in pooled.items():
        if sets:
            members, first = POOLS[pname]
            print(
                f"== {pname} ({sets} of {len(members)} sets: {', '.join(members)}): "
                f"{right}/{total} = {right / total:.1%}; healthy flagged as failed: {flagged}"
                + (f" (first scoring, before its fixes: {first})" if first else "")
            )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
