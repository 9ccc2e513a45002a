"""Scoring of the second labelled corpus (tests/fixtures/diagnose/corpus2, issue 15).

A case is one job: one or more of its log files (stdout, stderr, the program's own log). Each
file is diagnosed on its own, as `labctl diagnose` does for a job record, and the case's answer
is the best-explained diagnosis: a named failure over `unknown` over healthy, then the higher
confidence. The answer is right when its category is the label or one of `also_acceptable`.
"""

from __future__ import annotations

import collections
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labctl.diagnose import Catalog, diagnose_path

CORPUS = Path(__file__).parent / "fixtures" / "diagnose" / "corpus2"
CORPUS3 = CORPUS.parent / "corpus3"  # the verification set: scored whole, no split


def cases(root: Path = CORPUS) -> list[dict[str, Any]]:
    return tomllib.loads((root / "manifest.toml").read_text(encoding="utf-8"))["case"]


def split() -> dict[str, list[str]]:
    data = tomllib.loads((CORPUS / "split.toml").read_text(encoding="utf-8"))
    return {"tune": data["tune"], "holdout": data["holdout"]}


def _weight(d: dict[str, Any]) -> tuple[int, float]:
    named = d.get("failed") and d.get("category") not in ("unknown", None)
    return (2 if named else 1 if d.get("failed") else 0, float(d.get("confidence") or 0.0))


def diagnose_case(
    case: dict[str, Any], catalog: Catalog | None = None, root: Path = CORPUS
) -> dict[str, Any]:
    """The case's diagnosis: the best of its files' diagnoses."""
    folder = root / "cases" / case["id"]
    found = [diagnose_path(folder / f["name"], catalog=catalog) for f in case["file"]]
    return max(found, key=_weight)


@dataclass
class Report:
    right: int = 0
    total: int = 0
    per_category: dict[str, list[int]] = field(
        default_factory=lambda: collections.defaultdict(lambda: [0, 0])
    )
    confusions: list[str] = field(default_factory=list)
    healthy_flagged: list[str] = field(default_factory=list)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def accuracy(self) -> float:
        return self.right / self.total if self.total else 0.0

    def table(self) -> str:
        rows = [f"  {k:24s} {v[0]:3d}/{v[1]:<3d}" for k, v in sorted(self.per_category.items())]
        return "\n".join(rows)


def score(
    ids: list[str] | None = None,
    catalog: Catalog | None = None,
    *,
    first_labels: bool = False,
    root: Path = CORPUS,
) -> Report:
    """Score the cases `ids` (all of them when None) of the corpus at `root`. `first_labels`:
    score against the labels first given (`corrected`), as they stood when first scored."""
    by_id = {c["id"]: c for c in cases(root)}
    ids = list(by_id) if ids is None else ids
    rep = Report()
    for ident in ids:
        case = by_id[ident]
        d = diagnose_case(case, catalog, root)
        rep.answers[ident] = d
        want, also = case["category"], case.get("also_acceptable", [])
        if first_labels and "corrected" in case:
            want, also = case["corrected"], []
        ok = d["category"] == want or d["category"] in also
        rep.total += 1
        rep.right += ok
        rep.per_category[want][1] += 1
        rep.per_category[want][0] += ok
        if not ok:
            rep.confusions.append(f"{ident}: {want} -> {d['category']} ({d.get('catalog_id')})")
        if want == "healthy" and d["failed"]:
            rep.healthy_flagged.append(ident)
    return rep


def fingerprint_problems(rep: Report, root: Path = CORPUS) -> list[str]:
    """Cases labelled with one fingerprint group must share one fingerprint; different groups
    (and different categories) must never share one."""
    by_id = {c["id"]: c for c in cases(root)}
    groups: dict[str, set[str]] = collections.defaultdict(set)
    owners: dict[str, set[str]] = collections.defaultdict(set)
    problems = []
    for ident, d in rep.answers.items():
        fp = d.get("fingerprint")
        group = by_id[ident].get("fingerprint_group")
        if group and fp:
            groups[group].add(fp)
        if fp:
            owners[fp].add(group or f"{by_id[ident]['category']}:{ident}")
    for group, fps in sorted(groups.items()):
        if len(fps) > 1:
            problems.append(f"group {group} split over {len(fps)} fingerprints")
    for fp, who in sorted(owners.items()):
        if len(who) > 1 and len({w.split(":")[0] for w in who}) > 1:
            problems.append(f"fingerprint {fp} joins {sorted(who)}")
    return problems
