"""Scoring of the labelled diagnose corpora (corpus2 to corpus8; issue 15).

What labctl commits about a corpus is in tests/fixtures/diagnose/<corpus>/: manifest.toml
(labels, citations, sha256 of every file), split.toml (corpus2's tune/holdout halves),
README.md, and the short excerpts of public issue threads (cases/<id>/<file>). The log files
copied from public repositories are local only, in the git-ignored
corpora/diagnose/<corpus>/cases/<id>/<file> (rebuild them with scripts/corpus-fetch); a case
whose files are not all present (or do not match their sha256) is reported missing, not scored.

A case is one job: one or more of its log files (stdout, stderr, the program's own log). Each
file is diagnosed on its own, as `labctl diagnose` does for a job record, and the case's answer
is the best-explained diagnosis: a named failure over `unknown` over healthy, then the higher
confidence. The answer is right when its category is the label or one of `also_acceptable`.
"""

from __future__ import annotations

import collections
import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labctl.diagnose import Catalog, diagnose_path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "diagnose"
LOCAL = ROOT / "corpora" / "diagnose"


@dataclass(frozen=True)
class Corpus:
    name: str
    fixtures: Path = FIXTURES
    local: Path = LOCAL

    @property
    def committed(self) -> Path:
        return self.fixtures / self.name

    def cases(self) -> list[dict[str, Any]]:
        text = (self.committed / "manifest.toml").read_text(encoding="utf-8")
        cases: list[dict[str, Any]] = tomllib.loads(text)["case"]
        return cases

    def split(self) -> dict[str, list[str]] | None:
        p = self.committed / "split.toml"
        if not p.is_file():
            return None
        data = tomllib.loads(p.read_text(encoding="utf-8"))
        return {"tune": data["tune"], "holdout": data["holdout"]}

    def path(self, case: dict[str, Any], f: dict[str, Any]) -> Path:
        """Committed excerpts live with the manifest; copied repository files locally."""
        base = self.local if "repo" in f else self.fixtures
        return base / self.name / "cases" / case["id"] / f["name"]

    def missing(self, case: dict[str, Any]) -> list[str]:
        """The case's files that are absent or differ from the sha256 the manifest records."""
        out = []
        for f in case["file"]:
            p = self.path(case, f)
            if not p.is_file() or hashlib.sha256(p.read_bytes()).hexdigest() != f["sha256"]:
                out.append(f["name"])
        return out


def _weight(d: dict[str, Any]) -> tuple[int, float]:
    named = d.get("failed") and d.get("category") not in ("unknown", None)
    return (2 if named else 1 if d.get("failed") else 0, float(d.get("confidence") or 0.0))


def diagnose_case(
    corpus: Corpus, case: dict[str, Any], catalog: Catalog | None = None
) -> dict[str, Any]:
    """The case's diagnosis: the best of its files' diagnoses."""
    found = [diagnose_path(corpus.path(case, f), catalog=catalog) for f in case["file"]]
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
    missing: list[str] = field(default_factory=list)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def accuracy(self) -> float:
        return self.right / self.total if self.total else 0.0

    def table(self) -> str:
        rows = [f"  {k:24s} {v[0]:3d}/{v[1]:<3d}" for k, v in sorted(self.per_category.items())]
        return "\n".join(rows)


def score(
    corpus: Corpus,
    ids: list[str] | None = None,
    catalog: Catalog | None = None,
    *,
    first_labels: bool = False,
) -> Report:
    """Score the cases `ids` (all of them when None) that are present locally. `first_labels`:
    score against the labels first given (`corrected`), as they stood when first scored."""
    by_id = {c["id"]: c for c in corpus.cases()}
    rep = Report()
    for ident in by_id if ids is None else ids:
        case = by_id[ident]
        if corpus.missing(case):
            rep.missing.append(ident)
            continue
        d = diagnose_case(corpus, case, catalog)
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


def fingerprint_problems(corpus: Corpus, rep: Report) -> list[str]:
    """Cases labelled with one fingerprint group must share one fingerprint; one fingerprint
    must never span two labelled categories or two labelled groups."""
    by_id = {c["id"]: c for c in corpus.cases()}
    groups: dict[str, set[str]] = collections.defaultdict(set)
    owners: dict[str, set[tuple[str, str | None]]] = collections.defaultdict(set)
    for ident, d in rep.answers.items():
        fp = d.get("fingerprint")
        if not fp:
            continue
        group = by_id[ident].get("fingerprint_group")
        if group:
            groups[group].add(fp)
        owners[fp].add((by_id[ident]["category"], group))
    problems = [
        f"group {g} split over {len(fps)} fingerprints"
        for g, fps in sorted(groups.items())
        if len(fps) > 1
    ]
    for fp, who in sorted(owners.items()):
        if len({c for c, _ in who}) > 1 or len({g for _, g in who if g}) > 1:
            problems.append(f"fingerprint {fp} joins {sorted(who, key=str)}")
    return problems
